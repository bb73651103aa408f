// `warden pending`, `warden approve`, `warden deny`: an approver's side of human approvals
// (SPEC §6, docs/PROTOCOL.md). Thin wiring over protocol::Client and approval_text.h; the
// daemon keeps the approvals and checks the approver's role.
#include <rapidjson/document.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>

#include "cli/approval_text.h"
#include "cli/client_flags.h"
#include "cli/commands.h"
#include "cli/terminal_text.h"
#include "engine/diagnostic.h"
#include "protocol/client.h"
#include "protocol/json_text.h"
#include "protocol/message.h"
#include "protocol/reply.h"

namespace warden::cli {
namespace {

using protocol::Client;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The exit status for an error the daemon answered: the rules refused the approved action
// (E_APPROVAL_REFUSED) is a reject, 1; anything else (not found, closed, expired, self
// approval, a second vote, the role, the store) is 4, as for the other client commands.
int exit_for_error(const std::string& code) {
  return code == ::warden::code::kApprovalRefused ? kExitRejected : kExitInternal;
}

// Prints the error of a reply that is not ok to stderr; returns its exit status.
int print_error(const protocol::Message& reply) {
  std::string code = reply.error_code();
  if (code.empty()) code = ::warden::code::kInternal;
  std::fprintf(stderr, "warden: %s: %s\n", printable(code).c_str(),
               printable(reply.error_message()).c_str());
  return exit_for_error(code);
}

// Sends one request and reads its response into *reply; false (printed, *exit_code set) when
// the connection failed or the reply is malformed. Events before the response (none
// expected) are not ours to show.
bool call(Client& client, const ClientFlags& flags, const char* action, const std::string& fields,
          protocol::Message* reply, int* exit_code) {
  std::string error;
  if (!client.send_message(protocol::make_request(action, action, fields), &error)) {
    std::fprintf(stderr, "warden: %s\n", printable(error).c_str());
    *exit_code = kExitInternal;
    return false;
  }
  const auto timeout = std::chrono::milliseconds(flags.timeout_ms);
  switch (protocol::read_reply(
      client, [&] { return timeout; }, {}, reply)) {
    case protocol::ReplyStatus::Ok:
      return true;
    case protocol::ReplyStatus::Malformed:
      std::fprintf(stderr, "warden: malformed reply from the daemon\n");
      break;
    case protocol::ReplyStatus::Timeout:
    case protocol::ReplyStatus::Closed:
      std::fprintf(stderr, "warden: no reply from the daemon (connection closed or timed out)\n");
      break;
  }
  *exit_code = kExitInternal;
  return false;
}

// ---- pending ----------------------------------------------------------------

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted.store(true); }

void watch(Client& client, const PendingQuery& q, const ClientFlags& flags, bool json,
           int* exit_code) {
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_interrupt;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::string error;
  if (!client.send_message(protocol::make_request("pending", "pending", pending_fields(q)),
                           &error)) {
    std::fprintf(stderr, "warden: %s\n", printable(error).c_str());
    *exit_code = kExitInternal;
    return;
  }
  bool first = true;
  const auto wait_for_first = std::chrono::milliseconds(flags.timeout_ms);
  auto first_deadline = std::chrono::steady_clock::now() + wait_for_first;
  while (!g_interrupted.load()) {
    std::string payload;
    Client::ReadStatus status = client.read_message(&payload, std::chrono::milliseconds(250));
    if (status == Client::ReadStatus::Timeout) {
      if (first && std::chrono::steady_clock::now() > first_deadline) {
        std::fprintf(stderr, "warden: no answer from the daemon within --timeout-ms\n");
        *exit_code = kExitInternal;
        return;
      }
      continue;
    }
    if (status != Client::ReadStatus::Ok) {
      std::fprintf(stderr, "warden: the daemon closed the connection\n");
      *exit_code = kExitInternal;
      return;
    }
    protocol::Message message;
    if (!message.parse(payload)) {
      std::fprintf(stderr, "warden: malformed message from the daemon\n");
      *exit_code = kExitInternal;
      return;
    }
    const rapidjson::Value& p = message.payload();
    const std::string type = message.type();
    if (type == "response") {
      // A watch is answered with events only; a response is the daemon refusing it.
      if (!message.ok()) {
        *exit_code = print_error(message);
        return;
      }
      continue;
    }
    if (type != "event") continue;
    first = false;
    const std::string text = protocol::to_json_text(p);
    if (json) {
      std::printf("%s\n", watch_event_json(text).c_str());
    } else {
      std::fputs(watch_event_text(text, now_ms()).c_str(), stdout);
    }
    std::fflush(stdout);
  }
  *exit_code = kExitOk;
}

// The pages of `pending` the daemon answers, one request each, until the last page or
// `limit` approvals (0: all): each approval is handed to `each` as it arrives. False (printed,
// *exit_code set) when a request failed; *next is the cursor to go on from when `limit`
// stopped it with more to come ("" otherwise).
bool pending_pages(Client& client, const ClientFlags& flags, PendingQuery q, std::int64_t limit,
                   const std::function<void(const rapidjson::Value&)>& each, std::size_t* count,
                   std::string* next, int* exit_code) {
  *count = 0;
  next->clear();
  for (;;) {
    const std::int64_t left = limit > 0 ? limit - static_cast<std::int64_t>(*count) : 0;
    q.limit = left > 0 ? std::min(left, kMaxPendingPage) : kMaxPendingPage;
    protocol::Message reply;
    if (!call(client, flags, "pending", pending_fields(q), &reply, exit_code)) return false;
    const rapidjson::Value& p = reply.payload();
    if (!reply.ok()) {
      *exit_code = print_error(reply);
      return false;
    }
    if (p.HasMember("approvals") && p["approvals"].IsArray()) {
      for (const auto& approval : p["approvals"].GetArray()) {
        each(approval);
        ++*count;
      }
    }
    const bool more = p.HasMember("more") && p["more"].IsTrue();
    const std::string after = string_member(p, "next");
    if (!more) return true;
    if (after.empty() || after == q.after) {
      std::fprintf(stderr, "warden: the daemon said there is more but gave no next page\n");
      *exit_code = kExitInternal;
      return false;
    }
    if (limit > 0 && static_cast<std::int64_t>(*count) >= limit) {
      *next = after;
      return true;
    }
    q.after = after;
  }
}

void register_pending(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "pending",
      "List the approvals waiting for a person (role approver), oldest first: id, age, "
      "requester, session, agent, rules, reason, the action as it will run and its digest, "
      "and the session's recent history; never a token. All of them, page by page, or "
      "--limit N. --watch: print each approval as it is created or closed until interrupted. "
      "Exit: 0, 4 if the daemon failed us");
  struct Args {
    PendingQuery query;
    std::int64_t min_age_s = -1;
    std::int64_t limit = 0;
    std::string format = "text";
    ClientFlags client;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--agent", a->query.agent, "Only approvals asked for by this agent");
  cmd->add_option("--session", a->query.session, "Only approvals of this session");
  cmd->add_option("--rule", a->query.rule, "Only approvals this rule asked for");
  cmd->add_option("--min-age", a->min_age_s, "Only approvals waiting at least SECONDS")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{366} * 86400));
  cmd->add_option("--limit", a->limit,
                  "Show at most N approvals (default: all, fetched a page at a time); when more "
                  "are pending, the last line says how to go on (--after)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}));
  cmd->add_option("--after", a->query.after,
                  "Start after this place in the list (the --after a --limit listing printed)");
  cmd->add_flag("--watch", a->query.watch,
                "Print the pending approvals (the first page), then each one created or closed "
                "as it happens, until interrupted");
  cmd->add_option("--format", a->format,
                  "Output format (json: one object with every approval listed, or with --watch "
                  "each event, one per line)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_client_flags(cmd, &a->client);
  cmd->callback([a, exit_code] {
    a->query.min_age_s = a->min_age_s;
    Client client;
    if (int rc = open_client(a->client, &client); rc != kExitOk) {
      *exit_code = rc;
      return;
    }
    const bool json = a->format == "json";
    if (a->query.watch) {
      if (a->limit > 0) a->query.limit = std::min(a->limit, kMaxPendingPage);
      watch(client, a->query, a->client, json, exit_code);
      return;
    }
    const std::int64_t now = now_ms();
    rapidjson::Document all(rapidjson::kObjectType);
    rapidjson::Value list(rapidjson::kArrayType);
    std::size_t n = 0;
    std::string next;
    auto each = [&](const rapidjson::Value& approval) {
      if (json) {
        list.PushBack(rapidjson::Value(approval, all.GetAllocator()), all.GetAllocator());
        return;
      }
      // Printed as each page arrives: thousands need not wait for the last one.
      std::printf("%s%s", n++ ? "\n" : "", approval_detail(approval, now).c_str());
      std::fflush(stdout);
    };
    std::size_t count = 0;
    if (!pending_pages(client, a->client, a->query, a->limit, each, &count, &next, exit_code)) {
      return;
    }
    if (json) {
      auto& alloc = all.GetAllocator();
      all.AddMember("action", "pending", alloc);
      all.AddMember("ok", true, alloc);
      all.AddMember("approvals", list, alloc);
      all.AddMember("more", !next.empty(), alloc);
      if (!next.empty()) {
        all.AddMember("next", rapidjson::Value(next.c_str(), alloc), alloc);
      }
      std::printf("%s\n", without_tokens(all).c_str());
    } else if (count == 0) {
      std::printf("no pending approvals\n");
    } else {
      std::printf(
          "\n%zu pending; look at one and answer it: warden approve ID (or warden deny ID)\n",
          count);
      if (!next.empty()) {
        std::printf("more are pending: warden pending --after %s%s\n", printable(next).c_str(),
                    a->limit > 0 ? (" --limit " + std::to_string(a->limit)).c_str() : "");
      }
    }
    *exit_code = kExitOk;
  });
}

// ---- approve / deny ---------------------------------------------------------

// "-": the token or id is the first line of stdin. False (printed, exit 2) when there is none.
bool read_token_argument(std::string* token, int* exit_code) {
  if (*token != "-") return true;
  std::string line;
  int c;
  while ((c = std::getchar()) != EOF && c != '\n' && line.size() < 4096)
    line.push_back(static_cast<char>(c));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.empty()) {
    std::fprintf(stderr, "warden: no token on stdin\n");
    *exit_code = kExitUsage;
    return false;
  }
  *token = line;
  return true;
}

