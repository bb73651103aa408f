// Effect facts end to end: the *.toml tables of a rule set, effect facts from shell lines
// (table and redirects), file and HTTP proposals, the class slot of path facts, table errors
// refusing the set, the digest, the fact cap, history facts and expect_effects cases.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "engine/case_runner.h"
#include "engine/rule_files.h"
#include "tests/engine/engine_test_util.h"
#include "tests/support/temp_dir.h"

using namespace warden;
using namespace warden::test;
namespace fs = std::filesystem;
using warden::testing::TempDir;

namespace {

void write_file(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

const char* kFactRules = R"((defrule effects-write-credential
  (effect (proposal ?id) (kind write) (class credential))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule effects-write-credential) (reason "credential"))))
(defrule effects-approve
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule effects-approve))))
)";

// The same set without the rule on effect facts, for rule sets loaded without an effects
// table (a rule set matching effect facts needs one).
const char* kPlainRules = R"((defrule effects-approve
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule effects-approve))))
)";

const char* kEffects = R"([program.sort]
values = ["-k", "-t"]
operands = ["read..."]
[program.sort.options]
"-o" = "write"
"--output" = "write"

[program.cp]
operands = ["read..."]
last = "write"

[program.cat]
operands = ["read..."]

[program.echo]
)";

const char* kClassesToml = R"([[class]]
name = "credential"
patterns = ["~/.ssh/id_*", "**/.env"]

[[class]]
name = "persistence"
patterns = ["**/.git/hooks/**"]
)";

std::shared_ptr<const Policy> compile_ok(const RuleSources& sources) {
  auto loaded = Policy::compile(sources);
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  return loaded.policy;
}

std::shared_ptr<const Policy> full_policy() {
  return compile_ok(
      {{"effects.toml", kEffects}, {"paths.toml", kClassesToml}, {"rules.clp", kFactRules}});
}

Decision decide_explained(Engine& engine, const std::string& json) {
  DecideRequest request;
  request.proposal_json = json;
  request.explain = true;
  return decide_ok(engine, request);
}

std::string shell_line(const std::string& command) {
  std::string json = "{\"target\":\"shell\",\"payload\":{\"command\":\"";
  for (char c : command) {
    if (c == '"' || c == '\\') json += '\\';
    json += c;
  }
  return json + "\"}}";
}

// Effects matching every given field ("" = any).
std::size_t count(const Decision& d, const std::string& kind, const std::string& target,
                  const std::string& via = "") {
  return static_cast<std::size_t>(
      std::count_if(d.effects.begin(), d.effects.end(), [&](const EffectRecord& e) {
        return (kind.empty() || e.kind == kind) && (target.empty() || e.target == target) &&
               (via.empty() || e.via == via);
      }));
}

const EffectRecord* find(const Decision& d, const std::string& kind, const std::string& target) {
  for (const auto& e : d.effects)
    if (e.kind == kind && e.target == target) return &e;
  return nullptr;
}

