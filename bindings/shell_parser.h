// ShellParser: turns a shell command line into the simple commands it would run, the way
// a POSIX/bash shell splits it, so rules see `rm -r -f /` however it was written.
// Pure function, no I/O, no globals: safe to call from any thread.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden::shell {

struct Redirect {
  std::string op;      // ">", ">>", "<", "<<", "<<<", "<>", ">|", "&>", "&>>", ">&", "<&"
  int fd = -1;         // explicit or default fd (1 for >, 0 for <); -1 for &> (both)
  std::string target;  // word after the operator, quotes removed ("" for a heredoc body)

  // `2>&1` and `>&-` duplicate or close a descriptor; `>&file` writes to a file.
  bool duplicates_fd() const {
    if (op != ">&" && op != "<&") return false;
    if (target == "-") return true;
    return !target.empty() && target.find_first_not_of("0123456789") == std::string::npos;
  }
};

// `NAME=value` before a command (`LD_PRELOAD=/x.so ls`), after a wrapper that sets the
// environment (`env A=1 cmd`, `sudo A=1 cmd`), alone (`X=1`), or as an operand of a
// declaration builtin (`export A=1`, `declare`, `typeset`, `local`, `readonly`).
struct Assignment {
  std::string name;      // NAME, without `+` or `[index]`
  std::string value;     // after quote removal; expansions kept as written ("$(id)")
  bool dynamic = false;  // the value holds $…, `…` or $(…) (whose commands are their own facts)
};

// One working directory a command may run in, relative to the line's starting directory:
// the `cd` targets applied in order (an absolute or `~` target starts afresh; "~" alone is
// HOME). No steps: the starting directory. known false: it cannot be told (a `cd "$D"`, a
// `cd -` whose OLDPWD came from outside, a `source`d file, a program name known only at
// run time); a caller takes it for a directory outside the workspace.
struct WorkingDir {
  bool known = true;
  std::vector<std::string> steps;
  bool operator==(const WorkingDir&) const = default;
};

struct SimpleCommand {
  std::string program;             // basename of argv[0], quotes removed ("/bin/rm" -> "rm")
  std::vector<std::string> argv;   // every word after quote removal, program word first
  std::vector<std::string> flags;  // canonical: "-rf" -> "-r","-f"; "--force" as written
  std::vector<std::string> args;   // operands (words that are not flags), in order
  std::vector<std::string>
      wrappers;  // unwrapped wrappers, outermost first: "sudo", "timeout", "bash"
  std::vector<Assignment> assignments;  // in order; those of wrappers and enclosing `bash -c` too
  std::vector<Redirect> redirects;
  int depth = 0;  // 0 top level; +1 per $(…), `…`, <(…), bash -c, eval, a
                  // command string run by a shell (su -c, ssh, watch, …)
  // Something in the command is known only at run time: any of the three reasons below. Kept
  // TRUE for globs so that every check written against `dynamic` still sees `rm -rf *`.
  bool dynamic = false;
  bool glob = false;       // a word holds an unquoted glob (`*`, `?`, `[…]`): `ls *.py`
  bool expansion = false;  // a word or assignment holds $VAR, ${…}, $(…), `…`, $((…)), ~user, ~+
                           // or a brace expansion ({a,b}, {1..9})
  // The command gets its operands at run time: unwrapped from `find -exec`, `xargs`, `parallel`.
  bool runtime_operands = false;
  // The strings the wrappers it runs under replace in its words with text known only at run
  // time (find -exec's `{}`, `xargs -I R`, parallel's `{}`, `{.}` … and `-I R`): code text that
  // holds one (`sh -c 'cat {}'`, `python3 -c 'print("{}")'`) is not the code that runs.
  std::vector<std::string> replaced;
  bool background = false;  // ended by '&'
  // Per argv word: it holds an unresolved expansion ($VAR, $(…) …). Empty when not
  // recorded (then `expansion` tells for the whole command).
  std::vector<bool> expanded;
  // Every working directory the command may run in (never empty): a `cd` may fail, so the
  // commands after `cd X; …` may run in X or where the line started; after `cd X && …`
  // only in X. A subshell's `cd` does not leak out, `eval`'s does; `bash -c` starts where
  // its caller is. See docs/RULES.md ("The shell model").
  std::vector<WorkingDir> cwds{WorkingDir{}};
  // Text the shell evaluates as code when the command runs, beyond its words: an array
  // subscript or variable value in an arithmetic context, a prompt expansion, a trap, a
  // completion or mapfile callback … (`test -v 'a[$(id)]'`). Each entry is "what: text".
  std::vector<std::string> code;
};

struct Limits {
  std::size_t max_commands = 4096;  // more simple commands than this: Failure::Limit
  std::size_t max_words =
      4096;  // more words + assignments + redirects in one simple command: Failure::Limit
  // More words + assignments + redirects over all simple commands (after the assignments and
  // redirects of `A=1 bash -c '…'` are copied to every inner command): Failure::Limit.
  std::size_t max_total_words = 1 << 18;
  int max_depth = 16;  // deeper nesting than this: Failure::Syntax
  // Past this point in time the parse stops with Failure::Deadline (checked as it lexes).
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

enum class Failure {
  None,
  Syntax,    // the line is not valid shell (or nests too deep): rules see a shell-error
  Limit,     // a size cap (commands, words) was hit: the caller fails closed
  Deadline,  // the deadline passed while parsing: the caller fails closed
  Internal,  // out of memory or a parser bug: the caller fails closed
};

struct ParseResult {
  bool ok = false;
  Failure failure = Failure::None;
  std::string error;                    // why it could not be parsed (fail closed on it)
  std::vector<SimpleCommand> commands;  // in execution order of appearance
};

ParseResult parse(std::string_view line, const Limits& limits = {});

// Whether `text` holds one of the strings a wrapper replaces at run time
// (SimpleCommand::replaced).
bool holds_replacement(std::string_view text, const std::vector<std::string>& replaced);

}  // namespace warden::shell
