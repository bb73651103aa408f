// Terminal escaping: the function itself, and every text output of the CLI that can carry
// agent or rule-author text (dry-run text and JSON, check diagnostics, the test report).
#include "cli/terminal_text.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

using warden::cli::json_for_terminal;
using warden::cli::printable;
using namespace warden::cli::testing;
namespace fs = std::filesystem;
using warden::testing::TempDir;

namespace {

// No byte a terminal would act on: C0 (but '\n'), DEL, C1 (raw or UTF-8), bidi controls.
bool terminal_safe(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return false;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) <= 0x9f)
      return false;
    if (s.compare(i, 3, "\xe2\x80\xae") == 0 || s.compare(i, 3, "\xe2\x81\xa6") == 0) return false;
  }
  return true;
}

// A rule whose reason echoes what the agent wrote.
const char* kEchoRule = R"(
(defrule echo (proposal (id ?id) (target message))
              (param (proposal ?id) (key "payload.text") (value ?t))
  => (assert (decision (proposal ?id) (outcome reject) (rule echo) (reason (str-cat "said: " ?t)))))
)";

// ESC [2K (erase line), CR, "approve", backspace, RLO, C1 CSI, LRI.
const char* kHostileProposal =
    R"({"target":"message","payload":{"text":"\u001b[2K\rapprove\b\u202e\u009b31m\u2066x"}})";

}  // namespace

TEST_CASE("printable: every control a terminal acts on becomes a visible escape", "[cli][escape]") {
  CHECK(printable("plain text, ünïcode ✓") == "plain text, ünïcode ✓");
  CHECK(printable("\x1b[2K\rapprove") == "\\x1b[2K\\rapprove");
  CHECK(printable("a\nb\tc\bd\fe\vf") == "a\\nb\\tc\\bd\\fe\\vf");
  CHECK(printable(std::string("nul\0x", 5)) == "nul\\x00x");
  CHECK(printable("del\x7f") == "del\\x7f");
  CHECK(printable("csi\xc2\x9b"
                  "31m") == "csi\\u009b31m");  // C1 as UTF-8
  CHECK(printable("raw\x9b"
                  "31m") == "raw\\x9b31m");  // C1 as a raw byte
  CHECK(printable("\xe2\x80\xae"
                  "evil") == "\\u202eevil");  // RLO
  for (const char* bidi :
       {"\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac", "\xe2\x80\xad", "\xe2\x81\xa6",
        "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9", "\xe2\x80\x8e", "\xe2\x80\x8f", "\xd8\x9c",
        "\xe2\x80\xa8", "\xe2\x80\xa9"}) {
    INFO(bidi);
    CHECK(terminal_safe(printable(bidi)));
    CHECK(printable(bidi).rfind("\\u", 0) == 0);
  }
  CHECK(printable("\xff\xfe") == "\\xff\\xfe");  // not UTF-8
  CHECK(printable("\xe2\x80") == "\\xe2\\x80");  // truncated sequence
}

TEST_CASE("json_for_terminal: the same JSON value with bidi, DEL and C1 escaped", "[cli][escape]") {
  CHECK(json_for_terminal(R"({"a":"x"})") == R"({"a":"x"})");
  CHECK(json_for_terminal("{\"a\":\"\xe2\x80\xae"
                          "b\xc2\x9b\x7f\"}") == R"({"a":"\u202eb\u009b\u007f"})");
  CHECK(json_for_terminal("{\n\t\"a\": 1\r\n}") == "{\n\t\"a\": 1\r\n}");  // JSON whitespace kept
  CHECK(json_for_terminal("\"\x1b\"") == R"("\u001b")");
  CHECK(json_for_terminal("\"\xff\"") == R"("\ufffd")");
}

TEST_CASE("dry-run text and JSON output cannot repaint a reject", "[cli][escape]") {
  TempDir dir{"warden-tt"};
  std::string rules = dir.write("echo.clp", kEchoRule);
  Run text = run_warden({"dry-run", "--format", "text", "--rules", rules, "-"}, kHostileProposal);
  CHECK(text.code == 1);
  CHECK(terminal_safe(text.out));
  CHECK(text.out.find("line 1: reject  said: \\x1b[2K\\rapprove\\b\\u202e\\u009b31m\\u2066x") == 0);

  Run json = run_warden({"dry-run", "--rules", rules, "-"}, kHostileProposal);
  CHECK(json.code == 1);
  CHECK(terminal_safe(json.out));
  CHECK(json.out.find(R"(said: \u001b[2K\rapprove\u0008\u202e\u009b31m\u2066x)") !=
        std::string::npos);

  // An input error that echoes input is escaped too.
  Run bad = run_warden({"dry-run", "--format", "text", "--rules", rules, "-"},
                       "{\"target\":\"\xe2\x80\xae\x1b[0m\"}\n");
  CHECK(bad.code == 2);
  CHECK(terminal_safe(bad.out));
}

TEST_CASE("check diagnostics and the test report escape file names and case names",
          "[cli][escape]") {
  TempDir dir{"warden-tt"};
  std::string file = dir.write("bad\x1b[32m.clp", "(defrule x");
  Run check = run_warden({"check", dir.path().string()});
  CHECK(check.code == 2);
  CHECK(terminal_safe(check.out));
  CHECK(check.out.find("bad\\x1b[32m.clp") != std::string::npos);
  Run json = run_warden({"check", "--format", "json", dir.path().string()});
  CHECK(terminal_safe(json.out));
  fs::remove(file);

  dir.write("echo.clp", kEchoRule);
  dir.write("cases.jsonl", std::string(R"({"name":"\u001b[2K\rPASS \u202e","proposal":)") +
                               kHostileProposal +
                               R"(,"expect":"approve"})"
                               "\n");
  Run test = run_warden({"test", dir.path().string()});
  CHECK(test.code == 1);
  CHECK(terminal_safe(test.out));
  CHECK(test.out.find("FAIL \\x1b[2K\\rPASS \\u202e") != std::string::npos);
  CHECK(test.out.find("said: \\x1b[2K\\rapprove") != std::string::npos);  // the reason in the diff
}
