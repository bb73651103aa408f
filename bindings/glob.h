// Glob matching for rules: "*" (no "/"), "**" (anything), "?", "[abc]", "[!a-z]", "\x".
// Whole-string match, linear time (translated to RE2). Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace warden::glob {

// The RE2 pattern equivalent to `glob` (anchored; carries its own flags, so it means the
// same under any RE2 options). Never fails: unmatched "[" is literal.
std::string to_regex(std::string_view glob);
// The glob's runs of literal characters, in order (escapes read): the text any path it
// matches holds, whatever its wildcards match. `/etc/cron*/**` gives {"/etc/cron", "/"}.
std::vector<std::string> literal_runs(std::string_view glob);
// Throws std::runtime_error if the glob cannot be compiled (never reports that as "no match").
bool match(std::string_view glob, std::string_view text);

// Whether `path` holds a shell glob: `*`, `?`, a `[…]` that closes, a brace group `{a,b}` /
// `{1..9}`, or an extglob group `@(…)`, `!(…)`, `+(…)`.
bool has_shell_glob(std::string_view path);

// Whether `shell_glob` (a path as bash expands it: `*`, `?`, `[…]`, brace groups, extglob
// groups; `*` and `?` do not match the leading "." of a name unless `dotglob`; `**` may
// cross directories) may name a path `pattern` (the syntax of match()) matches. Letters
// compare without case when `case_insensitive`. Decided on the two patterns (the product of
// their automata), never on the files present; where the shell glob is beyond this reading
// (a bracket with non-ASCII text, too many brace alternatives) it is read as matching more.
// strict: any path both match. Otherwise only a path whose name the glob spells itself:
// at least two of the pattern's letters matched by letters of the glob for each one its
// wildcards produce (`*key.p?m` names `*key*.pem`, `~/.aws/cred*` names
// `~/.aws/credentials`; `*.c` does not name `api_key*`).
bool may_overlap(std::string_view shell_glob, std::string_view pattern, bool case_insensitive,
                 bool dotglob, bool strict);

// One side of may_overlap read once, for comparing with many: a shell glob's brace
// alternatives, or a pattern, as automata. Immutable: one may be shared between threads.
class OverlapGlob {
 public:
  // shell: `glob` is a shell glob (as may_overlap's first argument); else a pattern in
  // match()'s syntax (its second; `dotglob` is then ignored).
  OverlapGlob(std::string_view glob, bool shell, bool case_insensitive, bool dotglob);
  ~OverlapGlob();
  OverlapGlob(OverlapGlob&&) noexcept;
  OverlapGlob& operator=(OverlapGlob&&) noexcept;

  struct Automata;  // defined in glob.cpp

 private:
  friend bool may_overlap(const OverlapGlob& shell_glob, const OverlapGlob& pattern, bool strict);
  std::unique_ptr<const Automata> automata_;
};

// may_overlap on globs read once: the same answer as may_overlap(shell_glob, pattern, …)
// given the text, case rule and dotglob both were read with.
bool may_overlap(const OverlapGlob& shell_glob, const OverlapGlob& pattern, bool strict);

}  // namespace warden::glob
