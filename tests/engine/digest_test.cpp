// The rules digest names the rule contents, not the path they were read from.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/rule_files.h"
#include "tests/engine/engine_test_util.h"
#include "tests/support/temp_dir.h"

using namespace warden;
namespace fs = std::filesystem;
using warden::testing::TempDir;

namespace {

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

std::string digest_of(const std::string& path) {
  Diagnostics diagnostics;
  RuleSources sources = read_rule_files({path}, &diagnostics);
  REQUIRE(diagnostics.empty());
  auto loaded = Policy::compile(sources);
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  return loaded.policy->digest();
}

const char* kA = R"((defrule a (proposal (id ?id) (target shell))
  => (assert (decision (proposal ?id) (outcome reject) (rule a))))
)";
const char* kB = R"((defrule b (proposal (id ?id) (target reply))
  => (assert (decision (proposal ?id) (outcome approve) (rule b))))
)";

}  // namespace

TEST_CASE("the rules digest is the same however the rules path is written, and for a copy",
          "[loader][digest]") {
  TempDir tmp{"warden-digest"};
  write(tmp.path() / "rules" / "a.clp", kA);
  write(tmp.path() / "rules" / "sub" / "b.clp", kB);
  write(tmp.path() / "copy" / "elsewhere" / "a.clp", kA);
  write(tmp.path() / "copy" / "elsewhere" / "sub" / "b.clp", kB);

  const std::string absolute = digest_of((tmp.path() / "rules").string());
  const std::string relative = fs::relative(tmp.path() / "rules", fs::current_path()).string();
  REQUIRE(relative.rfind("/", 0) != 0);
  CHECK(digest_of(relative) == absolute);
  CHECK(digest_of(relative + "/") == absolute);
  CHECK(digest_of((tmp.path() / "copy" / ".." / "rules").string()) == absolute);
  CHECK(digest_of((tmp.path() / "copy" / "elsewhere").string()) == absolute);
  CHECK(absolute.rfind("sha256:", 0) == 0);
}

TEST_CASE("a one-byte change to any rule file changes the rules digest", "[loader][digest]") {
  TempDir tmp{"warden-digest"};
  write(tmp.path() / "rules" / "a.clp", kA);
  write(tmp.path() / "rules" / "sub" / "b.clp", kB);
  const std::string before = digest_of((tmp.path() / "rules").string());
  std::string changed = kB;
  changed.back() = ' ';  // the final newline becomes a space: same rules, other bytes
  write(tmp.path() / "rules" / "sub" / "b.clp", changed);
  CHECK(digest_of((tmp.path() / "rules").string()) != before);
  // The same two texts split differently over files hash differently too.
  TempDir other{"warden-digest"};
  write(other.path() / "rules" / "a.clp", std::string(kA) + kB);
  CHECK(digest_of((other.path() / "rules").string()) != before);
}

TEST_CASE(
    "a rule file reached twice (again, or through a symlink) is read once, at its first place",
    "[loader][digest]") {
  TempDir tmp{"warden-digest"};
  write(tmp.path() / "rules" / "a.clp", kA);
  write(tmp.path() / "team" / "b.clp", kB);
  fs::create_symlink(tmp.path() / "rules" / "a.clp", tmp.path() / "team" / "linked-a.clp");
  const std::string rules = (tmp.path() / "rules").string();
  const std::string team = (tmp.path() / "team").string();

  Diagnostics diagnostics;
  RuleSources sources = read_rule_files({rules, team, rules + "/a.clp", rules}, &diagnostics);
  CHECK(diagnostics.empty());
  REQUIRE(sources.size() == 2);
  CHECK(sources[0].path == rules + "/a.clp");
  CHECK(sources[1].path == team + "/b.clp");
  // Alone, the team directory reads the linked file as its own.
  RuleSources alone = read_rule_files({team}, &diagnostics);
  REQUIRE(alone.size() == 2);
  CHECK(alone[0].path == team + "/b.clp");
  CHECK(alone[1].path == team + "/linked-a.clp");
  auto loaded = Policy::compile(sources);
  CHECK(loaded.policy);
}
