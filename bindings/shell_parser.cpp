// Turns a parsed simple command into SimpleCommand facts: strips wrappers (sudo, su, env,
// timeout, nice, xargs, setsid, flock, chroot, busybox, …), re-parses the command strings
// wrappers hand to a shell (`bash -c STRING`, `eval …`, `env -S STRING`, `su -c`, `ssh HOST
// CMD…`, `watch CMD…`, `parallel CMD… ::: …`), splits `find -exec CMD ;` into find and CMD,
// splits flags, and holds the public parse() entry point. Called by the grammar
// (shell_grammar.cpp).
// Pure and re-entrant: each parse() call has its own Context.
#include <algorithm>
#include <array>
#include <new>
#include <optional>
#include <span>

#include "bindings/shell_internal.h"

namespace warden::shell {
namespace detail {

namespace {

using namespace std::string_view_literals;
using Args = std::vector<std::string>;

// The long options of each wrapper that take a value, for kWrapperOptions.
constexpr std::string_view kChrootLong[] = {"userspec", "groups"};
constexpr std::string_view kChrtLong[] = {"sched-runtime", "sched-period", "sched-deadline"};
constexpr std::string_view kEnvLong[] = {"split-string", "unset", "chdir"};
constexpr std::string_view kFlockLong[] = {"timeout", "conflict-exit-code"};
constexpr std::string_view kIoniceLong[] = {"class", "classdata", "pid", "pgid", "uid"};
constexpr std::string_view kNiceLong[] = {"adjustment"};
constexpr std::string_view kNsenterLong[] = {"target", "net-socket", "setgid", "setuid", "wdns"};
// GNU parallel's value options and their aliases (its Getopt::Long table); -e, -i and -l
// take the next word as their optional value, as Getopt::Long does. Those whose value is inert
// (kInertValues) first, then the others: each name once.
constexpr std::string_view kParallelInertLong[] = {"block",
                                                   "block-size",
                                                   "blocksize",
                                                   "block-timeout",
                                                   "blocktimeout",
                                                   "bt",
                                                   "col-sep",
                                                   "colsep",
                                                   "delay",
                                                   "delimiter",
                                                   "eof",
                                                   "halt",
                                                   "halt-on-error",
                                                   "haltonerror",
                                                   "header",
                                                   "jobs",
                                                   "load",
                                                   "max-args",
                                                   "maxargs",
                                                   "max-chars",
                                                   "maxchars",
                                                   "max-lines",
                                                   "maxlines",
                                                   "max-procs",
                                                   "maxprocs",
                                                   "max-replace-args",
                                                   "maxreplaceargs",
                                                   "memfree",
                                                   "memsuspend",
                                                   "min-version",
                                                   "minversion",
                                                   "nice",
                                                   "recend",
                                                   "recstart",
                                                   "replace",
                                                   "retries",
                                                   "semaphore-timeout",
                                                   "semaphoretimeout",
                                                   "st",
                                                   "seqreplace",
                                                   "slotreplace",
                                                   "ssh-delay",
                                                   "sshdelay",
                                                   "term-seq",
                                                   "termseq",
                                                   "timeout",
                                                   "total-jobs",
                                                   "totaljobs",
                                                   "total",
                                                   "trim"};
constexpr std::string_view kParallelOwnLong[] = {"arg-file",
                                                 "arg-file-sep",
                                                 "arg-sep",
                                                 "argfile",
                                                 "argfilesep",
                                                 "argsep",
                                                 "basefile",
                                                 "basenameextensionreplace",
                                                 "basenamereplace",
                                                 "bf",
                                                 "bin",
                                                 "bner",
                                                 "bnr",
                                                 "compress-program",
                                                 "compressprogram",
                                                 "ctag-string",
                                                 "ctagstring",
                                                 "debug",
                                                 "decompress-program",
                                                 "decompressprogram",
                                                 "dirnamereplace",
                                                 "dnr",
                                                 "env",
                                                 "er",
                                                 "extensionreplace",
                                                 "filter",
                                                 "group-by",
                                                 "groupby",
                                                 "id",
                                                 "jl",
                                                 "joblog",
                                                 "limit",
                                                 "linkinputsource",
                                                 "parens",
                                                 "process-slot-var",
                                                 "processslotvar",
                                                 "profile",
                                                 "res",
                                                 "result",
                                                 "results",
                                                 "return",
                                                 "rpl",
                                                 "rsync-opts",
                                                 "rsyncopts",
                                                 "semaphore-name",
                                                 "semaphorename",
                                                 "shard",
                                                 "shell-completion",
                                                 "shellcompletion",
                                                 "slf",
                                                 "sql",
                                                 "sql-and-worker",
                                                 "sql-master",
                                                 "sql-worker",
                                                 "sqlandworker",
                                                 "sqlmaster",
                                                 "sqlworker",
                                                 "ssh",
                                                 "sshlogin",
                                                 "sshloginfile",
                                                 "tag-string",
                                                 "tagstring",
                                                 "tempdir",
                                                 "template",
                                                 "tf",
                                                 "tmpdir",
                                                 "tmpl",
                                                 "transfer-file",
                                                 "transfer-files",
                                                 "transferfile",
                                                 "transferfiles",
                                                 "trc",
                                                 "use-compress-program",
                                                 "use-decompress-program",
                                                 "usecompressprogram",
                                                 "usedecompressprogram",
                                                 "wd",
                                                 "work-dir",
                                                 "workdir",
                                                 "xapplyinputsource"};
template <std::size_t A, std::size_t B>
constexpr std::array<std::string_view, A + B> joined(const std::string_view (&a)[A],
                                                     const std::string_view (&b)[B]) {
  std::array<std::string_view, A + B> out{};
  for (std::size_t k = 0; k < A; ++k) out[k] = a[k];
  for (std::size_t k = 0; k < B; ++k) out[A + k] = b[k];
  return out;
}
constexpr auto kParallelLong = joined(kParallelInertLong, kParallelOwnLong);
constexpr std::string_view kPkexecLong[] = {"user"};
constexpr std::string_view kRunuserLong[] = {
    "command", "session-command", "group", "supp-group", "shell", "user", "whitelist-environment"};
constexpr std::string_view kScriptLong[] = {"command",        "echo",        "log-in",
                                            "log-out",        "log-io",      "log-timing",
                                            "logging-format", "output-limit"};
constexpr std::string_view kStdbufLong[] = {"input", "output", "error"};
constexpr std::string_view kSuLong[] = {"command",    "session-command", "group",
                                        "supp-group", "shell",           "whitelist-environment"};
constexpr std::string_view kSudoLong[] = {"user",       "group",  "close-from",     "chdir",
                                          "host",       "prompt", "role",           "type",
                                          "other-user", "chroot", "command-timeout"};
constexpr std::string_view kTimeLong[] = {"format", "output"};
constexpr std::string_view kTimeoutLong[] = {"signal", "kill-after"};
constexpr std::string_view kUnshareLong[] = {
    "map-user", "map-group", "map-users", "map-groups",  "propagation", "setgroups", "root",
    "wd",       "setuid",    "setgid",    "load-interp", "monotonic",   "boottime"};
constexpr std::string_view kWatchLong[] = {"interval", "equexit", "shotsdir"};
constexpr std::string_view kXargsLong[] = {"arg-file",  "delimiter", "max-args",
                                           "max-procs", "max-chars", "process-slot-var"};
// The command-string options: `--command` (flock, script), and su's and runuser's two.
constexpr std::string_view kCommandLong[] = {"command"};
constexpr std::string_view kSuCommandLong[] = {"command", "session-command"};

// Each wrapper's options: read_options, command_option, unwrap_env and unwrap_ssh read them.
constexpr WrapperOptions kWrapperOptions[] = {
    {"builtin", "", {}},
    {"chroot", "", kChrootLong},
    {"chrt", "TPD", kChrtLong},
    {"command", "", {}},
    {"doas", "uC", {}},
    {"env", "SuC", kEnvLong},
    {"exec", "a", {}},
    {"flock", "wE", kFlockLong, {}, 'c', kCommandLong},
    {"ionice", "cnpPu", kIoniceLong},
    {"nice", "n", kNiceLong},
    {"nohup", "", {}},
    {"nsenter", "tNGSW", kNsenterLong, "muinpCUTrw"},
    {"parallel", "BCDEHIJLNPSUWadeijlns", kParallelLong},
    {"pkexec", "", kPkexecLong},
    {"runuser", "cgGsuw", kRunuserLong, {}, 'c', kSuCommandLong},
    {"script", "cEIOBTmo", kScriptLong, {}, 'c', kCommandLong},
    {"setsid", "", {}},
    {"ssh", "BbcDEeFIiJLlmOoPpQRSWw", {}},
    {"sshpass", "fdpP", {}, "e"},
    {"stdbuf", "ioe", kStdbufLong},
    {"su", "cgGsw", kSuLong, {}, 'c', kSuCommandLong},
    {"sudo", "ugCDhprtUTR", kSudoLong},
    {"taskset", "", {}},
    {"time", "fo", kTimeLong},
    {"timeout", "sk", kTimeoutLong},
    {"unshare", "RwSGl", kUnshareLong, "muinpUCT"},
    {"watch", "nq", kWatchLong, "d"},
    {"xargs", "adEILnPs", kXargsLong, "eil"},
};
static_assert(std::is_sorted(std::begin(kWrapperOptions), std::end(kWrapperOptions),
                             [](const WrapperOptions& a, const WrapperOptions& b) {
                               return a.program < b.program;
                             }));

// The options of each wrapper whose value is inert: a number, a duration, a signal, a user or
// group, a mode, a separator, a format or a replacement string, never a file, a directory, a
// program, code or a host. The command-string options (`su -c`) are listed too: the parser
// reads their value as code. A wrapper given any other option with a value (one kWrapperOptions
// lists, an attached `--name=value` or `-rDIR`), or an operand before the command it wraps
// when its operands are not inert (`flock FILE CMD`, `chroot DIR CMD`), also stays a command
// of its own beside that command: `parallel --compress-program P CMD`, `time -o FILE CMD`,
// `sshpass -f FILE CMD`, `sudo -D DIR CMD`. Its words then go to the effects table like any
// command's, which knows what each option does or reads one it does not know as unknown.
// Closed: a value option added to kWrapperOptions is judged until it is listed here.
struct InertValues {
  std::string_view program;
  std::string_view shorts;
  std::span<const std::string_view> longs;
  // Its operands are inert: a duration, a priority, a mask, a user, NAME=value (read as an
  // assignment), or the wrapped command's own words (parallel, xargs, watch).
  bool operands = false;
};
constexpr std::string_view kChrootInert[] = {"userspec", "groups"};
constexpr std::string_view kEnvInert[] = {"unset"};
constexpr std::string_view kFlockInert[] = {"timeout", "conflict-exit-code", "command"};
constexpr std::string_view kNsenterInert[] = {"target", "net-socket", "setgid", "setuid"};

constexpr std::string_view kRunuserInert[] = {
    "command", "session-command", "group", "supp-group", "user", "whitelist-environment"};
constexpr std::string_view kScriptInert[] = {"command", "echo", "logging-format", "output-limit"};
constexpr std::string_view kSuInert[] = {"command", "session-command", "group", "supp-group",
                                         "whitelist-environment"};
constexpr std::string_view kSudoInert[] = {"user", "group", "close-from", "prompt",
                                           "role", "type",  "other-user", "command-timeout"};
constexpr std::string_view kTimeInert[] = {"format"};
constexpr std::string_view kUnshareInert[] = {"map-user",    "map-group", "map-users", "map-groups",
                                              "propagation", "setgroups", "setuid",    "setgid",
                                              "monotonic",   "boottime"};
constexpr std::string_view kWatchInert[] = {"interval", "equexit", "differences"};
constexpr std::string_view kXargsInert[] = {"delimiter", "max-args", "max-procs", "max-chars",
                                            "process-slot-var"};
constexpr InertValues kInertValues[] = {
    {"chroot", "", kChrootInert},
    {"chrt", "TPD", kChrtLong, true},
    {"doas", "u", {}},
    {"env", "u", kEnvInert, true},
    {"exec", "a", {}},
    {"flock", "wEc", kFlockInert},
    {"ionice", "cnpPu", kIoniceLong},
    {"nice", "n", kNiceLong},
    {"nsenter", "tNGS", kNsenterInert},
    {"parallel", "CdeEiIjlLnNPs", kParallelInertLong, true},
    {"pkexec", "", kPkexecLong},
    {"runuser", "cgGuw", kRunuserInert, true},
    {"script", "cEmo", kScriptInert},
    {"sshpass", "dpPe", {}},
    {"stdbuf", "ioe", kStdbufLong},
    {"su", "cgGw", kSuInert, true},
    {"sudo", "ugCprtUT", kSudoInert, true},
    {"taskset", "", {}, true},
    {"time", "f", kTimeInert},
    {"timeout", "sk", kTimeoutLong, true},
    {"unshare", "SG", kUnshareInert},
    {"watch", "nqd", kWatchInert, true},
    {"xargs", "dEILnPseil", kXargsInert, true},
};
static_assert(std::is_sorted(std::begin(kInertValues), std::end(kInertValues),
                             [](const InertValues& a, const InertValues& b) {
                               return a.program < b.program;
                             }));

// The options of the wrapper `program`, null when kWrapperOptions lists none.
const WrapperOptions* find_options(std::string_view program) {
  auto it = std::lower_bound(
      std::begin(kWrapperOptions), std::end(kWrapperOptions), program,
      [](const WrapperOptions& w, std::string_view name) { return w.program < name; });
  return it == std::end(kWrapperOptions) || it->program != program ? nullptr : &*it;
}

// The options of the wrapper `program` (one kWrapperOptions lists).
const WrapperOptions& options_of(std::string_view program) {
  const WrapperOptions* w = find_options(program);
  if (!w)
    throw ShellError{"no options listed for the wrapper " + std::string(program),
                     Failure::Internal};
  return *w;
}

// Whether `w` is the option `letter` or one of `longs`, each written alone and in full.
bool is_option_word(const std::string& w, char letter, std::span<const std::string_view> longs) {
  if (w.size() == 2 && w[0] == '-' && w[1] == letter) return true;
  return w.starts_with("--") &&
         std::find(longs.begin(), longs.end(), std::string_view(w).substr(2)) != longs.end();
}

std::string basename_of(const std::string& word) {
  std::string_view s = word;
  while (s.size() > 1 && s.back() == '/') s.remove_suffix(1);
  const std::size_t slash = s.rfind('/');
  if (slash == std::string_view::npos || s.size() == 1) return std::string(s);
  return std::string(s.substr(slash + 1));
}

bool is_env_assignment(const std::string& w) {
  const std::size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  if (!(is_alpha(w[0]) || w[0] == '_')) return false;
  return std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(eq),
                     [](char c) { return is_alpha(c) || c == '_' || (c >= '0' && c <= '9'); });
}

// Options of a wrapper, read up to its first operand.
// An option as read_options finds it: its name (a letter, or a long name as written without
// `--`) and its value, attached (`-C/x`, `--chdir=/x`) or the next word (an optional one,
// xargs -i[R] or --replace[=R], only when attached); value_at is the word that holds it.
struct OptionSeen {
  std::string name;
  bool is_long = false;
  std::optional<std::string> value;
  std::size_t value_at = 0;
};

struct Options {
  std::size_t next = 0;          // index of the first operand
  std::string shorts;            // every short option letter seen
  Args longs;                    // every long option name seen (without `--` and `=value`)
  std::vector<OptionSeen> seen;  // every option, in order
};

// A long option name as written matches a listed one when it is a prefix of it: GNU getopt
// takes any unambiguous abbreviation (`timeout --sig KILL`).
bool long_matches(std::string_view written, std::string_view listed) {
  return !written.empty() && listed.starts_with(written);
}

// Whether `--name VALUE` takes the next word: an exact match wins (as in getopt), then an
// abbreviation of an option with a value, except for the flags of wrappers whose name is
// the start of such an option (`nsenter --net`, `nsenter --wd`, `parallel --tag`).
bool takes_value(std::string_view name, std::span<const std::string_view> long_val) {
  if (std::find(long_val.begin(), long_val.end(), name) != long_val.end()) return true;
  static constexpr std::string_view kFlags[] = {"net", "wd", "tag"};
  if (std::find(std::begin(kFlags), std::end(kFlags), name) != std::end(kFlags)) return false;
  return std::any_of(long_val.begin(), long_val.end(),
                     [&](std::string_view l) { return long_matches(name, l); });
}

// short_val: letters that take a value (attached or next word); short_opt: letters whose
// optional value can only be attached (xargs -i[R]); long_val: long options taking a value.
Options read_options(const Args& a, std::size_t k, std::string_view short_val,
                     std::span<const std::string_view> long_val, std::string_view short_opt = {}) {
  Options o;
  while (k < a.size()) {
    const std::string& w = a[k];
    if (w == "--") {
      ++k;
      break;
    }
    if (w.size() < 2 || w[0] != '-') break;
    ++k;
    if (w[1] == '-') {
      const std::size_t eq = w.find('=');
      const std::string name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      OptionSeen option{name, true, std::nullopt, a.size()};
      if (eq != std::string::npos) {
        option.value = w.substr(eq + 1), option.value_at = k - 1;
      } else if (takes_value(name, long_val)) {
        if (k < a.size()) option.value = a[k], option.value_at = k;
        ++k;
      }
      o.seen.push_back(std::move(option));
      o.longs.push_back(name);
      continue;
    }
    for (std::size_t c = 1; c < w.size(); ++c) {
      o.shorts += w[c];
      OptionSeen option{w.substr(c, 1), false, std::nullopt, a.size()};
      const bool optional = short_opt.find(w[c]) != std::string_view::npos;
      const bool valued = !optional && short_val.find(w[c]) != std::string_view::npos;
      if ((optional || valued) && c + 1 < w.size()) {
        option.value = w.substr(c + 1), option.value_at = k - 1;
      } else if (valued && k < a.size()) {
        option.value = a[k], option.value_at = k;
      }
      o.seen.push_back(std::move(option));
      if (optional) break;
      if (valued) {
        if (c + 1 == w.size()) ++k;
        break;
      }
    }
  }
  o.next = std::min(k, a.size());
  return o;
}

bool has(const Options& o, std::string_view shorts, std::initializer_list<std::string_view> longs) {
  for (char c : shorts) {
    if (o.shorts.find(c) != std::string::npos) return true;
  }
  for (std::string_view l : longs) {
    for (const std::string& seen : o.longs) {
      if (long_matches(seen, l)) return true;
    }
  }
  return false;
}

// The options with which a wrapper starts its command in another directory: one it names
// (`env -C DIR`, `sudo -D DIR`, `unshare -w DIR`, `nsenter -wDIR`, `parallel --wd DIR`), read
// as `cd DIR` from where the shell is, or one the line does not show (`sudo -i`: the user's
// home; `sudo -R`, `unshare -R`, `nsenter -r`: another root; `nsenter -W`: a directory of
// another namespace).
struct DirOption {
  std::string_view program;
  std::string_view name;  // a letter, or a long name
  bool names_dir;         // its value is the directory (else: somewhere unknown)
};
constexpr DirOption kDirOptions[] = {
    {"env", "C", true},       {"env", "chdir", true},
    {"nsenter", "w", true},   {"nsenter", "wd", true},
    {"nsenter", "r", false},  {"nsenter", "root", false},
    {"nsenter", "W", false},  {"nsenter", "wdns", false},
    {"parallel", "wd", true}, {"parallel", "workdir", true},
    {"sudo", "D", true},      {"sudo", "chdir", true},
    {"sudo", "i", false},     {"sudo", "login", false},
    {"sudo", "R", false},     {"sudo", "chroot", false},
    {"unshare", "w", true},   {"unshare", "wd", true},
    {"unshare", "R", false},  {"unshare", "root", false},
};

// Where the command wrapped by a[i] (options `w`) starts: nullopt where the shell is.
// runtime: the words are filled in at run time (under xargs or parallel).
std::optional<Cwds> wrapper_cwds(const Args& a, const std::vector<Word>& words, std::size_t i,
                                 const WrapperOptions& w, bool runtime, const Context& ctx) {
  if (w.program == "chroot"sv) return Cwds{unknown_cwd()};  // paths read in another root
  std::optional<Cwds> to;
  for (const OptionSeen& o : read_options(a, i + 1, w.short_val, w.long_val, w.short_opt).seen) {
    const auto d =
        std::find_if(std::begin(kDirOptions), std::end(kDirOptions), [&](const DirOption& d) {
          return d.program == w.program && (d.name.size() > 1) == o.is_long &&
                 (o.is_long ? long_matches(o.name, d.name) : o.name == d.name);
        });
    if (d == std::end(kDirOptions)) continue;
    // parallel's `--wd ...` is a new temporary directory.
    if (!d->names_dir || !o.value || (w.program == "parallel"sv && *o.value == "...")) {
      to = Cwds{unknown_cwd()};
      continue;
    }
    const bool dynamic =
        runtime || ctx.runtime > 0 || (o.value_at < words.size() && words[o.value_at].dynamic);
    Cwds out;
    for (const WorkingDir& from : ctx.sh.cwds)  // the last of them wins (getopt)
      add_cwd(out, resolve_dir(from, *o.value, dynamic, ctx));
    to = std::move(out);
  }
  return to;
}

// Whether the wrapper `w`'s words a[k..end) give an option a value, or hold an operand, that
// is not inert (kInertValues): a file, a directory, a program, code or a host the wrapper uses
// itself.
bool has_own_effect(const Args& a, std::size_t k, std::size_t end, const WrapperOptions& w) {
  auto inert_at = std::lower_bound(
      std::begin(kInertValues), std::end(kInertValues), w.program,
      [](const InertValues& v, std::string_view name) { return v.program < name; });
  const bool listed = inert_at != std::end(kInertValues) && inert_at->program == w.program;
  const std::string_view inert_shorts = listed ? inert_at->shorts : std::string_view();
  const bool inert_operands = listed && inert_at->operands;
  const std::span<const std::string_view> inert_longs =
      listed ? inert_at->longs : std::span<const std::string_view>();
  auto inert_long = [&](std::string_view name) {
    if (std::find(inert_longs.begin(), inert_longs.end(), name) != inert_longs.end()) return true;
    // An abbreviation is inert when every value option it may stand for is.
    bool any = false;
    for (std::string_view l : w.long_val) {
      if (!long_matches(name, l)) continue;
      if (std::find(inert_longs.begin(), inert_longs.end(), l) == inert_longs.end()) return false;
      any = true;
    }
    return any;
  };
  for (; k < end; ++k) {
    const std::string& word = a[k];
    if (word == "--") {
      // Operands only from here (`sudo -- CMD`: the command is past `end`).
      if (!inert_operands && k + 1 < end) return true;
      break;
    }
    if (word.size() < 2 || word[0] != '-') {
      if (!inert_operands) return true;
      continue;  // getopt reads on past an operand
    }
    if (word[1] == '-') {
      const std::size_t eq = word.find('=');
      const std::string name = word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const bool next_word = eq == std::string::npos && takes_value(name, w.long_val);
      if ((eq != std::string::npos || next_word) && !inert_long(name)) return true;
      if (next_word) ++k;
      continue;
    }
    for (std::size_t c = 1; c < word.size(); ++c) {
      const char letter = word[c];
      const bool attached_only = w.short_opt.find(letter) != std::string_view::npos;
      if (!attached_only && w.short_val.find(letter) == std::string_view::npos) continue;
      const bool value = !attached_only || c + 1 < word.size();
      if (value && inert_shorts.find(letter) == std::string_view::npos) return true;
      if (!attached_only && c + 1 == word.size()) ++k;
      break;
    }
  }
  return false;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  out += '\'';
  return out;
}

constexpr std::string_view kShells[] = {"bash",  "sh",   "zsh",  "dash", "ksh", "ash", "mksh",
                                        "rbash", "yash", "posh", "fish", "csh", "tcsh"};

bool is_shell(const std::string& p) {
  return std::find(std::begin(kShells), std::end(kShells), p) != std::end(kShells);
}

// What to do with argv[i] when it names a wrapper.
struct Step {
  enum Kind { Stop, Next, Recurse } kind = Stop;
  std::size_t next = 0;                  // Next: index of the wrapped command
  std::vector<std::string> texts;        // Recurse: command strings, each parsed as shell
  int depth_inc = 0;                     // Recurse: depth added to the inner commands
  bool stdin_script = false;             // Stop: a shell that reads its commands from stdin
  bool runtime = false;                  // the wrapped command gets operands at run time
  bool expansion = false;                // the wrapped words are expanded once more (sudo -s)
  std::vector<std::size_t> assignments;  // argv indices of NAME=value operands (env, sudo)
  // Variables an option sets in the wrapped command's environment (`xargs
  // --process-slot-var=NAME`), as `env NAME=value` would.
  std::vector<Assignment> variables;
  // The strings the wrapper replaces in the wrapped command's words at run time
  // (SimpleCommand::replaced).
  std::vector<std::string> replaced;
  // Recurse: the texts are code with replaced text spliced in, whatever the words say.
  bool spliced = false;
  // argv indices of the words that stay a command of their own besides the wrapped one
  // (`ssh -p 22 HOST`, `script FILE`): what the wrapper itself does. Empty: none.
  std::vector<std::size_t> outer;
  // A command of the wrapper's own spelled as its table knows it (`parallel … :::: FILE` is
  // `parallel -a FILE`), besides `outer`. Empty: none.
  Args outer_words;
};

Step step_next(std::size_t k) {
  Step s;
  s.kind = Step::Next;
  s.next = k;
  return s;
}
Step step_recurse(std::string text, int depth_inc) {
  Step s;
  s.kind = Step::Recurse;
  s.texts.push_back(std::move(text));
  s.depth_inc = depth_inc;
  return s;
}

// The words a[k..] joined with spaces: the command line a wrapper hands to a shell
// (`ssh HOST CMD…`, `watch CMD…`, `sg GROUP CMD…`, a `parallel` template).
std::string join_from(const Args& a, std::size_t k) {
  std::string text;
  for (std::size_t r = k; r < a.size(); ++r) {
    if (r > k) text += ' ';
    text += a[r];
  }
  return text;
}

// Where a command-string option (`su -c CMD`, `script --command=CMD`) sits among a
// wrapper's words: getopt permutes, so it may follow the operands.
struct CommandOption {
  std::string value;
  std::size_t first = 0;  // index of the option word
  std::size_t last = 0;   // index of the word holding the value
};

// Looks through every word after a[i] for the wrapper's command option: its letter or one of
// its long names (GNU abbreviations included). The values of its other options that take a
// value are skipped.
std::optional<CommandOption> command_option(const Args& a, std::size_t i,
                                            const WrapperOptions& options) {
  const char letter = options.command;
  const std::span<const std::string_view> longs = options.command_long;
  const std::string_view short_val = options.short_val;
  const std::span<const std::string_view> long_val = options.long_val;
  for (std::size_t k = i + 1; k < a.size(); ++k) {
    const std::string& w = a[k];
    if (w.size() < 2 || w[0] != '-' || w == "--") continue;
    if (w[1] == '-') {
      const std::size_t eq = w.find('=');
      const std::string name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (name.empty()) continue;
      bool is_command = false;
      for (std::string_view l : longs) is_command = is_command || l.starts_with(name);
      if (is_command) {
        if (eq != std::string::npos) return CommandOption{w.substr(eq + 1), k, k};
        if (k + 1 < a.size()) return CommandOption{a[k + 1], k, k + 1};
        return std::nullopt;
      }
      if (eq == std::string::npos &&
          std::find(long_val.begin(), long_val.end(), name) != long_val.end()) {
        ++k;
      }
      continue;
    }
    for (std::size_t c = 1; c < w.size(); ++c) {
      if (w[c] == letter) {
        if (c + 1 < w.size()) return CommandOption{w.substr(c + 1), k, k};
        if (k + 1 < a.size()) return CommandOption{a[k + 1], k, k + 1};
        return std::nullopt;
      }
      if (short_val.find(w[c]) != std::string_view::npos) {
        if (c + 1 == w.size()) ++k;
        break;
      }
    }
  }
  return std::nullopt;
}

bool all_digits(const std::string& w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), is_digit);
}

