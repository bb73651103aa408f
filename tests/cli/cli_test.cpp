// The rule author's commands, run as real child processes: exit codes (SPEC §1), the
// file:line diagnostics, JSON lines with an error object per bad line, and `warden test`.
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/build_paths.h"
#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using warden::testing::TempDir;

namespace {

struct CliRun {
  int code;
  std::string out;
};

// Runs `warden ARGS` with stdin from `input`, capturing stdout.
CliRun run_cli(const std::string& args, const std::string& input = "") {
  warden::cli::testing::require_binary();
  static int counter = 0;
  fs::path in = fs::temp_directory_path() /
                ("warden-cli-in-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::ofstream(in) << input;
  std::string cmd =
      std::string(WARDEN_BINARY_DIR) + "/cli/warden " + args + " < " + in.string() + " 2>/dev/null";
  CliRun r{-1, ""};
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  fs::remove(in);
  return r;
}

const char* kCliRules = R"(
(defrule no-rm (shell-command (proposal ?id) (program "rm") (flags $? "-r" $?))
  => (assert (decision (proposal ?id) (outcome reject) (rule no-rm) (reason "recursive rm"))))
(defrule ls-ok (shell-command (proposal ?id) (program "ls"))
  => (assert (decision (proposal ?id) (outcome approve) (rule ls-ok) (reason "listing"))))
(defrule unused (proposal (id ?id) (target system))
  => (assert (decision (proposal ?id) (outcome reject) (rule unused))))
)";

}  // namespace

TEST_CASE("check: clean rules exit 0 and report the digest", "[cli]") {
  TempDir dir{"warden-cli"};
  dir.write("a.clp", kCliRules);
  CliRun r = run_cli("check " + dir.path().string());
  CHECK(r.code == 0);
  CHECK(r.out.find("ok: 3 rules") != std::string::npos);
  CHECK(r.out.find("sha256:") != std::string::npos);
}

TEST_CASE("check: every error printed as file:line: error CODE, exit 2", "[cli]") {
  TempDir dir{"warden-cli"};
  std::string a = dir.write("a.clp", "(defrule a (proposal (id ?id))\n  =>\n  (system \"id\"))\n");
  std::string b = dir.write("b.clp", "\n(deftemplate mine (slot x))\n");
  CliRun r = run_cli("check " + dir.path().string());
  CHECK(r.code == 2);
  CHECK(r.out.find(a + ":3: error E_FORBIDDEN_FUNCTION") != std::string::npos);
  CHECK(r.out.find(b + ":2: error E_FORBIDDEN_CONSTRUCT") != std::string::npos);
  CliRun j = run_cli("check --format json " + dir.path().string());
  CHECK(j.code == 2);
  CHECK(j.out.find("\"ok\":false") != std::string::npos);
  CHECK(j.out.find("\"code\":\"E_FORBIDDEN_FUNCTION\"") != std::string::npos);
  CHECK(j.out.find("\"line\":3") != std::string::npos);
}

TEST_CASE("check: a dead rule is a warning at its line (exit 0, --strict 1); JSON gives the column",
          "[cli]") {
  TempDir dir{"warden-cli"};
  std::string a =
      dir.write("a.clp",
                "(defrule shell-only\n  (proposal (id ?id)\n            (target shel))\n  =>\n"
                "  (assert (decision (proposal ?id) (outcome reject) (rule shell-only))))\n");
  CliRun r = run_cli("check " + dir.path().string());
  CHECK(r.code == 0);
  CHECK(
      r.out.find(
          a + ":3: warning E_DEAD_PATTERN: in rule 'shell-only': no proposal has target `shel`") !=
      std::string::npos);
  CHECK(r.out.find("did you mean `shell`?") != std::string::npos);
  CHECK(run_cli("check --strict " + dir.path().string()).code == 1);
  CliRun j = run_cli("check --format json " + dir.path().string());
  CHECK(j.out.find(R"("code":"E_DEAD_PATTERN","severity":"warning",)") != std::string::npos);
  CHECK(j.out.find(R"("line":3,"column":21,)") != std::string::npos);
}