// Asks on the terminal whether to approve what was just shown; true only for "yes" (or "y").
bool confirm_on_terminal(const std::string& id, const std::string& digest) {
  std::printf("\napprove %s, the action above (%s)? type yes to approve: ", id.c_str(),
              printable(digest).c_str());
  std::fflush(stdout);
  std::string line;
  int c;
  while ((c = std::getchar()) != EOF && c != '\n' && line.size() < 64)
    line.push_back(static_cast<char>(c));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line == "yes" || line == "y";
}

void register_approve(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "approve",
      "Approve a pending approval by its id (role approver) after looking at it: the approval "
      "is fetched and shown (the action as it will run, what approving it grants, its digest, "
      "rules, reasons, requester, session history) and you confirm on the terminal; or give "
      "--digest (the digest you were shown) to answer without a terminal. The daemon refuses "
      "a digest that is not the approval's (E_APPROVAL_DIGEST): it covers the action and what "
      "approving grants. The rules then decide it once more (the last mile); a "
      "submitted action runs, a decided one is approved for its requester's session. Exit: 0 "
      "approved (or your vote counted), 1 the last mile refused it or you said no, 2 no "
      "terminal and no --digest (E_APPROVAL_UNSEEN) or a bad argument, 4 an error (not found, "
      "closed, expired, your own request, …)");
  struct Args {
    std::string id;
    std::string digest;
    std::string note;
    int scope_minutes = 0;
    std::string format = "text";
    ClientFlags client;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("ID", a->id, "The approval's id (apr_…), as warden pending lists it")->required();
  cmd->add_option("--digest", a->digest,
                  "The digest (sha256:…) of the approval you looked at (its action and what "
                  "approving grants): answer without the terminal prompt; refused unless it is "
                  "this approval's");
  cmd->add_option("--note", a->note, "Why (recorded with your approval in the audit log)");
  auto* scope =
      cmd->add_option(
             "--scope-minutes", a->scope_minutes,
             "Also approve this exact request again for the requester's session for N "
             "minutes (1..1440; with two approvers the strictest of their answers holds, and never "
             "beyond the approval's own expiry)")
          ->check(CLI::Range(1, kMaxScopeMinutes));
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_client_flags(cmd, &a->client);
  cmd->callback([a, scope, exit_code] {
    if (!is_approval_id(a->id)) {
      std::fprintf(stderr,
                   "warden: E_BAD_REQUEST: %s is not an approval id (apr_ and 24 hex digits); "
                   "approve by the id warden pending shows (a token never approves)\n",
                   printable(a->id).c_str());
      *exit_code = kExitUsage;
      return;
    }
    if (!a->digest.empty() && !is_action_digest(a->digest)) {
      std::fprintf(stderr, "warden: E_BAD_REQUEST: --digest must be sha256: and 64 hex digits\n");
      *exit_code = kExitUsage;
      return;
    }
    const bool interactive = a->digest.empty();
    if (interactive && !(::isatty(STDIN_FILENO) && ::isatty(STDOUT_FILENO))) {
      std::fprintf(stderr,
                   "warden: E_APPROVAL_UNSEEN: no terminal to show %s and ask you: look at it "
                   "(warden pending) and give its digest with --digest sha256:…\n",
                   a->id.c_str());
      *exit_code = kExitUsage;
      return;
    }
    Client client;
    if (int rc = open_client(a->client, &client); rc != kExitOk) {
      *exit_code = rc;
      return;
    }
    std::string digest = a->digest;
    if (interactive) {
      protocol::Message shown;
      if (!call(client, a->client, "pending", show_fields(a->id), &shown, exit_code)) return;
      const rapidjson::Value& p = shown.payload();
      if (!shown.ok() && p.HasMember("error")) {
        *exit_code = print_error(shown);
        return;
      }
      if (!p.HasMember("approvals") || !p["approvals"].IsArray() || p["approvals"].Size() != 1) {
        std::fprintf(stderr, "warden: malformed reply from the daemon\n");
        *exit_code = kExitInternal;
        return;
      }
      const rapidjson::Value& approval = p["approvals"][0];
      std::fputs(approval_detail(approval, now_ms()).c_str(), stdout);
      const std::string status = string_member(approval, "status");
      if (status != "pending") {
        std::fprintf(stderr, "warden: E_APPROVAL_CLOSED: %s is %s: nothing to approve\n",
                     a->id.c_str(), printable(status).c_str());
        *exit_code = kExitInternal;
        return;
      }
      digest = answer_digest_of(approval);
      if (!confirm_on_terminal(a->id, digest)) {
        std::printf("not approved\n");
        *exit_code = kExitRejected;
        return;
      }
    }
    std::optional<int> minutes;
    if (scope->count() > 0) minutes = a->scope_minutes;
    protocol::Message reply;
    if (!call(client, a->client, "approve", approve_fields(a->id, digest, a->note, minutes), &reply,
              exit_code))
      return;
    const rapidjson::Value& p = reply.payload();
    if (!reply.ok() && p.HasMember("error")) {
      *exit_code = print_error(reply);
      return;
    }
    const std::string status = string_member(p, "status");
    // Approved and run, but what ran failed: said, and not exit 0.
    bool failed = status == "refused";
    if (status == "executed" && p.HasMember("result") && p["result"].IsObject()) {
      const rapidjson::Value& r = p["result"];
      failed = r.HasMember("ok") && r["ok"].IsFalse();
    }
    if (a->format == "json") {
      std::printf("%s\n", without_tokens(p).c_str());
    } else {
      std::fputs(approve_reply_text(p).c_str(), failed ? stderr : stdout);
    }
    *exit_code = failed ? kExitRejected : kExitOk;
  });
}