Step unwrap_shell(const Args& a, std::size_t i) {
  const bool fish = basename_of(a[i]) == "fish"sv;
  bool has_c = false;
  bool reads_stdin = false;  // -s: commands come from stdin even with operands
  // A startup file (`bash --rcfile FILE -ic …`), fish's startup code (`fish -C CODE`,
  // `--init-command=CODE`, anywhere among its words) or another long option with a value:
  // the shell's words stay a command of their own, judged by the effects table.
  bool own = false;
  std::size_t k = i + 1;
  while (k < a.size()) {
    const std::string& w = a[k];
    if (w == "--" || w == "-") {
      ++k;
      break;
    }
    if (w.size() < 2 || (w[0] != '-' && w[0] != '+')) break;
    ++k;
    if (w.starts_with("--")) {
      if (w == "--rcfile" || w == "--init-file") {
        own = true;
        ++k;
      }
      if (w == "--command") has_c = true;  // fish
      if (w.find('=') != std::string::npos || (fish && w.starts_with("--init"))) own = true;
      continue;
    }
    for (std::size_t c = 1; c < w.size(); ++c) {
      if (w[c] == 'c') has_c = true;
      if (w[c] == 's') reads_stdin = true;
      if (fish && w[c] == 'C') own = true;
      // -o OPTION, -O SHOPT: each takes the next word, and the cluster goes on (`bash -oc
      // posix CODE` runs CODE; bash reads no value glued to them).
      if (w[c] == 'o' || w[c] == 'O') ++k;
    }
  }
  if (!has_c || k >= a.size()) {  // `bash script.sh`, `curl … | sh`: a program
    Step s;
    s.stdin_script = k >= a.size() || reads_stdin;
    return s;
  }
  // fish reads its options after the command string too (`fish -c ls -C CODE`).
  for (std::size_t r = k + 1; fish && r < a.size(); ++r)
    if (a[r].starts_with("--init") || (a[r].size() > 1 && a[r][0] == '-' && a[r][1] != '-' &&
                                       a[r].find('C') != std::string::npos))
      own = true;
  Step s = step_recurse(a[k], 1);
  for (std::size_t r = i; own && r < a.size(); ++r) s.outer.push_back(r);
  return s;
}

