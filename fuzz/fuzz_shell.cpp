// libFuzzer target: the shell parser (bindings/shell_parser.h), fed any bytes as one command
// line. Checks its contract: no crash, deterministic, the limits hold, and each simple
// command is consistent (program is the basename of argv[0]; flags and operands come from
// argv). The differential check against bash's own parser is fuzz/shell_differential.sh,
// run over the corpus this target grows.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bindings/shell_parser.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_shell: %s\n", what);
  std::abort();
}

bool same(const warden::shell::ParseResult& a, const warden::shell::ParseResult& b) {
  if (a.ok != b.ok || a.error != b.error || a.commands.size() != b.commands.size()) return false;
  for (std::size_t i = 0; i < a.commands.size(); ++i) {
    const auto& x = a.commands[i];
    const auto& y = b.commands[i];
    if (x.program != y.program || x.argv != y.argv || x.flags != y.flags || x.args != y.args ||
        x.wrappers != y.wrappers || x.depth != y.depth || x.dynamic != y.dynamic)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  std::string_view line(reinterpret_cast<const char*>(data), size);
  warden::shell::Limits limits;
  limits.max_commands = 256;
  limits.max_depth = 8;
  warden::shell::ParseResult r = warden::shell::parse(line, limits);
  if (!r.ok) {
    if (r.error.empty()) fail("refused without a reason");
    return 0;
  }
  if (!r.error.empty()) fail("accepted with an error");
  if (r.commands.size() > limits.max_commands) fail("more commands than the limit");
  for (const auto& c : r.commands) {
    if (c.depth < 0 || c.depth > limits.max_depth) fail("depth outside the limit");
    if (c.argv.empty()) {
      if (!c.program.empty()) fail("a program without argv");
      continue;
    }
    const std::string& first = c.argv.front();
    std::size_t slash = first.find_last_of('/');
    std::string base = slash == std::string::npos ? first : first.substr(slash + 1);
    if (!base.empty() && c.program != base) fail("program is not the basename of argv[0]");
    for (const auto& arg : c.args) {
      bool found = false;
      for (const auto& word : c.argv) found = found || word == arg;
      if (!found) fail("an operand that is not a word of argv");
    }
  }
  if (!same(r, warden::shell::parse(line, limits))) fail("two parses of one line differ");
  return 0;
}
