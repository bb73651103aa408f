// ShellParser: turns a shell command line into the simple commands it would run, the way
// a POSIX/bash shell splits it, so rules see `rm -r -f /` however it was written.
// Pure function, no I/O, no globals: safe to call from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace warden::shell {

struct Redirect {
  std::string op;      // ">", ">>", "<", "<<", "<<<", "<>", ">|", "&>", "&>>", ">&", "<&"
  int fd = -1;         // explicit or default fd (1 for >, 0 for <); -1 for &> (both)
  std::string target;  // word after the operator, quotes removed ("" for a heredoc body)
};

struct SimpleCommand {
  std::string program;                 // basename of argv[0], quotes removed ("/bin/rm" -> "rm")
  std::vector<std::string> argv;       // every word after quote removal, program word first
  std::vector<std::string> flags;      // canonical: "-rf" -> "-r","-f"; "--force" as written
  std::vector<std::string> args;       // operands (words that are not flags), in order
  std::vector<std::string> wrappers;   // unwrapped wrappers, outermost first: "sudo", "timeout", "bash"
  std::vector<Redirect> redirects;
  int depth = 0;                       // 0 top level; +1 per $(…), `…`, <(…), bash -c, eval
  bool dynamic = false;                // a word holds $VAR, $(…), `…` or an unquoted glob
  bool background = false;             // ended by '&'
};

struct Limits {
  std::size_t max_commands = 4096;     // more simple commands than this: error
  int max_depth = 16;                  // deeper nesting than this: error
};

struct ParseResult {
  bool ok = false;
  std::string error;                   // why it could not be parsed (fail closed on it)
  std::vector<SimpleCommand> commands; // in execution order of appearance
};

ParseResult parse(std::string_view line, const Limits& limits = {});

}  // namespace warden::shell
