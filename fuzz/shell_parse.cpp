// Prints what the shell parser makes of each file named on the command line: "ok N FILE"
// (N simple commands) or "error FILE: reason". Used by fuzz/shell_differential.sh.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "bindings/shell_parser.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    warden::shell::ParseResult r = warden::shell::parse(text.str());
    if (r.ok)
      std::printf("ok %zu %s\n", r.commands.size(), argv[i]);
    else
      std::printf("error %s: %s\n", argv[i], r.error.c_str());
  }
  return 0;
}