bool has_fact(const Decision& d, const std::string& text) {
  return d.facts_json.find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("effect facts: a shell line's effects from the table, with class and in-workspace",
          "[effect-facts]") {
  Engine engine(full_policy(), test_options());
  Decision d =
      decide_explained(engine, shell_line("sort -o out.txt in.txt && cp a.txt ~/.ssh/id_rsa"));
  for (const auto& e : d.effects)
    UNSCOPED_INFO(e.kind + " " + e.object + " " + e.target + " via " + e.via);

  const EffectRecord* out = find(d, "write", "/home/user/project/out.txt");
  REQUIRE(out);
  CHECK(out->object == "path");
  CHECK(out->program == "sort");
  CHECK(out->via == "-o");
  CHECK(out->in_workspace);
  CHECK(out->path_class == "none");
  const EffectRecord* in = find(d, "read", "/home/user/project/in.txt");
  REQUIRE(in);
  CHECK(in->via == "operand");
  CHECK(in->in_workspace);

  const EffectRecord* key = find(d, "write", "/home/user/.ssh/id_rsa");
  REQUIRE(key);
  CHECK(key->program == "cp");
  CHECK(key->path_class == "credential");
  CHECK_FALSE(key->in_workspace);
  CHECK(find(d, "read", "/home/user/project/a.txt"));

  // The facts rules see, with the shell-command index.
  CHECK(has_fact(d, "(effect (proposal \\\""));
  CHECK(has_fact(
      d,
      "(index 1) (kind write) (object path) (target \\\"/home/user/.ssh/id_rsa\\\") (program \\\"cp\\\")"));
  CHECK(has_fact(d, "(class credential) (in-workspace FALSE)"));
  CHECK(has_fact(
      d, "(index 0) (kind write) (object path) (target \\\"/home/user/project/out.txt\\\")"));
  CHECK(fired(d, "effects-write-credential"));
  CHECK(d.outcome == Outcome::Reject);
}

TEST_CASE("effect facts: cd changes the directory later effects are relative to",
          "[effect-facts]") {
  Engine engine(full_policy(), test_options());
  Decision d = decide_ok(engine, shell_line("cd sub && cat x.txt"));
  CHECK(find(d, "read", "/home/user/project/sub/x.txt"));
}

TEST_CASE("effect facts: an unknown program has one unknown effect", "[effect-facts]") {
  Engine engine(full_policy(), test_options());
  Decision d = decide_ok(engine, shell_line("frobnicate --all x"));
  REQUIRE(d.effects.size() == 1);
  CHECK(d.effects[0].kind == "unknown");
  CHECK(d.effects[0].object == "program");
  CHECK(d.effects[0].target == "frobnicate");
}

TEST_CASE("effect facts: redirects write and read files, descriptor duplications do not",
          "[effect-facts]") {
  Engine engine(full_policy(), test_options());
  Decision d = decide_explained(
      engine, shell_line("echo hi > out.log 2>&1 < in.txt >> ~/.ssh/id_ed25519 >&-"));
  for (const auto& e : d.effects)
    UNSCOPED_INFO(e.kind + " " + e.object + " " + e.target + " via " + e.via);
  CHECK(count(d, "write", "/home/user/project/out.log", "redirect") == 1);
  CHECK(count(d, "read", "/home/user/project/in.txt", "redirect") == 1);
  const EffectRecord* key = find(d, "write", "/home/user/.ssh/id_ed25519");
  REQUIRE(key);
  CHECK(key->path_class == "credential");
  CHECK(key->via == "redirect");
  CHECK(key->program == "echo");
  CHECK(count(d, "", "", "redirect") == 3);  // nothing for 2>&1 or >&-
  CHECK(fired(d, "effects-write-credential"));

  Decision rw = decide_ok(engine, shell_line("cat <> data.bin"));
  CHECK(count(rw, "read", "/home/user/project/data.bin", "redirect") == 1);
  CHECK(count(rw, "write", "/home/user/project/data.bin", "redirect") == 1);
}

TEST_CASE("effect facts: file proposals read, write or delete payload.path", "[effect-facts]") {
  Engine engine(full_policy(), test_options());
  Decision w = decide_explained(
      engine, R"({"target":"file","action":"write","payload":{"path":"../other/.env"}})");
  REQUIRE(w.effects.size() == 1);
  CHECK(w.effects[0].kind == "write");
  CHECK(w.effects[0].object == "path");
  CHECK(w.effects[0].target == "/home/user/other/.env");
  CHECK(w.effects[0].via == "payload.path");
  CHECK(w.effects[0].path_class == "credential");
  CHECK_FALSE(w.effects[0].in_workspace);
  CHECK(has_fact(w, "(effect (proposal \\\""));
  CHECK(has_fact(w, "(index -1) (kind write)"));
  // The path fact carries the class too.
  CHECK(has_fact(w, "(normalized \\\"/home/user/other/.env\\\")"));
  CHECK(has_fact(w, "(in-workspace FALSE) (class credential))"));
  CHECK(w.outcome == Outcome::Reject);

  Decision a =
      decide_ok(engine, R"({"target":"file","action":"append","payload":{"path":"notes.md"}})");
  REQUIRE(a.effects.size() == 1);
  CHECK(a.effects[0].kind == "write");
  CHECK(a.effects[0].in_workspace);
  CHECK(a.effects[0].path_class == "none");

  Decision del = decide_ok(engine, R"({"target":"file","action":"delete","payload":{"path":"x"}})");
  REQUIRE(del.effects.size() == 1);
  CHECK(count(del, "delete", "/home/user/project/x") == 1);
  // payload.action is the verb when the proposal has no action.
  Decision payload_only =
      decide_ok(engine, R"({"target":"file","payload":{"path":"x","action":"write"}})");
  CHECK(count(payload_only, "write", "/home/user/project/x") == 1);
  Decision no_verb = decide_ok(engine, R"({"target":"file","payload":{"path":"x"}})");
  CHECK(no_verb.effects.empty());
}

TEST_CASE("effect facts: http proposals reach the url's host", "[effect-facts]") {
  Engine engine(full_policy(), test_options());
  Decision d = decide_ok(
      engine, R"({"target":"http","payload":{"url":"https://API.Example.com.:8443/x?y=1"}})");
  REQUIRE(d.effects.size() == 1);
  CHECK(d.effects[0].kind == "network");
  CHECK(d.effects[0].object == "host");
  CHECK(d.effects[0].target == "api.example.com");
  CHECK(d.effects[0].via == "payload.url");
  CHECK(d.effects[0].path_class == "none");
  // A URL that is not valid still reaches the network: an unknown host.
  Decision bad =
      decide_ok(engine, R"({"target":"http","payload":{"url":"https://user@example.com/"}})");
  REQUIRE(bad.effects.size() == 1);
  CHECK(bad.effects[0].kind == "network");
  CHECK(bad.effects[0].target == "");
}

TEST_CASE("effect facts: no effects table, no effect facts; no classes table, class none",
          "[effect-facts]") {
  SECTION("rules only") {
    Engine engine(compile_ok({{"rules.clp", kPlainRules}}), test_options());
    Decision d = decide_explained(engine, shell_line("cp a ~/.ssh/id_rsa > out"));
    CHECK(d.effects.empty());
    CHECK_FALSE(has_fact(d, "(effect "));
    Decision f = decide_explained(
        engine, R"({"target":"file","action":"write","payload":{"path":"~/.ssh/id_rsa"}})");
    CHECK(f.effects.empty());
    CHECK(has_fact(f, "(class none)"));
  }
  SECTION("classes without effects: path facts are classified, still no effect facts") {
    Engine engine(compile_ok({{"paths.toml", kClassesToml}, {"rules.clp", kPlainRules}}),
                  test_options());
    Decision f = decide_explained(
        engine, R"({"target":"file","action":"write","payload":{"path":"~/.ssh/id_rsa"}})");
    CHECK(f.effects.empty());
    CHECK(has_fact(f, "(class credential)"));
  }
  SECTION("effects without classes: every class is none") {
    Engine engine(compile_ok({{"effects.toml", kEffects}, {"rules.clp", kFactRules}}),
                  test_options());
    Decision d = decide_ok(engine, shell_line("cp a ~/.ssh/id_rsa"));
    const EffectRecord* key = find(d, "write", "/home/user/.ssh/id_rsa");
    REQUIRE(key);
    CHECK(key->path_class == "none");
    CHECK(d.outcome == Outcome::Approve);
  }
}

TEST_CASE("effect facts: a table error refuses the rule set with file and line", "[effect-facts]") {
  SECTION("path classes") {
    auto loaded =
        Policy::compile({{"rules.clp", kFactRules},
                         {"paths.toml", "[[class]]\nname = \"x\"\npatterns = [\"*.pem\"]\n"}});
    CHECK_FALSE(loaded.policy);
    REQUIRE(loaded.diagnostics.size() == 1);
    CHECK(loaded.diagnostics[0].code == code::kPathClasses);
    CHECK(loaded.diagnostics[0].file == "paths.toml");
    CHECK(loaded.diagnostics[0].line == 3);
  }
  SECTION("effects") {
    auto loaded = Policy::compile(
        {{"rules.clp", kFactRules},
         {"effects.toml", "[program.sort]\noperands = [\"read...\"]\nbogus-key = 1\n"}});
    CHECK_FALSE(loaded.policy);
    REQUIRE_FALSE(loaded.diagnostics.empty());
    CHECK(loaded.diagnostics[0].code == code::kEffectsTable);
    CHECK(loaded.diagnostics[0].file == "effects.toml");
    CHECK(loaded.diagnostics[0].line == 3);
  }
  SECTION("TOML syntax") {
    auto loaded = Policy::compile(
        {{"rules.clp", kFactRules}, {"paths.toml", "[[class]]\nname = \"x\npatterns = []\n"}});
    CHECK_FALSE(loaded.policy);
    REQUIRE_FALSE(loaded.diagnostics.empty());
    CHECK(loaded.diagnostics[0].code == code::kPathClasses);
    CHECK(loaded.diagnostics[0].line == 2);
  }
  SECTION("both kinds of table in one file, or neither") {
    auto both = Policy::compile(
        {{"rules.clp", kFactRules}, {"t.toml", std::string(kEffects) + kClassesToml}});
    CHECK_FALSE(both.policy);
    REQUIRE(both.diagnostics.size() == 1);
    CHECK(both.diagnostics[0].code == code::kEffectsTable);
    CHECK(both.diagnostics[0].file == "t.toml");
    CHECK(both.diagnostics[0].line == 1);
    auto neither = Policy::compile({{"rules.clp", kFactRules}, {"t.toml", "title = \"x\"\n"}});
    CHECK_FALSE(neither.policy);
    REQUIRE(neither.diagnostics.size() == 1);
    CHECK(neither.diagnostics[0].code == code::kEffectsTable);
  }
  SECTION(
      "a class defined in two files is merged in load order; a program in two files is an error") {
    auto classes =
        Policy::compile({{"a.toml", kClassesToml},
                         {"b.toml", "[[class]]\nname = \"system\"\npatterns = [\"/etc/**\"]\n"},
                         {"rules.clp", kPlainRules}});
    REQUIRE(classes.policy);
    Engine engine(classes.policy, test_options());
    Decision d = decide_explained(
        engine, R"({"target":"file","action":"read","payload":{"path":"/etc/passwd"}})");
    CHECK(has_fact(d, "(class system)"));
    auto programs = Policy::compile({{"a.toml", kEffects},
                                     {"b.toml", "[program.cat]\noperands = [\"read...\"]\n"},
                                     {"rules.clp", kFactRules}});
    CHECK_FALSE(programs.policy);
    REQUIRE_FALSE(programs.diagnostics.empty());
    CHECK(programs.diagnostics[0].code == code::kEffectsTable);
  }
}

TEST_CASE("effect facts: a class no table defines is a warning at its line", "[effect-facts]") {
  const std::string rules = R"((defrule typo
  (path (proposal ?id) (class credential|persistence))
  (effect (proposal ?id)
          (class credentials))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule typo) (reason "(class nothing) in a string"))))