TEST_CASE("check: the summary of rules that do not load counts errors and warnings apart",
          "[cli]") {
  TempDir dir{"warden-cli"};
  dir.write("a.clp",
            "(defrule r1\n  (proposal (id ?id) (target shel))\n  =>\n"
            "  (assert (decision (proposal ?id) (outcome rejct) (rule r1) (reason \"x\"))))\n");
  CliRun r = run_cli("check " + dir.path().string());
  CHECK(r.code == 2);
  CHECK(r.out.find(":2: warning E_DEAD_PATTERN") != std::string::npos);
  CHECK(r.out.find(":4: error E_UNKNOWN_OUTCOME") != std::string::npos);
  CHECK(r.out.find("\n1 error(s), 1 warning(s); nothing loaded\n") != std::string::npos);
}

TEST_CASE("check: a value outside a slot group is E_PARSE at it, in a pattern and in an assert",
          "[cli]") {
  TempDir dir{"warden-cli"};
  dir.write("a.clp", "(defrule r1\n  (proposal shell)\n  =>\n  (assert (decision reject)))\n");
  CliRun r = run_cli("check " + dir.path().string());
  CHECK(r.code == 2);
  CHECK(
      r.out.find(
          ":2: error E_PARSE: in rule 'r1': a pattern on `proposal` names each slot, as in `(proposal (") !=
      std::string::npos);
  CHECK(r.out.find(":4: error E_PARSE: in rule 'r1': an asserted `decision` names each slot") !=
        std::string::npos);
}

TEST_CASE("check: a missing path is E_READ", "[cli]") {
  CliRun r = run_cli("check /nonexistent/rules");
  CHECK(r.code == 2);
  CHECK(r.out.find("E_READ") != std::string::npos);
}

TEST_CASE("dry-run: exit code follows the outcome of a single proposal", "[cli]") {
  TempDir dir{"warden-cli"};
  std::string rules = dir.write("a.clp", kCliRules);
  CliRun reject = run_cli("dry-run --rules " + rules + " -",
                          R"({"target":"shell","payload":{"command":"sudo rm -rf /"}})");
  CHECK(reject.code == 1);
  CHECK(reject.out.find("\"outcome\":\"reject\"") != std::string::npos);
  CHECK(reject.out.find("\"rule\":\"no-rm\"") != std::string::npos);
  CliRun approve =
      run_cli("dry-run --rules " + rules, R"({"target":"shell","payload":{"command":"ls -la"}})");
  CHECK(approve.code == 0);
  CliRun ask =
      run_cli("dry-run --rules " + rules, R"({"target":"message","payload":{"text":"hi"}})");
  CHECK(ask.code == 3);
  CHECK(ask.out.find("\"outcome\":\"approval-required\"") != std::string::npos);
  // A single proposal may span several lines.
  CliRun multi = run_cli("dry-run --rules " + rules,
                         "{\n  \"target\": \"shell\",\n  \"payload\": {\"command\": \"ls\"}\n}\n");
  CHECK(multi.code == 0);
}

TEST_CASE("dry-run: JSON lines, one decision per line, an error object for a bad line", "[cli]") {
  TempDir dir{"warden-cli"};
  std::string rules = dir.write("a.clp", kCliRules);
  std::string input =
      "{\"target\":\"shell\",\"payload\":{\"command\":\"ls\"}}\n"
      "not json at all\n"
      "{\"target\":\"shell\",\"payload\":{\"command\":\"rm -r x\"}}\n"
      "{\"target\":\"she ll\"}\n";
  CliRun r = run_cli("dry-run --rules " + rules + " -", input);
  CHECK(r.code == 2);
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < r.out.size()) {
    std::size_t end = r.out.find('\n', pos);
    lines.push_back(r.out.substr(pos, end - pos));
    pos = end + 1;
  }
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].find("\"outcome\":\"approve\"") != std::string::npos);
  CHECK(lines[1].find("{\"line\":2,\"error\":{\"code\":\"E_INPUT_JSON\"") == 0);
  CHECK(lines[2].find("\"outcome\":\"reject\"") != std::string::npos);
  CHECK(lines[3].find("\"code\":\"E_INPUT_SHAPE\"") != std::string::npos);
}

TEST_CASE("dry-run: --explain shows the parsed shell command", "[cli]") {
  TempDir dir{"warden-cli"};
  std::string rules = dir.write("a.clp", kCliRules);
  CliRun r = run_cli("dry-run --explain --rules " + rules,
                     R"({"target":"shell","payload":{"command":"bash -c 'rm -fr /'"}})");
  CHECK(r.code == 1);
  CHECK(r.out.find("shell-command") != std::string::npos);
  CHECK(r.out.find("\\\"-r\\\"") != std::string::npos);
}