void register_deny(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "deny",
      "Deny a pending approval by its token or its id (apr_…) (role approver): the action "
      "never runs. Exit: 0 denied, 4 an error (not found, closed, expired, …)");
  struct Args {
    std::string which;
    std::string note;
    std::string format = "text";
    ClientFlags client;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("TOKEN_OR_ID", a->which,
                  "The approval's token or its id (apr_…); - reads it from stdin")
      ->required();
  cmd->add_option("--note", a->note, "Why (recorded in the audit log and told to the requester)");
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_client_flags(cmd, &a->client);
  cmd->callback([a, exit_code] {
    std::string which = a->which;
    if (!read_token_argument(&which, exit_code)) return;
    Client client;
    if (int rc = open_client(a->client, &client); rc != kExitOk) {
      *exit_code = rc;
      return;
    }
    protocol::Message reply;
    if (!call(client, a->client, "deny", deny_fields(which, a->note), &reply, exit_code)) return;
    const rapidjson::Value& p = reply.payload();
    if (!reply.ok() && p.HasMember("error")) {
      *exit_code = print_error(reply);
      return;
    }
    if (a->format == "json") {
      std::printf("%s\n", without_tokens(p).c_str());
    } else {
      std::fputs(deny_reply_text(p).c_str(), stdout);
    }
    *exit_code = kExitOk;
  });
}

}  // namespace

void register_approval_commands(CLI::App& app, int* exit_code) {
  register_pending(app, exit_code);
  register_approve(app, exit_code);
  register_deny(app, exit_code);
}

}  // namespace warden::cli