Step unwrap_env(const Args& a, std::size_t i) {
  const WrapperOptions& options = options_of("env");
  std::size_t k = i + 1;
  std::optional<std::string> split;
  std::vector<std::size_t> assignments;
  while (k < a.size()) {
    const std::string& w = a[k];
    if (w == "--") {
      ++k;
      break;
    }
    if (w == "-") {  // same as -i
      ++k;
      continue;
    }
    if (w.starts_with("--")) {
      const std::size_t eq = w.find('=');
      const std::string name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      // --default-signal[=SIG] and the other signal options take theirs attached only.
      std::string value;
      if (eq != std::string::npos) {
        value = w.substr(eq + 1);
      } else if (takes_value(name, options.long_val) && k + 1 < a.size()) {
        value = a[++k];  // GNU getopt takes an abbreviation: `--un X`, `--split X`
      }
      if (long_matches(name, "split-string") && takes_value(name, options.long_val)) split = value;
      ++k;
      continue;
    }
    if (w.size() > 1 && w[0] == '-') {
      ++k;
      for (std::size_t c = 1; c < w.size(); ++c) {
        if (options.short_val.find(w[c]) != std::string_view::npos) {
          std::string value;
          if (c + 1 < w.size())
            value = w.substr(c + 1);
          else if (k < a.size())
            value = a[k++];
          if (w[c] == 'S') split = value;
          break;
        }
      }
      continue;
    }
    if (is_env_assignment(w)) {
      assignments.push_back(k);
      ++k;
      continue;
    }
    break;
  }
  k = std::min(k, a.size());
  Step s = step_next(k);
  if (split) {
    std::string text = *split;
    for (std::size_t r = k; r < a.size(); ++r) text += " " + shell_quote(a[r]);
    s = step_recurse(std::move(text), 0);
  }
  s.assignments = std::move(assignments);
  return s;
}