TEST_CASE(
    "dry-run --explain shows effect facts from the directory's tables; check refuses a bad table at its line",
    "[cli][effect-facts]") {
  TempDir dir{"warden-cli"};
  dir.write("a.clp", kCliRules);
  dir.write(
      "effects.toml",
      "[program.sort]\noperands = [\"read...\"]\n[program.sort.options]\n\"-o\" = \"write\"\n");
  dir.write("paths.toml", "[[class]]\nname = \"credential\"\npatterns = [\"~/.ssh/id_*\"]\n");
  CliRun r =
      run_cli("dry-run --explain --rules " + dir.path().string(),
              R"({"target":"shell","payload":{"command":"sort -o ~/.ssh/id_rsa notes.txt"}})");
  INFO(r.out);
  CHECK(r.out.find("(effect (proposal") != std::string::npos);
  CHECK(r.out.find("(kind write) (object path) (target \\\"/home/user/.ssh/id_rsa\\\")") !=
        std::string::npos);
  CHECK(r.out.find("(via \\\"-o\\\") (class credential)") != std::string::npos);
  CHECK(r.out.find("(kind read) (object path) (target \\\"/home/user/project/notes.txt\\\")") !=
        std::string::npos);

  std::string bad =
      dir.write("paths.toml", "[[class]]\nname = \"credential\"\npatterns = [\"id_*\"]\n");
  CliRun check = run_cli("check " + dir.path().string());
  CHECK(check.code == 2);
  CHECK(check.out.find(bad + ":3: error E_PATH_CLASSES") != std::string::npos);
}

TEST_CASE("dry-run --explain --format text lists the facts, effects included, one per line",
          "[cli][effect-facts]") {
  TempDir dir{"warden-cli"};
  dir.write("a.clp", kCliRules);
  dir.write(
      "effects.toml",
      "[program.sort]\noperands = [\"read...\"]\n[program.sort.options]\n\"-o\" = \"write\"\n");
  CliRun r = run_cli("dry-run --explain --format text --rules " + dir.path().string(),
                     R"({"target":"shell","payload":{"command":"sort -o out.txt in.txt"}})");
  INFO(r.out);
  CHECK(r.out.find("\n  facts:\n") != std::string::npos);
  CHECK(r.out.find("(effect (proposal \"p") != std::string::npos);
  CHECK(r.out.find("(kind write) (object path) (target \"/home/user/project/out.txt\")") !=
        std::string::npos);
  // Without --explain the text output has no facts.
  CliRun plain = run_cli("dry-run --format text --rules " + dir.path().string(),
                         R"({"target":"shell","payload":{"command":"sort -o out.txt in.txt"}})");
  CHECK(plain.out.find("facts:") == std::string::npos);
}

TEST_CASE("dry-run: broken rules are a usage error (2), a missing input file too", "[cli]") {
  TempDir dir{"warden-cli"};
  std::string rules = dir.write("a.clp", "(defrule x");
  CHECK(run_cli("dry-run --rules " + rules, R"({"target":"reply"})").code == 2);
  std::string good = dir.write("b.clp", kCliRules);
  CHECK(run_cli("dry-run --rules " + good + " /nonexistent.json").code == 2);
  CHECK(run_cli("dry-run --rules " + good, "").code == 2);
}