(defrule fine
  ; (class commented-out)
  (effect (proposal ?id) (class ?c&~none&~persistence&:(neq ?c system)))
  (history (proposal ?id) (class none))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule fine))))
(defrule two
  (effect (proposal ?id) (class ~credential&~secret))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule two))))
)";
  auto loaded = Policy::compile(
      {{"effects.toml", kEffects}, {"paths.toml", kClassesToml}, {"rules.clp", rules}});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);  // a warning, not an error
  REQUIRE(loaded.diagnostics.size() == 2);
  CHECK(loaded.diagnostics[0].severity == Severity::Warning);
  CHECK(loaded.diagnostics[0].code == code::kPathClasses);
  CHECK(loaded.diagnostics[0].file == "rules.clp");
  CHECK(loaded.diagnostics[0].line == 4);
  CHECK(loaded.diagnostics[0].rule == "typo");
  CHECK(loaded.diagnostics[0].message.find("\"credentials\"") != std::string::npos);
  CHECK(loaded.diagnostics[1].line == 14);
  CHECK(loaded.diagnostics[1].message.find("\"secret\"") != std::string::npos);
  // Without a classes table only none is a class.
  auto bare =
      Policy::compile({{"rules.clp", "(defrule r (path (proposal ?id) (class system)) => )\n"}});
  REQUIRE(bare.policy);
  REQUIRE(bare.diagnostics.size() == 1);
  CHECK(bare.diagnostics[0].severity == Severity::Warning);
}