// The command an `ssh -o` value runs through a shell: `ProxyCommand=CMD` (which ssh runs
// as `exec CMD`), `LocalCommand CMD`, `KnownHostsCommand=CMD` locally, `RemoteCommand=CMD`
// on the host (keyword case-insensitive, `=` or blanks).
std::optional<std::string> ssh_option_command(const std::string& v) {
  static constexpr std::string_view kKeys[] = {"proxycommand", "localcommand", "knownhostscommand",
                                               "remotecommand"};
  std::size_t n = 0;
  while (n < v.size() && is_alpha(v[n])) ++n;
  std::string key = v.substr(0, n);
  for (char& c : key) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) return std::nullopt;
  while (n < v.size() && is_blank(v[n])) ++n;
  if (n < v.size() && v[n] == '=') ++n;
  while (n < v.size() && is_blank(v[n])) ++n;
  std::string cmd = v.substr(n);
  if (cmd.empty() || cmd == "none") return std::nullopt;
  if (key == "proxycommand") return "exec " + cmd;
  return cmd;
}

// ssh [options] DESTINATION [COMMAND…]: the words after the destination, joined with spaces,
// are run by the remote user's shell. ssh reads options again after the destination.
// `-o ProxyCommand=CMD` (and LocalCommand, KnownHostsCommand) runs CMD with a local shell.
Step unwrap_ssh(const Args& a, std::size_t i) {
  const std::string_view takes_value = options_of("ssh").short_val;
  std::size_t k = i + 1;
  bool ended = false;
  std::vector<std::string> local;
  auto read = [&] {
    while (k < a.size()) {
      const std::string& w = a[k];
      if (w == "--") {
        ++k;
        ended = true;
        return;
      }
      if (w.size() < 2 || w[0] != '-') return;
      ++k;
      for (std::size_t c = 1; c < w.size(); ++c) {
        if (takes_value.find(w[c]) != std::string_view::npos) {
          std::optional<std::string> value;
          if (c + 1 < w.size())
            value = w.substr(c + 1);
          else if (k < a.size())
            value = a[k];
          if (c + 1 == w.size()) ++k;
          if (w[c] == 'o' && value) {
            if (auto cmd = ssh_option_command(*value)) local.push_back(std::move(*cmd));
          }
          break;
        }
      }
    }
  };
  read();
  if (k >= a.size()) return {};  // no destination
  ++k;                           // DESTINATION
  if (!ended) read();
  k = std::min(k, a.size());
  if (k >= a.size() && local.empty()) {  // `ssh HOST`: a login; its shell reads stdin
    Step s;
    s.stdin_script = true;
    return s;
  }
  Step s;
  s.kind = Step::Recurse;
  s.depth_inc = 1;
  s.texts = std::move(local);
  if (k < a.size()) s.texts.push_back(join_from(a, k));
  for (std::size_t r = i; r < k; ++r) s.outer.push_back(r);
  return s;
}

// sshpass [-f FILE | -d FD | -p PASSWORD | -e[VAR]] [-P PROMPT] [-v] CMD…
Step unwrap_sshpass(const Args& a, std::size_t i) {
  const WrapperOptions& o = options_of("sshpass");
  return step_next(read_options(a, i + 1, o.short_val, o.long_val, o.short_opt).next);
}

// The values given in `o` to the options `letters` and `longs` (GNU abbreviations too).
Args option_values(const Options& o, std::string_view letters,
                   std::initializer_list<std::string_view> longs) {
  Args out;
  for (const OptionSeen& option : o.seen) {
    if (!option.value) continue;
    const bool named =
        option.is_long
            ? std::any_of(longs.begin(), longs.end(),
                          [&](std::string_view l) { return long_matches(option.name, l); })
            : letters.find(option.name[0]) != std::string_view::npos;
    if (named) out.push_back(*option.value);
  }
  return out;
}

// `--process-slot-var=NAME` (xargs, parallel) sets NAME in each command's environment to
// its job slot, a number known only at run time.
std::vector<Assignment> slot_variables(const Options& o) {
  std::vector<Assignment> out;
  for (std::string& name : option_values(o, "", {"process-slot-var", "processslotvar"}))
    out.push_back({std::move(name), "", true});
  return out;
}

// xargs [options] [CMD…]: CMD gets its operands at run time, appended or (-I R, -i[R],
// --replace[=R]; R `{}` when left off) put where R stands in its words.
Step unwrap_xargs(const Options& o) {
  Step s = step_next(o.next);
  s.runtime = true;
  s.replaced = option_values(o, "Ii", {"replace"});
  if (has(o, "i", {"replace"})) s.replaced.push_back("{}");
  s.variables = slot_variables(o);
  return s;
}

Step unwrap_one(const std::string& prog, const Args& a, std::size_t i);

// GNU parallel's replacement strings and those its options name (-I R, --replace R, --er R,
// --rpl 'R perl' …). Its own are a family that grows ({} {.} {/} {//} {/.} {#} {%} {N} {-N}
// {= perl =}, and with --plus {..} {+/} {:-d} {/a/b} …): any `{` stands for them.
std::vector<std::string> parallel_replaced(const Options& o) {
  std::vector<std::string> out = {"{"};
  for (std::string r : option_values(
           o, "Ii",
           {"replace", "extensionreplace", "er", "basenamereplace", "bnr", "dirnamereplace", "dnr",
            "basenameextensionreplace", "bner", "seqreplace", "slotreplace", "rpl"})) {
    r = r.substr(0, r.find_first_of(" \t"));  // --rpl 'TAG perl': the TAG
    if (!r.empty()) out.push_back(std::move(r));
  }
  return out;
}