TEST_CASE("test: passing cases, failing case diff, coverage and the closing line", "[cli]") {
  TempDir dir{"warden-cli"};
  dir.write("a.clp", kCliRules);
  dir.write(
      "a.jsonl",
      R"({"name":"rm is rejected","proposal":{"target":"shell","payload":{"command":"rm -rf /"}},"expect":"reject","rule":"no-rm"})"
      "\n"
      R"({"name":"ls is fine","proposal":{"target":"shell","payload":{"command":"ls"}},"expect":"approve","not_rule":"no-rm"})"
      "\n");
  CliRun ok = run_cli("test " + dir.path().string());
  CHECK(ok.code == 0);
  CHECK(ok.out.find("2 passed, 0 failed") != std::string::npos);
  CHECK(ok.out.find("not covered: unused") != std::string::npos);
  // --fail-uncovered: the same passing cases fail the run, because rule `unused` fired in none.
  CliRun strict = run_cli("test --fail-uncovered " + dir.path().string());
  CHECK(strict.code == 1);
  CHECK(strict.out.find("2 passed, 0 failed") != std::string::npos);
  CHECK(strict.out.find("--fail-uncovered: 1 rule(s) fired in no case") != std::string::npos);
  CHECK(run_cli("test --fail-uncovered --format json " + dir.path().string()).code == 1);

  dir.write(
      "b.json",
      R"([{"name":"wrong expectation","proposal":{"target":"shell","payload":{"command":"ls"}},"expect":"reject","rule":"no-rm"}])");
  CliRun bad = run_cli("test " + dir.path().string());
  CHECK(bad.code == 1);
  CHECK(bad.out.find("FAIL wrong expectation") != std::string::npos);
  CHECK(bad.out.find("- expect: reject") != std::string::npos);
  CHECK(bad.out.find("+ actual: approve") != std::string::npos);
  CHECK(bad.out.find("- rule no-rm should fire") != std::string::npos);
  CHECK(bad.out.find("2 passed, 1 failed") != std::string::npos);
  CliRun json = run_cli("test --format json " + dir.path().string());
  CHECK(json.out.find("\"failed\":1") != std::string::npos);
  CHECK(json.out.find("\"uncovered_rules\":[\"unused\"]") != std::string::npos);
}

TEST_CASE("--help works for every rule command", "[cli]") {
  for (const char* sub : {"check", "dry-run", "test"}) {
    CliRun r = run_cli(std::string(sub) + " --help");
    INFO(sub);
    CHECK(r.code == 0);
    CHECK(r.out.find("Usage") != std::string::npos);
  }
  CHECK(run_cli("no-such-command").code == 2);
}

TEST_CASE("--version and version print Warden's, CLIPS's and the protocol's versions",
          "[cli][version]") {
  using warden::cli::testing::run_warden;
  for (const char* arg : {"--version", "version"}) {
    INFO(arg);
    auto r = run_warden({arg});
    CHECK(r.code == 0);
    CHECK(r.out.rfind("warden ", 0) == 0);
    CHECK(r.out.find("\nCLIPS 6.3") != std::string::npos);
    CHECK(r.out.find("\nprotocol 1\n") != std::string::npos);
  }
  auto json = run_warden({"version", "--format", "json"});
  CHECK(json.code == 0);
  CHECK(json.out.find("\"clips\":\"6.3") != std::string::npos);
  CHECK(json.out.find("\"protocol\":\"1\"") != std::string::npos);
}

TEST_CASE("default_outcome approve: a loud warning on stderr, exit 0 unless --strict",
          "[cli][default-outcome]") {
  using warden::cli::testing::run_warden;
  TempDir dir{"warden-cli"};
  std::string rules = dir.write("a.clp", kCliRules);
  const std::string kWarning = "WARNING: default_outcome is \"approve\"";

  auto plain = run_warden({"check", rules});
  CHECK(plain.code == 0);
  CHECK(plain.err.find(kWarning) == std::string::npos);

  auto flag = run_warden({"check", "--default-outcome", "approve", rules});
  CHECK(flag.code == 0);  // a warning, not an error
  CHECK(flag.err.find(kWarning) != std::string::npos);
  CHECK(flag.out.find(kWarning) == std::string::npos);  // stdout stays machine-readable
  CHECK(run_warden({"check", "--default-outcome", "approve", "--strict", rules}).code == 1);
  CHECK(run_warden({"check", "--default-outcome", "reject", "--strict", rules}).code == 0);

  std::string config = dir.write("warden.toml", "default_outcome = \"approve\"\n");
  auto from_config = run_warden({"check", "--config", config, rules});
  CHECK(from_config.code == 0);
  CHECK(from_config.err.find(kWarning) != std::string::npos);
  // The flag overrides the file.
  auto overridden =
      run_warden({"check", "--config", config, "--default-outcome", "reject", "--strict", rules});
  CHECK(overridden.code == 0);
  CHECK(overridden.err.find(kWarning) == std::string::npos);
  std::string broken = dir.write("broken.toml", "default_outcome = \"maybe\"\n");
  CHECK(run_warden({"check", "--config", broken, rules}).code == 2);

  auto dry = run_warden({"dry-run", "--default-outcome", "approve", "--rules", rules, "-"},
                        R"({"target":"message","payload":{"text":"hi"}})");
  CHECK(dry.code == 0);
  CHECK(dry.err.find(kWarning) != std::string::npos);
  dir.write(
      "a.jsonl",
      R"({"name":"ls","proposal":{"target":"shell","payload":{"command":"ls"}},"expect":"approve"})"
      "\n");
  auto test = run_warden({"test", "--default-outcome", "approve", dir.path().string()});
  CHECK(test.err.find(kWarning) != std::string::npos);
}

