// Data files in the rule author's commands: `warden check` reports a bad data file as
// `file:line: error CODE` (exit 2) and lists the sets of a good one; `warden test` decides its
// cases with the data beside the rules, never reads a *.data.json as cases, and follows an
// edit of the data; `dry-run` reads the data of its --rules paths.
#include <catch2/catch.hpp>
#include <string>

#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

using warden::cli::testing::run_warden;
using warden::testing::TempDir;

namespace {

// Approves an npm install of a package on the list "npm-packages"; asks for any other.
const char* kDataRules = R"CLP(
(defrule listed-install
  (shell-command (proposal ?id) (program "npm") (args "install" ?p&:(data-member "npm-packages" ?p)))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule listed-install)
                    (reason (str-cat ?p ", kept by " (data-value "owners" ?p))))))
(defrule unlisted-install
  (shell-command (proposal ?id) (program "npm") (args "install" ?p&:(not (data-member "npm-packages" ?p))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule unlisted-install) (reason ?p))))
)CLP";

const char* kData = "npm-packages = [\"left-pad\"]\n\n[owners]\n\"left-pad\" = \"web\"\n";

const char* kCases =
    R"({"name": "listed", "proposal": {"target": "shell", "payload": {"command": "npm install left-pad"}}, "expect": "approve", "rule": "listed-install"})"
    "\n"
    R"({"name": "unlisted", "proposal": {"target": "shell", "payload": {"command": "npm install lodash"}}, "expect": "approval-required", "rule": "unlisted-install"})"
    "\n";

}  // namespace

TEST_CASE("check: a bad data file is each problem at its file and line, exit 2", "[cli][data]") {
  TempDir dir;
  dir.write("r.clp", kDataRules);
  const std::string data =
      dir.write("team/packages.data.json",
                "{\"npm-packages\": [\"left-pad\",\n  42],\n \"owners\": {\"x\": \"\\u0000\"}}\n");
  auto r = run_warden({"check", dir.str()});
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(
      r.out.find(
          data +
          ":2: error E_DATA: list \"npm-packages\": every value must be a string, not a number") !=
      std::string::npos);
  CHECK(r.out.find(data + ":3: error E_DATA_VALUE: ") != std::string::npos);
  CHECK(r.out.find("nothing loaded") != std::string::npos);

  auto json = run_warden({"check", "--format", "json", dir.str()});
  CHECK(json.code == 2);
  CHECK(json.out.find(R"("code":"E_DATA","severity":"error","file":")" + data + R"(","line":2)") !=
        std::string::npos);

  // A set the rules name that no data file defines.
  dir.write("team/packages.data.json", "{\"npm-packages\": [\"left-pad\"]}");
  auto missing = run_warden({"check", dir.str()});
  CHECK(missing.code == 2);
  CHECK(
      missing.out.find(dir.str() +
                       "/r.clp:6: error E_DATA_SET: in rule 'listed-install': no data file defines "
                       "a data set named \"owners\"") != std::string::npos);
}

TEST_CASE("check: lists the data sets it loaded, in text and JSON", "[cli][data]") {
  TempDir dir;
  dir.write("r.clp", kDataRules);
  const std::string data = dir.write("packages.data.toml", kData);
  auto r = run_warden({"check", dir.str()});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("ok: 2 rules from 2 files, sha256:") != std::string::npos);
  CHECK(r.out.find("data: 2 set(s)\n  npm-packages: list of 1 (" + data +
                   ":1)\n  owners: map of 1 (" + data + ":3)\n") != std::string::npos);
  auto json = run_warden({"check", "--format", "json", dir.str()});
  CHECK(json.code == 0);
  CHECK(json.out.find(R"("data":[{"name":"npm-packages","kind":"list","entries":1,"at":")" + data +
                      R"(:1"},{"name":"owners","kind":"map","entries":1,"at":")" + data +
                      R"(:3"}])") != std::string::npos);
}

TEST_CASE("test: cases are decided with the data beside the rules, and follow an edit of it",
          "[cli][data]") {
  TempDir dir;
  dir.write("r.clp", kDataRules);
  dir.write("cases.jsonl", kCases);
  // JSON data beside JSON cases: the data file is data, not a case file.
  dir.write("packages.data.json",
            R"({"npm-packages": ["left-pad"], "owners": {"left-pad": "web"}})");
  auto r = run_warden({"test", "--format", "json", dir.str()});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("\"passed\":2,\"failed\":0") != std::string::npos);
  CHECK(r.err.empty());  // no E_CASE for the data file

  // lodash joins the list: the "unlisted" case now gets an approve.
  dir.write("packages.data.json",
            R"({"npm-packages": ["left-pad", "lodash"], "owners": {"left-pad": "web"}})");
  auto edited = run_warden({"test", "--format", "json", dir.str()});
  INFO(edited.out << edited.err);
  CHECK(edited.code == 1);
  CHECK(edited.out.find("\"passed\":1,\"failed\":1") != std::string::npos);
  CHECK(edited.out.find(R"("name":"unlisted")") != std::string::npos);

  // dry-run reads the same data from its --rules path.
  auto listed = run_warden({"dry-run", "--rules", dir.str(), "--format", "text", "-"},
                           R"({"target":"shell","payload":{"command":"npm install left-pad"}})");
  CHECK(listed.code == 0);
  CHECK(listed.out.find("listed-install: approve (left-pad, kept by web)") != std::string::npos);
}