// Whether the command a[k..end) runs, read through its wrappers, is a command string (`sh -c
// TEXT`, `su -c TEXT`, `ssh HOST TEXT`…) that holds one of `replaced`.
bool splices_code(Args a, std::size_t k, std::size_t end,
                  const std::vector<std::string>& replaced) {
  a.resize(end);
  auto holds = [&](const std::string& x) { return holds_replacement(x, replaced); };
  while (k < a.size()) {
    // Another parallel: its words hold the string anywhere (read without recursing, so a
    // line of nested parallels costs no more than its words).
    if (basename_of(a[k]) == "parallel"sv)
      return std::any_of(a.begin() + static_cast<std::ptrdiff_t>(k) + 1, a.end(), holds);
    const Step t = unwrap_one(basename_of(a[k]), a, k);
    if (t.kind == Step::Recurse) return std::any_of(t.texts.begin(), t.texts.end(), holds);
    if (t.kind != Step::Next || t.next <= k) return false;
    k = t.next;
  }
  return false;
}

// GNU parallel [options] [COMMAND…] (::: ARGS | :::: FILES)…: the command words are a
// template run by a shell with operands filled in at run time; without them, each `:::`
// argument is itself a command line. The template's words are joined as they are (with -q,
// quoted one by one): a word that a shell of the template runs as code holding a
// replacement string (`sh -c 'wc -l {}'`) is code with text spliced in either way.
Step unwrap_parallel(const Args& a, std::size_t i) {
  const WrapperOptions& options = options_of("parallel");
  const Options o = read_options(a, i + 1, options.short_val, options.long_val, options.short_opt);
  std::vector<std::string> replaced = parallel_replaced(o);
  static constexpr std::string_view kSeparators[] = {":::", "::::", ":::+", "::::+"};
  auto is_sep = [&](const std::string& w) {
    return std::find(std::begin(kSeparators), std::end(kSeparators), w) != std::end(kSeparators);
  };
  std::size_t j = o.next;
  while (j < a.size() && !is_sep(a[j])) ++j;
  if (j > o.next) {
    std::string text;
    for (std::size_t r = o.next; r < j; ++r) text += (r > o.next ? " " : "") + a[r];
    Step s = step_recurse(std::move(text), 1);
    s.runtime = true;
    // `{= perl =}` is perl code parallel runs itself, and may unquote (`uq()`) what it puts in.
    s.spliced = splices_code(a, o.next, j, replaced) ||
                std::any_of(a.begin() + static_cast<std::ptrdiff_t>(o.next),
                            a.begin() + static_cast<std::ptrdiff_t>(j),
                            [](const std::string& w) { return w.find("{=") != std::string::npos; });
    s.replaced = std::move(replaced);
    s.variables = slot_variables(o);
    // `:::: FILE…` and `::::+ FILE…` read the arguments from each FILE, as `-a FILE` does
    // (parallel(1)): parallel's own reads.
    bool from_files = false;
    for (std::size_t r = j; r < a.size(); ++r) {
      if (is_sep(a[r])) {
        from_files = a[r].starts_with("::::");
      } else if (from_files) {
        if (s.outer_words.empty()) s.outer_words.push_back(a[i]);
        s.outer_words.push_back("-a");
        s.outer_words.push_back(a[r]);
      }
    }
    return s;
  }
  // No template: the arguments after `:::` are the commands; without `:::`, each line of
  // stdin is one (`parallel <<EOF`: a script); from a `::::` file: unknown.
  if (j >= a.size()) {
    Step s;
    s.stdin_script = true;
    return s;
  }
  if (a[j].starts_with("::::")) return {};
  Step s;
  s.kind = Step::Recurse;
  s.depth_inc = 1;
  s.variables = slot_variables(o);
  for (std::size_t r = j + 1; r < a.size(); ++r) {
    if (is_sep(a[r])) {
      if (a[r].starts_with("::::")) s.runtime = true;  // operands from a file
      continue;
    }
    s.texts.push_back(a[r]);
  }
  if (s.texts.empty()) return {};
  return s;
}

// Every program name unwrap_one handles, sorted: most commands are none of them.
constexpr std::string_view kWrapperNames[] = {
    "ash",    "bash",  "builtin", "busybox",  "chroot",  "chrt",   "command", "csh",     "dash",
    "doas",   "env",   "eval",    "exec",     "fish",    "flock",  "ionice",  "ksh",     "mksh",
    "nice",   "nohup", "nsenter", "parallel", "pkexec",  "posh",   "rbash",   "runuser", "script",
    "setsid", "sg",    "sh",      "ssh",      "sshpass", "stdbuf", "su",      "sudo",    "taskset",
    "tcsh",   "time",  "timeout", "toybox",   "unshare", "watch",  "xargs",   "yash",    "zsh"};
static_assert(std::is_sorted(std::begin(kWrapperNames), std::end(kWrapperNames)));
// The wrappers unwrap_one reads without a kWrapperOptions entry, besides the shells.
constexpr std::string_view kWrappersReadByHand[] = {"busybox", "eval", "sg", "toybox"};

// unwrap_one reads a wrapper's options only for a name found in kWrapperNames first: every
// wrapper with options is named there, and every name there has its options listed or is
// read without them.
constexpr bool wrapper_lists_agree() {
  auto in = [](const auto& list, std::string_view name) {
    return std::find(std::begin(list), std::end(list), name) != std::end(list);
  };
  for (const WrapperOptions& w : kWrapperOptions)
    if (!in(kWrapperNames, w.program)) return false;
  for (std::string_view name : kWrapperNames) {
    const bool has_options =
        std::any_of(std::begin(kWrapperOptions), std::end(kWrapperOptions),
                    [&](const WrapperOptions& w) { return w.program == name; });
    if (!has_options && !in(kShells, name) && !in(kWrappersReadByHand, name)) return false;
  }
  return true;
}
static_assert(wrapper_lists_agree());