TEST_CASE("effect facts: the rules directory's tables are loaded and part of the digest",
          "[effect-facts][digest]") {
  TempDir tmp{"warden-effects"};
  write_file(tmp.path() / "rules" / "rules.clp", kFactRules);
  write_file(tmp.path() / "rules" / "effects.toml", kEffects);
  write_file(tmp.path() / "rules" / "sub" / "paths.toml", kClassesToml);
  const std::string dir = (tmp.path() / "rules").string();
  LoadedPolicy first = load_policy({dir});
  for (const auto& d : first.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(first.policy);
  CHECK(first.files == 3);
  {
    Engine engine(first.policy, test_options());
    Decision d = decide_ok(engine, shell_line("cat ~/.ssh/id_rsa"));
    const EffectRecord* e = find(d, "read", "/home/user/.ssh/id_rsa");
    REQUIRE(e);
    CHECK(e->path_class == "credential");
  }
  write_file(
      tmp.path() / "rules" / "sub" / "paths.toml",
      std::string(kClassesToml) + "\n[[class]]\nname = \"system\"\npatterns = [\"/etc/**\"]\n");
  LoadedPolicy second = load_policy({dir});
  REQUIRE(second.policy);
  CHECK(second.policy->digest() != first.policy->digest());
  write_file(tmp.path() / "rules" / "effects.toml",
             std::string(kEffects) + "\n[program.ls]\noperands = [\"read...\"]\n");
  LoadedPolicy third = load_policy({dir});
  REQUIRE(third.policy);
  CHECK(third.policy->digest() != second.policy->digest());

  // A broken table in the directory refuses the whole set, naming the file and line.
  write_file(tmp.path() / "rules" / "sub" / "paths.toml",
             "[[class]]\nname = \"ok\"\npatterns = [\"/a\"]\nexcept = [\"b\"]\n");
  LoadedPolicy broken = load_policy({dir});
  CHECK_FALSE(broken.policy);
  REQUIRE_FALSE(broken.diagnostics.empty());
  CHECK(broken.diagnostics[0].code == code::kPathClasses);
  CHECK(broken.diagnostics[0].line == 4);
  CHECK(broken.diagnostics[0].to_text().find("paths.toml:4:") != std::string::npos);
}

TEST_CASE("effect facts: rules on effect facts without an effects table are refused at their line",
          "[effect-facts]") {
  // Without a table no effect is derived: "approve when no effect is harmful" would approve
  // every command. The set is refused, naming the first rule that matches effect facts.
  const std::string rules = R"((defrule plain
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule plain))))
(defrule everyday
  (proposal (id ?id) (target shell))
  (not (effect (proposal ?id) (kind exec|delete)))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule everyday))))
)";
  auto without = Policy::compile({{"paths.toml", kClassesToml}, {"rules.clp", rules}});
  CHECK_FALSE(without.policy);
  REQUIRE(without.diagnostics.size() == 1);
  CHECK(without.diagnostics[0].code == code::kEffectsTable);
  CHECK(without.diagnostics[0].file == "rules.clp");
  CHECK(without.diagnostics[0].line == 5);
  CHECK(without.diagnostics[0].rule == "everyday");
  // With a table, or without any rule on effect facts, the set loads.
  CHECK(Policy::compile({{"effects.toml", kEffects}, {"rules.clp", rules}}).policy);
  CHECK(Policy::compile({{"rules.clp", kPlainRules}}).policy);
}