TEST_CASE("dry-run --principal and --group decide as that principal, not as the proposal says",
          "[cli][principal]") {
  using warden::cli::testing::run_warden;
  TempDir dir{"warden-cli"};
  std::string rules = dir.write("groups.clp", R"(
(defrule admins-may (proposal (id ?id) (target shell) (principal "alice") (groups $? "admins" $?))
  => (assert (decision (proposal ?id) (outcome approve) (rule admins-may) (reason "admin"))))
(defrule others-not (proposal (id ?id) (target shell) (groups $?g))
  (test (not (member$ "admins" ?g)))
  => (assert (decision (proposal ?id) (outcome reject) (rule others-not) (reason "not an admin"))))
)");
  const std::string proposal =
      R"({"target":"shell","payload":{"command":"ls"},"context":{"principal":"alice","groups":["admins"]}})";
  auto as_alice = run_warden({"dry-run", "--rules", rules, "--principal", "alice", "--group", "dev",
                              "--group", "admins", "-"},
                             proposal);
  CHECK(as_alice.code == 0);
  CHECK(as_alice.out.find("\"rule\":\"admins-may\"") != std::string::npos);
  // Groups written in the proposal's context grant nothing.
  auto claimed = run_warden({"dry-run", "--rules", rules, "-"}, proposal);
  CHECK(claimed.code == 1);
  auto as_bob = run_warden(
      {"dry-run", "--rules", rules, "--principal", "bob", "--group", "admins", "-"}, proposal);
  CHECK(as_bob.out.find("\"rule\":\"admins-may\"") == std::string::npos);
  CHECK(run_warden({"dry-run", "--rules", rules, "--group", "admins", "-"}, proposal).code == 2);
}

// SPEC §1: a rule file that does not load is an input error, exit 2, in every command that
// reads rules; 1 is a reject, a failed test or a --strict check's warnings, never broken rules.
TEST_CASE("a rule error exits 2 in check, test, dry-run and replay alike", "[cli][exit-codes]") {
  using warden::cli::testing::run_warden;
  TempDir dir{"warden-cli"};
  const std::string bad =
      dir.write("bad.clp", "(defrule x (proposal (id ?id))\n  =>\n  (system \"id\"))\n");
  dir.write(
      "cases.jsonl",
      R"({"name":"ls","proposal":{"target":"shell","payload":{"command":"ls"}},"expect":"approve"})"
      "\n");
  const std::string log = dir.write("audit.jsonl", "");
  const std::string where = bad + ":3: error E_FORBIDDEN_FUNCTION";

  auto check = run_warden({"check", dir.path().string()});
  CHECK(check.code == 2);
  CHECK(check.out.find(where) != std::string::npos);
  auto test = run_warden({"test", dir.path().string()});
  CHECK(test.code == 2);
  CHECK(test.err.find(where) != std::string::npos);
  auto dry =
      run_warden({"dry-run", "--format", "text", "--rules", bad, "-"}, R"({"target":"reply"})");
  CHECK(dry.code == 2);
  CHECK(dry.err.find(where) != std::string::npos);
  auto replay = run_warden({"replay", log, "--rules", bad, "--fail-on-widening"});
  CHECK(replay.code == 2);
  CHECK(replay.err.find(where) != std::string::npos);
  CHECK(replay.err.find("warden: replay: the rules do not compile") != std::string::npos);
}

