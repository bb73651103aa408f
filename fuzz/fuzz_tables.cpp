// libFuzzer target: the effects table and path classes loaders (rule authors' *.toml files,
// which the daemon loads on every reload), and what they compute. The first byte picks the
// loader. Checks that nothing throws or crashes, that a table refused by the loader came with
// an error diagnostic carrying a line, and that a table it accepts can be queried: effects of
// a few commands, classes of a few paths.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bindings/shell_parser.h"
#include "engine/effects.h"
#include "engine/path_classes.h"

namespace {

void fail(const char* what) {
  std::fprintf(stderr, "fuzz_tables: %s\n", what);
  std::abort();
}

void check_refusal(const warden::Diagnostics& diagnostics, const char* code) {
  bool error = false;
  for (const auto& d : diagnostics) {
    if (d.severity != warden::Severity::Error) continue;
    error = true;
    if (d.code != code) fail("a refusal with another code");
    if (d.line < 1) fail("a refusal without a line");
  }
  if (!error) fail("a table refused without an error");
}

const std::vector<warden::shell::SimpleCommand>& commands() {
  static const std::vector<warden::shell::SimpleCommand> parsed = [] {
    std::vector<warden::shell::SimpleCommand> out;
    for (const char* line :
         {"git -C sub log --ext-diff -p", "sort -uo out.txt in.txt", "cmake -E rm -rf build",
          "python3 -m pytest -k x tests/", "curl -o x https://h.example/a",
          "sudo make -f $M install", "find . -name '*.o' -delete", "scp -P 22 a user@host:/tmp/",
          "rm -- -x ./*.log"}) {
      auto r = warden::shell::parse(line);
      for (auto& c : r.commands) out.push_back(std::move(c));
    }
    return out;
  }();
  return parsed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool effects = (data[0] & 1) == 0;
  warden::RuleSource source{effects ? "effects.toml" : "paths.toml",
                            std::string(reinterpret_cast<const char*>(data + 1), size - 1)};
  warden::Diagnostics diagnostics;
  if (effects) {
    auto table = warden::EffectsTable::parse(source, &diagnostics);
    if (!table) {
      check_refusal(diagnostics, "E_EFFECTS_TABLE");
      return 0;
    }
    std::vector<warden::Effect> out;
    for (const auto& cmd : commands())
      table->effects_of(cmd, "/home/user/project", "/home/user", &out);
  } else {
    auto classes = warden::PathClasses::parse(source, &diagnostics);
    if (!classes) {
      check_refusal(diagnostics, "E_PATH_CLASSES");
      return 0;
    }
    for (const char* p : {"/home/user/.ssh/id_rsa", "/home/user/project/.env", "/etc/passwd", "/",
                          "", "/HOME/USER/.SSH/ID_RSA", "/srv/Key.PEM.bak", "/proc/1/environ"}) {
      const std::string_view by_prefilter = classes->classify(p, "", "/home/user");
      if (by_prefilter.empty()) fail("an empty class name");
      // The prefilter (ASCII paths) must answer as the one set of every pattern does.
      if (by_prefilter != classes->classify_by_set(p, "", "/home/user"))
        fail("the prefilter and the set disagree");
    }
  }
  return 0;
}