Step unwrap_one(const std::string& prog, const Args& a, std::size_t i) {
  if (!std::binary_search(std::begin(kWrapperNames), std::end(kWrapperNames),
                          std::string_view(prog))) {
    return {};
  }
  // The wrapper's options (kWrapperOptions), read up to its first operand.
  auto opts = [&] {
    const WrapperOptions& o = options_of(prog);
    return read_options(a, i + 1, o.short_val, o.long_val, o.short_opt);
  };
  if (prog == "sudo"sv) {
    const Options o = opts();
    if (has(o, "elvVK", {"edit", "list", "validate", "version", "remove-timestamp"})) return {};
    std::size_t k = o.next;
    std::vector<std::size_t> assignments;
    while (k < a.size() && is_env_assignment(a[k])) assignments.push_back(k++);
    Step s = step_next(k);
    s.assignments = std::move(assignments);
    // -s / -i hand the command to a shell with every character but letters, digits, `_`, `-`
    // and `$` escaped: `$NAME` is expanded there.
    if (has(o, "si", {"shell", "login"})) {
      for (std::size_t r = k; r < a.size(); ++r) {
        s.expansion = s.expansion || a[r].find('$') != std::string::npos;
      }
      s.stdin_script = k >= a.size();  // `sudo -s <<EOF`: the shell reads stdin
    }
    return s;
  }
  if (prog == "doas"sv) {
    const Options o = opts();
    Step s = step_next(o.next);
    s.stdin_script = has(o, "s", {}) && o.next >= a.size();  // `doas -s <<EOF`
    return s;
  }
  if (prog == "env"sv) return unwrap_env(a, i);
  if (prog == "timeout"sv) {
    std::size_t k = opts().next;
    if (k < a.size()) ++k;  // DURATION
    return step_next(k);
  }
  if (prog == "nice"sv) return step_next(opts().next);
  if (prog == "ionice"sv) {
    const Options o = opts();
    if (has(o, "pPu", {"pid", "pgid", "uid"})) return {};
    return step_next(o.next);
  }
  if (prog == "nohup"sv || prog == "builtin"sv || prog == "stdbuf"sv || prog == "time"sv)
    return step_next(opts().next);
  if (prog == "xargs"sv) return unwrap_xargs(opts());
  if (prog == "command"sv) {
    const Options o = opts();
    if (has(o, "vV", {})) return {};  // a lookup, not a run
    return step_next(o.next);
  }
  if (prog == "exec"sv) return step_next(opts().next);
  if (prog == "eval"sv) {
    if (i + 1 >= a.size()) return {};
    std::string text;
    for (std::size_t k = i + 1; k < a.size(); ++k) {
      if (k > i + 1) text += ' ';
      text += a[k];
    }
    return step_recurse(std::move(text), 1);
  }
  // su [options] [-] [USER [ARGS…]]: -c CMD is run by the user's shell; without it, a login.
  if (prog == "su"sv) {
    const auto c = command_option(a, i, options_of(prog));
    if (c) return step_recurse(c->value, 1);
    Step s;  // a shell: reads its commands from stdin (`su - root <<EOF`)
    s.stdin_script = true;
    return s;
  }
  // runuser -u USER [--] CMD… runs CMD; runuser [options] [-] USER -c CMD like su.
  if (prog == "runuser"sv) {  // -u and -c exclude each other; with -u the words after are CMD's
    const Options o = opts();
    if (has(o, "u", {"user"})) return step_next(o.next);
    const auto c = command_option(a, i, options_of(prog));
    if (c) return step_recurse(c->value, 1);
    Step s;  // a shell reading stdin, like su
    s.stdin_script = true;
    return s;
  }
  if (prog == "pkexec"sv) return step_next(opts().next);
  if (prog == "chroot"sv) {
    std::size_t k = opts().next;
    if (k < a.size()) ++k;  // NEWROOT
    Step s = step_next(k);
    s.stdin_script = k >= a.size();  // no command: chroot runs the shell, reading stdin
    return s;
  }
  if (prog == "nsenter"sv || prog == "unshare"sv) return step_next(opts().next);
  if (prog == "chrt"sv) {  // chrt [options] [PRIORITY] CMD…; -p PID and -m do not run one
    const Options o = opts();
    if (has(o, "pm", {"pid", "max"})) return {};
    std::size_t k = o.next;
    if (k < a.size() && all_digits(a[k])) ++k;
    return step_next(k);
  }
  if (prog == "taskset"sv) {  // taskset [options] MASK|LIST CMD…; -p works on a running process
    const Options o = opts();
    if (has(o, "p", {"pid"})) return {};
    std::size_t k = o.next;
    if (k < a.size()) ++k;  // MASK or CPU list
    return step_next(k);
  }
  if (prog == "setsid"sv) return step_next(opts().next);
  // flock [options] FILE CMD… | flock [options] FILE -c CMD | flock [options] FD
  if (prog == "flock"sv) {
    const WrapperOptions& flock = options_of(prog);
    std::size_t k = opts().next;
    if (k + 1 >= a.size()) return {};
    ++k;  // FILE
    if (is_option_word(a[k], flock.command, flock.command_long)) {
      if (k + 1 >= a.size()) return {};
      return step_recurse(a[k + 1], 1);
    }
    return step_next(k);
  }
  // watch [options] CMD…: the words are joined and run with `sh -c` (with -x: run directly).
  if (prog == "watch"sv) {
    const Options o = opts();
    if (o.next >= a.size()) return {};
    if (has(o, "x", {"exec"})) return step_next(o.next);
    return step_recurse(join_from(a, o.next), 1);
  }
  // busybox|toybox APPLET ARGS…; busybox --list / --install run none
  if (prog == "busybox"sv || prog == "toybox"sv) {
    if (i + 1 < a.size() && !a[i + 1].starts_with("-")) return step_next(i + 1);
    return {};
  }
  if (prog == "parallel"sv) return unwrap_parallel(a, i);
  if (prog == "ssh"sv) return unwrap_ssh(a, i);
  if (prog == "sshpass"sv) return unwrap_sshpass(a, i);
  // script [options] -c CMD [FILE]: CMD runs in a shell, the session is written to FILE.
  if (prog == "script"sv) {
    const auto c = command_option(a, i, options_of(prog));
    if (!c) {  // a shell reading stdin, its session written to FILE
      Step s;
      s.stdin_script = true;
      return s;
    }
    Step s = step_recurse(c->value, 1);
    for (std::size_t r = i; r < a.size(); ++r) {
      if (r < c->first || r > c->last) s.outer.push_back(r);
    }
    return s;
  }
  // sg [-] [GROUP [-c] CMD…]: CMD runs with /bin/sh -c.
  if (prog == "sg"sv) {
    std::size_t k = i + 1;
    if (k < a.size() && a[k] == "-") ++k;
    if (k >= a.size()) return {};
    ++k;  // GROUP
    if (k < a.size() && a[k] == "-c") ++k;
    if (k >= a.size()) {  // a shell with the group, reading stdin
      Step s;
      s.stdin_script = true;
      return s;
    }
    return step_recurse(join_from(a, k), 1);
  }
  if (is_shell(prog)) return unwrap_shell(a, i);
  return {};
}

// Builtins whose NAME=value operands set variables (`export LD_PRELOAD=/x.so`).
bool is_declaration(const std::string& p) {
  return p == "export"sv || p == "declare"sv || p == "typeset"sv || p == "local"sv ||
         p == "readonly"sv;
}

// NAME=value of an argv word (after quote removal), as env and the declaration builtins
// read it: the name up to the first `=` (without a `+` or `[index]`).
Assignment assignment_of(const std::string& w, bool dynamic) {
  const std::size_t eq = w.find('=');
  Assignment a;
  a.name = w.substr(0, eq);
  const std::size_t end = a.name.find_first_of("+[");
  if (end != std::string::npos) a.name.resize(end);
  a.value = w.substr(eq + 1);
  a.dynamic = dynamic;
  return a;
}

bool is_name(const std::string& w) {
  return !w.empty() && is_name_start(w[0]) && std::all_of(w.begin(), w.end(), is_name_char);
}

// The variables a builtin sets, as assignments: `export A=1` and `declare A=1` (value as
// written), `export A` and `declare -x A` (A enters the environment with a value set
// elsewhere: dynamic), `read A B` and `printf -v A …` (value known only at run time).
void variables_set(const Args& argv, std::size_t i, const std::vector<Word>& words,
                   std::vector<Assignment>* out) {
  const std::string prog = basename_of(argv[i]);
  auto dynamic_word = [&](std::size_t k) { return k < words.size() && words[k].dynamic; };
  auto unknown = [&](const std::string& name) { out->push_back({name, "", true}); };
  if (is_declaration(prog)) {
    bool exports = prog == "export"sv;
    for (std::size_t k = i + 1; k < argv.size(); ++k) {
      const std::string& w = argv[k];
      if (w.size() > 1 && w[0] == '-') {
        if (w.find('x') != std::string::npos) exports = true;
      } else if (is_env_assignment(w)) {
        out->push_back(assignment_of(w, dynamic_word(k)));
      } else if (exports && is_name(w)) {
        unknown(w);
      }
    }
  } else if (prog == "read"sv) {
    for (std::size_t k = i + 1; k < argv.size(); ++k) {
      const std::string& w = argv[k];
      if (w == "--") continue;
      if (w.size() > 1 && w[0] == '-') {
        // `-a ARRAY`, and options whose value is the next word (`-p PROMPT`, `-d DELIM` …).
        const char last = w.back();
        if (last == 'a' && k + 1 < argv.size()) {
          unknown(argv[++k]);
        } else if (std::string_view("dinNptu").find(last) != std::string_view::npos) {
          ++k;
        }
      } else if (is_name(w)) {
        unknown(w);
      }
    }
  } else if (prog == "printf"sv) {
    for (std::size_t k = i + 1; k < argv.size(); ++k) {
      const std::string& w = argv[k];
      if (w == "-v" && k + 1 < argv.size()) {
        unknown(argv[k + 1]);
        break;
      }
      if (w.starts_with("-v") && w.size() > 2) {
        unknown(w.substr(2));
        break;
      }
      if (w.empty() || w[0] != '-' || w == "--") break;
    }
  }
}

// `find … -exec CMD… ;` (and + , -execdir, -ok, -okdir): the words of each CMD, and the words
// find keeps for itself (its paths, tests and the action word, without CMD or the
// terminator). A `+` ends CMD only right after `{}`, as in find.
struct FindSplit {
  std::vector<std::size_t> outer;
  std::vector<std::vector<std::size_t>> inner;
  std::vector<bool> in_dir;  // per inner command: -execdir or -okdir
};

std::optional<FindSplit> split_find(const Args& a, std::size_t i) {
  auto is_exec = [](const std::string& w) {
    return w == "-exec" || w == "-execdir" || w == "-ok" || w == "-okdir";
  };
  if (std::none_of(a.begin() + static_cast<std::ptrdiff_t>(i) + 1, a.end(), is_exec)) {
    return std::nullopt;
  }
  FindSplit f;
  std::size_t k = i;
  while (k < a.size()) {
    f.outer.push_back(k);
    if (k == i || !is_exec(a[k])) {
      ++k;
      continue;
    }
    std::vector<std::size_t> cmd;
    const bool in_dir = a[k] == "-execdir" || a[k] == "-okdir";
    ++k;
    while (k < a.size() && !(a[k] == ";" || (a[k] == "+" && !cmd.empty() && a[k - 1] == "{}"))) {
      cmd.push_back(k++);
    }
    if (k < a.size()) ++k;  // the terminator
    if (!cmd.empty()) {
      f.inner.push_back(std::move(cmd));
      f.in_dir.push_back(in_dir);
    }
  }
  return f;
}

// Where `find` starts looking (its operands before the first test or action, after the
// -H -L -P -D X -ON options); "." when it names none. The files `{}` stands for lie below
// these. `-files0-from FILE` reads them from FILE at run time: anywhere, "/*".
Args find_roots(const Args& a, std::size_t i) {
  if (std::find(a.begin() + static_cast<std::ptrdiff_t>(i) + 1, a.end(), "-files0-from") != a.end())
    return {"/*"};
  std::size_t k = i + 1;
  while (k < a.size()) {
    const std::string& w = a[k];
    if (w == "-H" || w == "-L" || w == "-P" || (w.size() > 2 && w[0] == '-' && w[1] == 'O')) {
      ++k;
    } else if (w == "-D") {
      k += 2;
    } else {
      if (w == "--") ++k;  // the end of the options: starting points follow (`find -- /tmp`)
      break;
    }
  }
  Args roots;
  for (; k < a.size(); ++k) {
    const std::string& w = a[k];
    if (w.empty() || w[0] == '-' || w == "(" || w == "!" || w == ",") break;
    roots.push_back(w);
  }
  if (roots.empty()) roots.push_back(".");
  return roots;
}

