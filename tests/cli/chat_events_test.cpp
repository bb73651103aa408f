// How `warden submit` and `warden chat` show a run's events (cli/submit_events.h): a marker
// per decision with its rules and reason, tool output below its action, model text made
// printable, and the exit status per final status.
#include <catch2/catch.hpp>

#include "cli/commands.h"
#include "cli/submit_events.h"

using namespace warden::cli;

TEST_CASE("decision events show a marker, the action and the rules", "[cli][chat]") {
  CHECK(render_event(R"({"event":"decision","stage":"reason","attempt":1,"outcome":"approve",
      "rules":[{"rule":"ls-ok","outcome":"approve","reason":"fine"}],
      "action":{"target":"shell","action":"run","payload":{"command":"ls -la"}}})") ==
        "✓ approve shell: ls -la  [ls-ok]\n");
  CHECK(render_event(R"({"event":"decision","outcome":"reject","reason":"rm deletes files",
      "rules":[{"rule":"no-rm"},{"rule":"other"}],
      "action":{"target":"shell","payload":{"command":"rm -rf ~"}}})") ==
        "✗ reject shell: rm -rf ~  [no-rm, other]: rm deletes files\n");
  CHECK(render_event(R"({"event":"decision","stage":"last-mile","outcome":"approval-required",
      "reason":"a person decides","rules":["http-post"],
      "action":{"target":"http","payload":{"method":"POST","url":"https://x.example/a"}}})") ==
        "⏸ approval required (last mile) http: POST https://x.example/a  [http-post]: a person "
        "decides\n");
  // No rule decided: the default outcome says so.
  CHECK(render_event(R"({"event":"decision","outcome":"reject","reason":"default","rules":[],
      "action":{"target":"file","payload":{"action":"delete","path":"/etc/passwd"}}})") ==
        "✗ reject file: delete /etc/passwd  [default outcome]: default\n");
}

TEST_CASE("model and tool text cannot drive the terminal", "[cli][chat]") {
  std::string shown = render_event("{\"event\":\"reply\",\"text\":\"hi\\u001b[2J\\nsecond line\"}");
  CHECK(shown == "» hi\\x1b[2J\n» second line\n");
  shown = render_event(R"({"event":"decision","outcome":"reject","reason":"r\u001b]0;x",
      "rules":[{"rule":"a\u009bb"}],"action":{"target":"shell","payload":{"command":"ls\u0007"}}})");
  CHECK(shown.find('\x1b') == std::string::npos);
  CHECK(shown.find('\x07') == std::string::npos);
  CHECK(shown.find("\xc2\x9b") == std::string::npos);
}

TEST_CASE("tool output is shown below its action, capped in lines", "[cli][chat]") {
  CHECK(render_event(R"({"event":"tool-output","target":"shell","decision_id":"d",
      "output":"a.txt\nb.txt\n","exit_code":0,"truncated":false})") ==
        "  ⎿ shell exit 0\n    a.txt\n    b.txt\n");
  std::string many;
  for (int i = 0; i < 10; ++i) many += "line" + std::to_string(i) + "\\n";
  std::string shown = render_event("{\"event\":\"tool-output\",\"target\":\"shell\",\"output\":\"" +
                                       many + "\",\"exit_code\":2,\"truncated\":true}",
                                   3);
  CHECK(
      shown ==
      "  ⎿ shell exit 2 (output truncated)\n    line0\n    line1\n    line2\n    … 7 more lines\n");
  CHECK(render_event(R"({"event":"tool-error","target":"shell","error_code":"E_ACT_TIMEOUT",
      "error":"killed after 200 ms"})") ==
        "  ⎿ shell failed: E_ACT_TIMEOUT: killed after 200 ms\n");
  CHECK(render_event(
            R"({"event":"error","code":"E_CASCADE","message":"cascade failure: a: HTTP 500"})") ==
        "✗ error E_CASCADE: cascade failure: a: HTTP 500\n");
  CHECK(render_event(R"({"event":"dropped","reason":"depth 11 > 10"})") ==
        "  ⊘ dropped: depth 11 > 10\n");
  CHECK(render_event(R"({"event":"final","status":"done","cycles":1})").empty());
  CHECK(render_event("not json") == "(an event that is not a JSON object)\n");
}

// Events are read with the shared parser (bindings/json.h): a NUL byte after the object, which
// RapidJSON took for the end of the text, makes the event unreadable.
TEST_CASE("an event with a NUL byte after its object is not shown as the part before",
          "[cli][chat]") {
  using namespace std::string_literals;
  CHECK(render_event("{\"event\":\"reply\",\"text\":\"hi\"}\0{}"s) ==
        "(an event that is not a JSON object)\n");
}

TEST_CASE("submit's exit status follows the run's final status", "[cli][chat]") {
  CHECK(exit_code_for_status("done") == kExitOk);
  CHECK(exit_code_for_status("rejected") == kExitRejected);
  CHECK(exit_code_for_status("suspended") == kExitApproval);
  CHECK(exit_code_for_status("failed") == kExitInternal);
  CHECK(exit_code_for_status("dropped") == kExitInternal);
  CHECK(exit_code_for_status("cancelled") == kExitInternal);
}
