// What approvals do to decisions (server/approval_service.h; approval_decisions.cpp) and the
// agent an approval records (approval_requester.cpp): the JSON they read goes through the one
// parser (bindings/json.h), so a document it refuses reads as no document.
#include <catch2/catch.hpp>

#include "approvals/store.h"
#include "bindings/json.h"
#include "engine/decision.h"
#include "server/approval_service.h"
#include "server/config.h"
#include "server/log.h"
#include "server/server_context.h"
#include "tests/support/temp_dir.h"

using namespace warden;
using namespace warden::server;

namespace {

// A zero RapidJSON 1.1.0 would misread as another number: bindings/json.h refuses the whole
// document, at that number.
constexpr const char* kMisreadZero = "0e66";

void check_refused(const std::string& text) {
  rapidjson::Document doc;
  const json::Error e = json::parse(text, &doc, json::Limits::any_depth());
  CHECK(e.refusal == json::Refusal::kSyntax);
  CHECK(e.code == rapidjson::kParseErrorNumberTooBig);
  CHECK(std::string(e.syntax()) == "Number too big to be stored in double.");
}

}  // namespace

TEST_CASE("answer_reason reads a refused approval's reason from its result", "[approval]") {
  approvals::Approval a;
  a.status = approvals::Status::Refused;
  a.result_json = R"({"error_code":"E_APPROVAL_REFUSED","reason":"it could not run: E_X"})";
  CHECK(answer_reason(a) == "approved, but not run: it could not run: E_X");
  // The reason as a C string: an escaped NUL ends it.
  a.result_json = R"({"reason":"first\u0000second"})";
  CHECK(answer_reason(a) == "approved, but not run: first");
  for (const char* unreadable : {"", "not json", "[\"reason\"]", R"({"reason":7})"}) {
    a.result_json = unreadable;
    CHECK(answer_reason(a) == "approved, but not run: the rules refused it");
  }
  // Refused by the one parser: as if there were no result.
  a.result_json = std::string(R"({"reason":"it could not run","n":)") + kMisreadZero + "}";
  check_refused(a.result_json);
  CHECK(answer_reason(a) == "approved, but not run: the rules refused it");
}

TEST_CASE("an approval's agent is its action's context.agent when the requester names none",
          "[approval]") {
  warden::testing::TempDir dir{"warden-approval-agent"};
  Config config;
  config.audit.daemon_id = "daemon-a";
  ServerContext context;
  context.config = &config;
  context.log = make_logger("error", false);
  ApprovalService service(context, approvals::open_sqlite(dir / "state.db"), nullptr);
  Decision decision;
  decision.outcome = Outcome::ApprovalRequired;
  decision.decision_id = "dec-1";
  decision.reason = "a person decides";
  const Requester who{"alice", {"dev"}, "s1", {}, {}};
  const std::string action = R"({"target":"shell","context":{"agent":"claude-code"})";

  CHECK(service.create(who, decision, action + "}", "decide").approval.agent == "claude-code");
  const Requester named{"alice", {"dev"}, "s1", "codex", {}};
  CHECK(service.create(named, decision, action + "}", "decide").approval.agent == "codex");
  // An action the one parser refuses has no agent to read.
  const std::string refused = action + ",\"n\":" + kMisreadZero + "}";
  check_refused(refused);
  CHECK(service.create(who, decision, refused, "decide").approval.agent.empty());
}