// `{}` in a command find runs names a file below `root`: it becomes `root/{}` (within
// words too, as find substitutes it there: `sh -c 'cat {}'`), so the command's paths lie
// where the files really are (`find /etc -exec cp {} . ;` reads below /etc).
void place_found_file(std::vector<Word>* words, const std::string& root) {
  const std::string found = (root.empty() || root.back() != '/' ? root + "/" : root) + "{}";
  for (Word& w : *words) {
    for (std::size_t at = w.value.find("{}"); at != std::string::npos;
         at = w.value.find("{}", at + found.size())) {
      w.value.replace(at, 2, found);
    }
  }
}

}  // namespace

std::span<const WrapperOptions> wrapper_options() { return kWrapperOptions; }

void Parser::finish_simple(std::vector<Word> words, std::vector<Assignment> assignments,
                           std::vector<Redirect> redirects, Unknowns dyn,
                           std::size_t first_heredoc) {
  for (const Word& w : words) dyn.add(w);
  dyn.add_replaced(replaced_);
  if (words.empty()) {
    if (!redirects.empty() || !assignments.empty()) {
      emit({}, wrappers_, std::move(assignments), std::move(redirects), dyn);
    }
    return;
  }
  run_words(std::move(words), wrappers_, std::move(assignments), std::move(redirects), dyn,
            first_heredoc);
}

void Parser::run_words(std::vector<Word> words, std::vector<std::string> wrappers,
                       std::vector<Assignment> assignments, std::vector<Redirect> redirects,
                       Unknowns dyn, std::size_t first_heredoc) {
  NestGuard nest(ctx_);  // `find -exec find -exec …` recurses here
  Args argv;
  argv.reserve(words.size());
  for (const Word& w : words) argv.push_back(w.value);
  auto words_at = [&](const std::vector<std::size_t>& idx) {
    std::vector<Word> out;
    out.reserve(idx.size());
    for (std::size_t k : idx) out.push_back(words[k]);
    return out;
  };
  auto values_of = [](const std::vector<Word>& ws) {
    Args out;
    out.reserve(ws.size());
    for (const Word& w : ws) out.push_back(w.value);
    return out;
  };
  std::size_t i = 0;
  bool stdin_script = false;
  bool in_shell = true;                // runs in this shell: no wrapper but builtin, command, time
  std::optional<SubshellScope> moved;  // a wrapper started its command elsewhere
  for (;;) {
    const std::string prog = basename_of(argv[i]);
    Step s = unwrap_one(prog, argv, i);
    if (s.kind == Step::Stop) {
      stdin_script = s.stdin_script;
      // `… | parallel`, `parallel -a FILE`: each line of its input is a command of its own,
      // known only at run time.
      if (s.stdin_script && prog == "parallel"sv)
        note_code("parallel runs each line of its input as a command", "");
      break;
    }
    // `env A=1 cmd`, `sudo A=1 cmd`: the wrapped command runs with these set.
    for (std::size_t k : s.assignments) {
      assignments.push_back(assignment_of(argv[k], k < words.size() && words[k].dynamic));
    }
    assignments.insert(assignments.end(), s.variables.begin(), s.variables.end());
    // What the wrapper does itself (`ssh HOST`: a connection; an option naming a file,
    // a program, code or a host) stays a command of its own.
    const WrapperOptions* own = find_options(prog);
    if (own && s.outer.empty() && (s.kind == Step::Recurse || s.next < argv.size())) {
      std::size_t end = s.kind == Step::Recurse ? argv.size() : s.next;
      // parallel, watch and xargs stop reading options at the first operand: what follows is
      // the command they run (`watch -n 2 du --max-depth=1 .`), not theirs.
      if (prog == "parallel"sv || prog == "watch"sv || prog == "xargs"sv)
        end = std::min(
            end, read_options(argv, i + 1, own->short_val, own->long_val, own->short_opt).next);
      if (has_own_effect(argv, i + 1, end, *own))
        for (std::size_t k = i; k < end; ++k) s.outer.push_back(k);
    }
    if (!s.outer.empty()) emit(values_of(words_at(s.outer)), wrappers, assignments, redirects, dyn);
    // `env -C DIR CMD`, `sudo -D DIR CMD`: CMD (and what it wraps) starts in DIR.
    if (own) {
      if (std::optional<Cwds> to = wrapper_cwds(argv, words, i, *own, dyn.runtime, ctx_)) {
        if (!moved) moved.emplace(ctx_);
        ctx_.sh.cwds = std::move(*to);
      }
    }
    if (!s.outer_words.empty()) emit(s.outer_words, wrappers, assignments, redirects, dyn);
    wrappers.push_back(prog);
    Unknowns inner = dyn;
    inner.runtime = inner.runtime || s.runtime;
    inner.expansion = inner.expansion || s.expansion;
    inner.add_replaced(s.replaced);
    if (s.kind == Step::Recurse) {
      const std::size_t first = ctx_.out.size();
      // `eval` runs in this shell (its cd stays); any other command string runs in a new
      // shell that starts where this one is (remotely or as a login: somewhere unknown).
      const bool same_shell = prog == "eval"sv && in_shell;
      std::optional<SubshellScope> scope;
      if (!same_shell) {
        scope.emplace(ctx_);
        const bool elsewhere =
            prog == "ssh"sv || ((prog == "su"sv || prog == "runuser"sv) &&
                                std::any_of(argv.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                            argv.end(), [](const std::string& w) {
                                              return w == "-" || w == "-l" || w == "--login";
                                            }));
        if (elsewhere) ctx_.sh.cwds = {unknown_cwd()};
        ctx_.sh.oldpwd = {unknown_cwd()};
        ctx_.sh.dirs.clear();
        ctx_.sh.dirs_known = true;
      }
      // Whether a word of the wrapper's this shell expands (`"echo $X"`, `"$(cat f)"`) is
      // part of the code text.
      // (Past 16 MiB of searching, taken to be: the answer that asks.)
      auto expanded_into = [&](const std::string& text) {
        std::size_t searched = 0;
        for (std::size_t k = i + 1; k < words.size(); ++k) {
          if (!words[k].expansion || words[k].value.empty()) continue;
          if ((searched += text.size()) > (std::size_t{1} << 24)) return true;
          if (text.find(words[k].value) != std::string::npos) return true;
        }
        return false;
      };
      if (inner.runtime) ++ctx_.runtime;
      for (const std::string& text : s.texts) {
        const std::size_t at = ctx_.out.size();
        parse_nested(text, wrappers, s.depth_inc, assignments, redirects, inner);
        // A file name or input line put into code text (`xargs -I{} sh -c 'cat {}'`) may be
        // any code: known only at run time, like `sh -c "$X"`'s. The wrapper's own strings
        // in its own template (`parallel gzip {}`) are quoted by it.
        if (s.spliced || holds_replacement(text, dyn.replaced)) {
          note_code("text replaced at run time in code", text);
          flush_code(at);
        } else if (expanded_into(text)) {
          // `sh -c "echo $X"`, `eval "ls $(cat f)"`: this shell expands the word before the
          // code is read, so `X='x; rm -rf ~'` is code too.
          note_code("text expanded into code before it runs", text);
          flush_code(at);
        }
      }
      if (inner.runtime) --ctx_.runtime;
      // `ssh HOST bash <<EOF`, `su -c sh <<< '…'`: a shell in the string reads this stdin.
      for (std::size_t k = first; k < ctx_.out.size(); ++k) {
        const SimpleCommand& c = ctx_.out[k];
        if (c.depth != depth_ + s.depth_inc || c.argv.empty()) continue;
        if (unwrap_one(c.program, c.argv, 0).stdin_script) {
          std::vector<std::string> shell = c.wrappers;
          shell.push_back(c.program);
          const std::vector<Assignment> shell_assignments = c.assignments;
          feed_stdin(shell, c.depth, shell_assignments, redirects, inner, first_heredoc);
          break;
        }
      }
      return;
    }
    if (s.next >= argv.size()) {  // nothing wrapped
      if (prog == "xargs"sv) {
        emit({"echo"}, std::move(wrappers), std::move(assignments), std::move(redirects), inner);
        return;
      }
      wrappers.pop_back();
      stdin_script = s.stdin_script;  // `sudo -s <<EOF`, `chroot /x <<EOF`
      break;
    }
    dyn = inner;
    // Only the builtin/command wrappers and the `time` keyword keep the command in this shell.
    const bool keyword_time = prog == "time"sv && i < words.size() && words[i].raw == "time";
    if (!(prog == "builtin"sv || prog == "command"sv || keyword_time)) in_shell = false;
    i = s.next;
  }
  if (basename_of(argv[i]) == "find"sv) {
    if (const auto f = split_find(argv, i)) {
      emit(values_of(words_at(f->outer)), wrappers, assignments, redirects, dyn);
      wrappers.push_back("find");
      Unknowns inner = dyn;
      inner.runtime = true;  // `{}` and the operands come from the file system
      inner.add_replaced({"{}"});
      const Args roots = find_roots(argv, i);
      for (std::size_t c = 0; c < f->inner.size(); ++c) {
        for (const std::string& root : roots) {  // one command per starting point
          const std::size_t last = root.find_last_not_of('/');
          const bool is_root = last == std::string::npos;  // `find / -execdir`: in / and below
          if (!f->in_dir[c] || root.substr(0, last + 1) == ".") {  // `find . -execdir`: here
            std::vector<Word> ws = words_at(f->inner[c]);
            place_found_file(&ws, root);
            run_words(std::move(ws), wrappers, assignments, redirects, inner, first_heredoc);
            continue;
          }
          // -execdir runs in the directory that holds each file found: below the starting
          // point, in it or a directory under it; the starting point itself, in its parent as
          // written (`find /home/user/project -maxdepth 0 -execdir rm -rf .ssh`: /home/user).
          const std::string trimmed = is_root ? "/" : root.substr(0, last + 1);
          const std::size_t slash = trimmed.rfind('/');
          const std::string parent = slash == std::string::npos ? "."
                                     : slash == 0               ? "/"
                                                                : trimmed.substr(0, slash);
          const std::string name = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
          for (const bool itself : {false, true}) {
            if (itself && is_root) break;
            std::vector<Word> ws = words_at(f->inner[c]);
            place_found_file(&ws, itself ? name : root[0] == '/' ? root : ".");
            SubshellScope in_dir(ctx_);
            Cwds dirs;
            for (const WorkingDir& from : ctx_.sh.cwds)
              add_cwd(dirs, resolve_dir(from, itself ? parent : root, false, ctx_));
            ctx_.sh.cwds = std::move(dirs);
            run_words(std::move(ws), wrappers, assignments, redirects, inner, first_heredoc);
          }
        }
      }
      return;
    }
  }
  const std::size_t own = assignments.size();
  variables_set(argv, i, words, &assignments);
  for (std::size_t k = own; k < assignments.size(); ++k) taint_assignment(assignments[k]);
  evaluated_text(argv, i, words);
  const Args full = argv;
  argv.erase(argv.begin(), argv.begin() + static_cast<std::ptrdiff_t>(i));
  std::vector<std::string> inner_wrappers = wrappers;
  inner_wrappers.push_back(basename_of(argv[0]));
  const bool is_trap = basename_of(argv[0]) == "trap"sv;
  emit(std::move(argv), wrappers, assignments, redirects, dyn);
  {
    std::vector<bool>& expanded = ctx_.out.back().expanded;
    for (std::size_t k = i; k < words.size(); ++k) expanded.push_back(words[k].expansion);
  }
  follow_state(full, i, words, in_shell);
  // `trap 'CMD' SIG`: CMD runs later (at the signal, on exit, before every command for
  // DEBUG), wherever the shell then is.
  if (is_trap && i + 2 < full.size() && full[i + 1] != "--" && !full[i + 1].starts_with("-") &&
      !full[i + 1].empty()) {
    const std::size_t first = ctx_.out.size();
    const Cwds before = ctx_.sh.cwds;
    bool changed = false;
    {
      SubshellScope scope(ctx_);
      std::vector<std::string> trap_wrappers = wrappers;
      trap_wrappers.push_back("trap");
      parse_nested(full[i + 1], trap_wrappers, 1, assignments, {}, dyn);
      changed = !(ctx_.sh.cwds == before);
    }
    for (std::size_t k = first; k < ctx_.out.size(); ++k) ctx_.deferred.push_back(k);
    if (changed) {
      add_cwd(ctx_.sh.cwds, unknown_cwd());
      ctx_.moved = true;
    }
  }
  // `bash <<EOF` / `sh <<< '…'` / `su - root <<EOF`: the shell runs its stdin as a script.
  if (stdin_script) feed_stdin(inner_wrappers, depth_, assignments, redirects, dyn, first_heredoc);
}