TEST_CASE("dry-run text output names each decision's input line", "[cli][exit-codes]") {
  using warden::cli::testing::run_warden;
  TempDir dir{"warden-cli"};
  std::string rules = dir.write("a.clp", kCliRules);
  const std::string input =
      "{\"target\":\"shell\",\"payload\":{\"command\":\"ls\"}}\n"
      "\n"
      "not json\n"
      "{\"target\":\"shell\",\"payload\":{\"command\":\"rm -r x\"}}\n";
  auto r = run_warden({"dry-run", "--format", "text", "--rules", rules, "-"}, input);
  CHECK(r.code == 2);
  CHECK(r.out ==
        "line 1: approve  listing\n"
        "  ls-ok: approve (listing)\n"
        "line 3: error E_INPUT_JSON: invalid JSON at byte 1: Invalid value.\n"
        "line 4: reject  recursive rm\n"
        "  no-rm: reject (recursive rm)\n");
}

// Client usage errors (what the command line got wrong) exit 2 in every client command;
// an unreachable daemon stays 4.
TEST_CASE("client commands: a bad address, pin, TLS flag or token file is a usage error (2)",
          "[cli][exit-codes]") {
  using warden::cli::testing::run_warden;
  TempDir dir{"warden-cli"};
  const std::string proposal = "{\"target\":\"reply\",\"payload\":{\"text\":\"hi\"}}\n";
  struct Bad {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::vector<Bad> bad{
      {{"--addr", "no-port-here"},
       "warden: the daemon address must be HOST:PORT or unix:PATH, not 'no-port-here'\n"},
      {{"--addr", "unix:"}, "warden: the address unix: names no socket path\n"},
      {{"--addr", "127.0.0.1:1", "--pin", "sha256:00"},
       "warden: --pin must be sha256: followed by 64 hex digits\n"},
      {{"--unix", dir.path().string() + "/sock", "--tls"},
       "warden: --tls, --ca and --pin apply to TCP addresses, not unix:\n"},
      {{"--addr", "127.0.0.1:1", "--token-file", dir.path().string() + "/missing"},
       "warden: cannot read the token file " + dir.path().string() + "/missing\n"},
  };
  const std::vector<std::vector<std::string>> commands{
      {"decide"},
      {"status"},
      {"pending"},
      {"submit", "hello"},
      {"approve", "apr_0123456789abcdef01234567", "--digest", "sha256:" + std::string(64, 'a')},
      {"deny", "apr_0123456789abcdef01234567"}};
  for (const auto& command : commands) {
    for (const auto& b : bad) {
      std::vector<std::string> args = command;
      args.insert(args.end(), b.flags.begin(), b.flags.end());
      INFO(args[0] << " " << b.flags[0] << " " << b.flags[1]);
      auto r = run_warden(args, proposal);
      CHECK(r.code == 2);
      CHECK(r.err == b.message);
      CHECK(r.out.empty());
    }
    // Nothing listens there: operational, 4.
    std::vector<std::string> args = command;
    args.insert(args.end(), {"--unix", dir.path().string() + "/no-daemon.sock"});
    INFO(args[0] << " unreachable");
    auto down = run_warden(args, proposal);
    CHECK(down.code == 4);
    CHECK(down.err.find("cannot connect to unix:" + dir.path().string() + "/no-daemon.sock") !=
          std::string::npos);
  }
}

// ---- rule overlays ----------------------------------------------------------

TEST_CASE("check prints the effective pack: a line per rule an overlay changes", "[cli][overlay]") {
  TempDir pack{"warden-cli"}, team{"warden-cli"};
  pack.write("a.clp", kCliRules);
  const std::string overlay = team.write(
      "overlay.toml", "# team\n[[rule]]\nname = \"no-rm\"\noutcome = \"approval-required\"\n");
  CliRun r = run_cli("check " + pack.path().string() + " " + team.path().string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("overlay: 1 rule(s) changed\n  no-rm: reject \u2192 approval-required (" +
                   overlay + ":3)\n") != std::string::npos);
  CliRun json = run_cli("check --format json " + pack.path().string() + " " + team.path().string());
  CHECK(json.out.find(R"("overlay":[{"rule":"no-rm","at":")" + overlay +
                      R"(:3","declared":"reject","outcome":"approval-required"}])") !=
        std::string::npos);
  // The decision names the rule and the entry that changed it.
  CliRun d = run_cli(
      "dry-run --format text --rules " + pack.path().string() + " --rules " + team.path().string(),
      R"({"target":"shell","payload":{"command":"rm -r x"}})");
  INFO(d.out);
  CHECK(d.code == 3);
  CHECK(d.out.find("no-rm: approval-required (overlay " + overlay +
                   ":3; was reject) (recursive rm)") != std::string::npos);
}