TEST_CASE("effect facts: effects count against the fact cap", "[effect-facts]") {
  const std::string line = shell_line("cat a b c d e f g h");
  auto without = compile_ok({{"rules.clp", kPlainRules}});
  auto with = full_policy();
  // The smallest cap the line fits under without effect facts.
  std::size_t cap = 0;
  for (std::size_t n = 1; n < 200 && cap == 0; ++n) {
    EngineOptions o = test_options();
    o.max_facts = n;
    Engine engine(without, o);
    if (decide_ok(engine, line).error_code.empty()) cap = n;
  }
  REQUIRE(cap > 0);
  EngineOptions o = test_options();
  o.max_facts = cap;
  Engine capped(with, o);
  Decision d = decide_ok(capped, line);
  CHECK(d.error_code == code::kInputTooLarge);
  CHECK(d.outcome == Outcome::Reject);
  o.max_facts = cap + 8;  // one read effect per operand
  Engine enough(with, o);
  Decision ok = decide_ok(enough, line);
  CHECK(ok.error_code.empty());
  CHECK(ok.effects.size() == 8);
  o.max_facts = cap + 7;
  Engine one_short(with, o);
  CHECK(decide_ok(one_short, line).error_code == code::kInputTooLarge);
}

TEST_CASE("effect facts: history entries become history facts with their age",
          "[effect-facts][history]") {
  EngineOptions o = test_options();
  o.clock = [] { return std::int64_t{1000}; };
  Engine engine(compile_ok({{"rules.clp", R"((defrule after-credential-read
  (proposal (id ?id))
  (history (proposal ?id) (kind read) (class credential) (age ?a&:(< ?a 600)) (decision ?d))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule after-credential-read) (reason ?d))))
)"}}),
                o);
  std::vector<HistoryEntry> history(2);
  history[0].decision_id = "d1";
  history[0].time = 900;
  history[0].effect = {"read", "path", "/home/user/.ssh/id_rsa", "cat", "credential", false, "",
                       "",     false};
  history[1].decision_id = "d2";
  history[1].time = 100;  // too old for the rule
  history[1].effect = {
      "read", "path", "/home/user/.aws/credentials", "cat", "credential", false, "", "", false};
  DecideRequest request;
  request.proposal_json = R"({"target":"http","payload":{"url":"https://example.com"}})";
  request.history = &history;
  request.explain = true;
  Decision d = decide_ok(engine, request);
  CHECK(fired(d, "after-credential-read"));
  CHECK(d.reason == "d1");
  CHECK(has_fact(d, "(history (proposal "));
  CHECK(has_fact(d, "(age 100) (kind read) (object path) (target \\\"/home/user/.ssh/id_rsa\\\")"));
  CHECK(has_fact(d, "(age 900)"));
  request.history = nullptr;
  Decision none = decide_ok(engine, request);
  CHECK_FALSE(fired(none, "after-credential-read"));
}