void Parser::feed_stdin(const std::vector<std::string>& shell_wrappers, int depth,
                        const std::vector<Assignment>& assignments,
                        const std::vector<Redirect>& redirects, Unknowns dyn,
                        std::size_t first_heredoc) {
  for (std::size_t d = first_heredoc; d < heredocs_.size(); ++d) {
    if (heredocs_[d].fd == 0) {
      heredocs_[d].script = true;
      heredocs_[d].script_wrappers = shell_wrappers;
      heredocs_[d].script_assignments = assignments;
      heredocs_[d].script_depth = depth;
      heredocs_[d].script_cwds = ctx_.sh.cwds;
    }
  }
  for (const Redirect& r : redirects) {
    if (r.op == "<<<" && r.fd == 0) {
      SubshellScope scope(ctx_);  // another shell: its cd stays there
      ctx_.sh.oldpwd = {unknown_cwd()};
      ctx_.sh.dirs.clear();
      ctx_.sh.dirs_known = true;
      parse_nested(r.target, shell_wrappers, depth - depth_ + 1, assignments, {}, dyn);
    }
  }
}

void Context::count_words(std::size_t n) {
  total_words += n;
  if (total_words > limits.max_total_words) {
    throw ShellError{"more than " + std::to_string(limits.max_total_words) +
                         " words, assignments and redirections in the whole line",
                     Failure::Limit};
  }
}

void Parser::emit(std::vector<std::string> argv, std::vector<std::string> wrappers,
                  std::vector<Assignment> assignments, std::vector<Redirect> redirects,
                  Unknowns dyn) {
  if (ctx_.out.size() >= ctx_.limits.max_commands) {
    throw ShellError{"more than " + std::to_string(ctx_.limits.max_commands) + " commands",
                     Failure::Limit};
  }
  ctx_.count_words(argv.size() + assignments.size() + redirects.size() + wrappers.size());
  SimpleCommand c;
  if (!argv.empty()) c.program = basename_of(argv[0]);
  bool operands_only = false;
  for (std::size_t k = 1; k < argv.size(); ++k) {
    const std::string& w = argv[k];
    if (operands_only || w.size() < 2 || w[0] != '-') {
      c.args.push_back(w);
    } else if (w == "--") {
      operands_only = true;
    } else if (w[1] != '-' && std::all_of(w.begin() + 1, w.end(), is_alpha)) {
      for (std::size_t j = 1; j < w.size(); ++j) c.flags.push_back(std::string{'-', w[j]});
    } else {
      c.flags.push_back(w);
    }
  }
  c.argv = std::move(argv);
  c.cwds = ctx_.sh.cwds;
  c.code = std::move(pending_code_);
  pending_code_.clear();
  c.wrappers = std::move(wrappers);
  c.assignments = std::move(assignments);
  c.redirects = std::move(redirects);
  c.depth = depth_;
  c.glob = dyn.glob;
  c.expansion = dyn.expansion;
  c.runtime_operands = dyn.runtime;
  c.replaced = std::move(dyn.replaced);
  c.dynamic = dyn.any();
  ctx_.out.push_back(std::move(c));
}

void Parser::parse_nested(const std::string& text, std::vector<std::string> wrappers, int depth_inc,
                          const std::vector<Assignment>& assignments,
                          const std::vector<Redirect>& redirects, Unknowns dyn) {
  if (depth_inc > 0) enter_depth(depth_inc);
  NestGuard guard(ctx_);
  const std::size_t first = ctx_.out.size();
  Parser sub(ctx_, text, depth_ + depth_inc, std::move(wrappers));
  sub.replaced_ = dyn.replaced;
  sub.parse_all();
  // The outer command's assignments, redirections and unresolved words apply to everything
  // it runs (outer assignments first: inner ones override them).
  ctx_.count_words((ctx_.out.size() - first) * (assignments.size() + redirects.size()));
  for (std::size_t k = first; k < ctx_.out.size(); ++k) {
    SimpleCommand& c = ctx_.out[k];
    c.glob = c.glob || dyn.glob;
    c.expansion = c.expansion || dyn.expansion;
    c.runtime_operands = c.runtime_operands || dyn.runtime;
    add_unique(c.replaced, dyn.replaced);
    c.dynamic = c.dynamic || dyn.any();
    c.assignments.insert(c.assignments.begin(), assignments.begin(), assignments.end());
    c.redirects.insert(c.redirects.end(), redirects.begin(), redirects.end());
    if (c.argv.size() + c.assignments.size() + c.redirects.size() > ctx_.limits.max_words) {
      throw ShellError{"a simple command has more than " + std::to_string(ctx_.limits.max_words) +
                           " words, assignments and redirections",
                       Failure::Limit};
    }
  }
  if (ctx_.out.size() == first && (!redirects.empty() || !assignments.empty())) {
    emit({}, sub.wrappers_, assignments, redirects, dyn);
  }
}

}  // namespace detail

bool holds_replacement(std::string_view text, const std::vector<std::string>& replaced) {
  return std::any_of(replaced.begin(), replaced.end(), [&](const std::string& r) {
    return !r.empty() && text.find(r) != std::string_view::npos;
  });
}

ParseResult parse(std::string_view line, const Limits& limits) {
  ParseResult result;
  try {
    detail::Context ctx;
    ctx.limits = limits;
    ctx.max_nest = std::clamp(limits.max_depth * 4, 64, 256);
    detail::Parser parser(ctx, line, 0, {});
    parser.parse_all();
    // A function body or trap runs when called, wherever the shell then is: if the line
    // changes directory anywhere, that may be anywhere.
    if (ctx.moved) {
      for (std::size_t k : ctx.deferred) detail::add_cwd(ctx.out[k].cwds, detail::unknown_cwd());
    }
    result.commands = std::move(ctx.out);
    result.ok = true;
  } catch (detail::ShellError& e) {
    result.error = std::move(e.message);
    result.failure = e.failure;
  } catch (const std::bad_alloc&) {
    result.commands.clear();
    result.error = "out of memory";
    result.failure = Failure::Internal;
  } catch (...) {
    result.commands.clear();
    result.error = "internal error";
    result.failure = Failure::Internal;
  }
  return result;
}

}  // namespace warden::shell