TEST_CASE("check: an overlay entry naming no rule warns, and fails under --strict",
          "[cli][overlay]") {
  TempDir pack{"warden-cli"}, team{"warden-cli"};
  pack.write("a.clp", kCliRules);
  const std::string overlay =
      team.write("overlay.toml", "[[rule]]\nname = \"no-rmdir\"\ndisable = true\n");
  CliRun r = run_cli("check " + pack.path().string() + " " + team.path().string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find(overlay + ":2: warning E_OVERLAY_RULE: no loaded rule is named \"no-rmdir\"") !=
        std::string::npos);
  CHECK(run_cli("check --strict " + pack.path().string() + " " + team.path().string()).code == 1);
}

TEST_CASE("a malformed overlay means the rules do not load, in every command", "[cli][overlay]") {
  TempDir pack{"warden-cli"}, team{"warden-cli"};
  pack.write("a.clp", kCliRules);
  const std::string overlay =
      team.write("overlay.toml", "[[rule]]\nname = \"no-rm\"\noutcome = \"allow\"\n");
  CliRun r = run_cli("check " + pack.path().string() + " " + team.path().string());
  INFO(r.out);
  CHECK(r.code == 2);  // rules that do not load: exit 2, in check as everywhere
  CHECK(r.out.find(overlay + ":3: error E_OVERLAY: \"outcome\" must be") != std::string::npos);
  CHECK(r.out.find("nothing loaded") != std::string::npos);
  CliRun d = run_cli("dry-run --rules " + pack.path().string() + " --rules " + team.path().string(),
                     R"({"target":"shell","payload":{"command":"ls"}})");
  CHECK(d.code == 2);
  CHECK(d.out.empty());
  CHECK(run_cli("test --rules " + pack.path().string() + " " + team.path().string()).code == 2);
}

TEST_CASE("test --rules runs the cases of PATHS against the pack and PATHS together",
          "[cli][overlay]") {
  TempDir pack{"warden-cli"}, team{"warden-cli"};
  pack.write("a.clp", kCliRules);
  // The pack's own case expects the pack as shipped: not run with --rules.
  pack.write(
      "a.jsonl",
      R"({"name":"rm -r rejected","proposal":{"target":"shell","payload":{"command":"rm -r x"}},"expect":"reject","rule":"no-rm"})"
      "\n");
  team.write("overlay.toml", "[[rule]]\nname = \"no-rm\"\noutcome = \"approval-required\"\n");
  team.write("team.clp", R"(
(defrule team-no-rm-root (shell-command (proposal ?id) (program "rm") (args $? "/" $?))
  => (assert (decision (proposal ?id) (outcome reject) (rule team-no-rm-root) (reason "root"))))
)");
  team.write(
      "team.jsonl",
      R"({"name":"rm -r asks","proposal":{"target":"shell","payload":{"command":"rm -r x"}},"expect":"approval-required","rule":"no-rm"})"
      "\n"
      R"({"name":"rm / rejected","proposal":{"target":"shell","payload":{"command":"rm -r /"}},"expect":"reject","rule":"team-no-rm-root"})"
      "\n");
  CliRun r = run_cli("test --rules " + pack.path().string() + " " + team.path().string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("2 passed, 0 failed") != std::string::npos);
  CHECK(r.out.find("coverage: 1 of 1 rules fired by some case") != std::string::npos);
  // Without the pack's cases left out, its case fails against the effective pack.
  CliRun both = run_cli("test " + pack.path().string() + " " + team.path().string());
  CHECK(both.code == 1);
  CHECK(both.out.find("FAIL rm -r rejected") != std::string::npos);
}

TEST_CASE("examples/team-overlay: the team's cases pass against the shipped pack",
          "[cli][overlay]") {
  const std::string src = WARDEN_SOURCE_DIR;
  CliRun check = run_cli("check --strict " + src + "/rules " + src + "/examples/team-overlay");
  INFO(check.out);
  CHECK(check.code == 0);
  CHECK(check.out.find("egress-shell-git-push: approval-required \u2192 approve") !=
        std::string::npos);
  CliRun r = run_cli("test --rules " + src + "/rules " + src + "/examples/team-overlay");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find(" 0 failed") != std::string::npos);
}