TEST_CASE("cases: expect_effects and not_effects match derived effects by the fields given",
          "[effect-facts][cases]") {
  auto policy = full_policy();
  Diagnostics diagnostics;
  auto cases = read_cases(
      "effects_cases.jsonl",
      R"({"name":"sort -o","proposal":{"target":"shell","payload":{"command":"sort -o ~/.ssh/id_rsa x"}},"expect":"reject","expect_effects":[{"kind":"write","target":"/home/user/.ssh/id_rsa","object":"path","class":"credential"},{"kind":"read","in_workspace":true,"via":"operand","program":"sort"}],"not_effects":[{"kind":"delete"}]}
{"name":"missing","proposal":{"target":"shell","payload":{"command":"cat x"}},"expect":"approve","expect_effects":[{"kind":"write"}]}
{"name":"forbidden","proposal":{"target":"shell","payload":{"command":"cat x"}},"expect":"approve","not_effects":[{"kind":"read","target":"/home/user/project/x"}]}
)",
      &diagnostics);
  for (const auto& d : diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(diagnostics.empty());
  REQUIRE(cases.size() == 3);
  CaseReport report = run_cases(policy, cases, test_options());
  REQUIRE(report.results.size() == 3);
  INFO(report.results[0].failure);
  CHECK(report.results[0].passed);
  CHECK_FALSE(report.results[1].passed);
  CHECK(report.results[1].failure.find("- effect {kind=write} should be derived") !=
        std::string::npos);
  CHECK(report.results[1].failure.find("read path \"/home/user/project/x\"") != std::string::npos);
  CHECK_FALSE(report.results[2].passed);
  CHECK(report.results[2].failure.find("should not be derived") != std::string::npos);
}

TEST_CASE("cases: malformed effect expectations are E_CASE errors with their line",
          "[effect-facts][cases]") {
  const char* bad[] = {
      R"({"name":"a","proposal":{"target":"reply"},"expect":"approve","expect_effects":[{"kind":"write","colour":"red"}]})",
      R"({"name":"b","proposal":{"target":"reply"},"expect":"approve","not_effects":[{"kind":"wrte"}]})",
      R"({"name":"c","proposal":{"target":"reply"},"expect":"approve","expect_effects":{"kind":"write"}})",
      R"({"name":"d","proposal":{"target":"reply"},"expect":"approve","expect_effects":[{"in_workspace":"yes"}]})",
      R"({"name":"e","proposal":{"target":"reply"},"expect":"approve","not_effects":[{"object":"file"}]})",
      R"({"name":"f","proposal":{"target":"reply"},"expect":"approve","not_effects":[{"class":"Credential"}]})",
  };
  std::string text = "# effect expectations\n";
  for (const char* b : bad) text += std::string(b) + "\n";
  Diagnostics diagnostics;
  auto cases = read_cases("bad.jsonl", text, &diagnostics);
  CHECK(cases.empty());
  REQUIRE(diagnostics.size() == 6);
  for (std::size_t i = 0; i < diagnostics.size(); ++i) {
    INFO(diagnostics[i].to_text());
    CHECK(diagnostics[i].code == code::kCase);
    CHECK(diagnostics[i].line == static_cast<long>(i) + 2);
  }
  CHECK(diagnostics[0].message.find("unknown effect field \"colour\"") != std::string::npos);
  CHECK(diagnostics[1].message.find("unknown effect kind \"wrte\"") != std::string::npos);
}
