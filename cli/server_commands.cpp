// `warden serve`, `warden decide`, `warden status`, `warden token new`: the daemon and its
// clients. Thin wiring: options → server::Config / protocol::Client; the work is in server/.
#include <fcntl.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bindings/json.h"
#include "cli/approval_text.h"
#include "cli/client_flags.h"
#include "cli/commands.h"
#include "cli/proposal_stream.h"
#include "cli/terminal_text.h"
#include "cli/version.h"
#include "engine/decision.h"
#include "engine/defaults.h"
#include "protocol/client.h"
#include "protocol/json_text.h"
#include "protocol/message.h"
#include "protocol/reply.h"
#include "server/config.h"
#include "server/daemon.h"
#include "server/tokens.h"

namespace warden::cli {
namespace {

using protocol::Client;
using namespace std::chrono_literals;

// ---- serve ----------------------------------------------------------------

void register_serve(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "serve", "Run the decision daemon (TCP, framed JSON; see docs/PROTOCOL.md)");
  struct Args {
    std::string config;
    std::string listen;
    std::string metrics_listen;
    std::vector<std::string> rules;
    std::string tokens;
    bool insecure_no_auth = false;
    unsigned workers = 0;
    bool watch_rules = false;
    std::string log_level;
    bool log_json = false;
    std::string state_dir;
    std::string workspace;
    std::string home;
    std::string audit_log;
    bool no_audit = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("-c,--config", a->config, "warden.toml (every key has a default; none needed)");
  cmd->add_option("--listen", a->listen, "HOST:PORT to listen on (default 127.0.0.1:9105)");
  cmd->add_option("--metrics-listen", a->metrics_listen,
                  "HOST:PORT of the HTTP listener for /metrics and /health (default: off; "
                  "[metrics] listen)");
  cmd->add_option("--rules", a->rules,
                  "Rule file or directory (repeatable; default: the shipped rules)")
      ->allow_extra_args(false);
  cmd->add_option("--tokens", a->tokens,
                  "Token file: `ROLE PRINCIPAL sha256:HEX` lines (warden token new)");
  cmd->add_flag("--insecure-no-auth", a->insecure_no_auth,
                "Run without tokens: every client is principal 'anonymous' with role agent");
  cmd->add_option("--workers", a->workers, "Decision threads (default: one per core)");
  cmd->add_flag("--watch-rules", a->watch_rules, "Reload when a rule file changes");
  cmd->add_option("--log-level", a->log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  cmd->add_flag("--log-json", a->log_json, "Log JSON lines to stderr");
  cmd->add_option("--state-dir", a->state_dir,
                  "State directory (default $XDG_STATE_HOME/warden or ~/.local/state/warden)");
  cmd->add_option("--workspace", a->workspace,
                  std::string("The agent's workspace root: paths inside it are in the workspace "
                              "(default ") +
                      kDefaultWorkspaceRoot + "; never warden's own files)");
  cmd->add_option("--audit-log", a->audit_log,
                  "The audit log (default STATE_DIR/audit.jsonl; [audit] in warden.toml)");
  cmd->add_flag("--no-audit", a->no_audit,
                "Record nothing (audit.enabled = false; status warns about it)");
  cmd->add_option("--home", a->home,
                  std::string("What ~ and $HOME mean in paths (default ") + kDefaultHome + ")");
  cmd->callback([a, exit_code] {
    server::Config config;  // workspace and home default as for dry-run and test
    if (!a->config.empty()) {
      server::ConfigErrors errors = server::load_config_file(a->config, &config);
      if (!errors.empty()) {
        for (const auto& e : errors)
          std::fprintf(stderr, "warden: %s\n", printable(e.to_text(a->config)).c_str());
        *exit_code = kExitUsage;
        return;
      }
    }
    // Command-line flags override the file.
    if (!a->listen.empty()) config.listen = a->listen;
    if (!a->metrics_listen.empty()) config.metrics.listen = a->metrics_listen;
    if (!a->rules.empty()) config.rules = a->rules;
    if (!a->tokens.empty()) config.tokens = a->tokens;
    if (a->insecure_no_auth) config.insecure_no_auth = true;
    if (a->workers) config.workers = a->workers;
    if (a->watch_rules) config.watch_rules = true;
    if (!a->log_level.empty()) config.log_level = a->log_level;
    if (a->log_json) config.log_json = true;
    if (!a->state_dir.empty()) config.state_dir = a->state_dir;
    if (!a->workspace.empty()) config.workspace_root = a->workspace;
    if (!a->home.empty()) config.home = a->home;
    if (!a->audit_log.empty()) config.audit_log = a->audit_log;
    if (a->no_audit) config.audit.enabled = false;
    server::ConfigErrors errors = server::validate_config(config);
    if (!errors.empty()) {
      for (const auto& e : errors) {
        std::fprintf(stderr, "warden: %s\n",
                     printable(e.to_text(a->config.empty() ? "serve" : a->config)).c_str());
      }
      *exit_code = kExitUsage;
      return;
    }
    warn_if_default_approve(config.default_outcome);
    server::Daemon::Options options;
    options.handle_signals = true;
    // "warden 0.1.0\n…": the version for the audit log's start record.
    std::string version = version_text();
    version = version.substr(0, version.find('\n'));
    options.version = version.substr(version.find(' ') + 1);
    server::Daemon daemon(std::move(config), options);
    server::Daemon::StartResult started = daemon.start();
    if (!started.ok) {
      std::fprintf(stderr, "warden: cannot start (%s): %s\n", printable(started.step).c_str(),
                   printable(started.message).c_str());
      *exit_code = started.exit_code;
      return;
    }
    *exit_code = daemon.run();
  });
}

std::string server_text_line(const rapidjson::Value& d) {
  std::string out =
      printable(string_member(d, "outcome")) + "  " + printable(string_member(d, "reason"));
  if (d.HasMember("rules") && d["rules"].IsArray()) {
    for (const auto& r : d["rules"].GetArray()) {
      bool monitor = string_member(r, "mode") == "monitor";
      out += "\n  " + std::string(monitor ? "[monitor] " : "") +
             printable(string_member(r, "rule")) + ": " + printable(string_member(r, "outcome")) +
             " (" + printable(string_member(r, "reason")) + ")";
    }
  }
  return out;
}

// A decide reply's decision as text, named by its input's line ("line 3: approve  …", as an
// input error's line is), with the approval the daemon opened for it: its state, and while
// pending the command that approves it.
std::string decision_text(long line, const rapidjson::Value& p) {
  std::string out = "line " + std::to_string(line) + ": " + server_text_line(p["decision"]);
  const std::string approval = decide_approval_text(p);
  if (!approval.empty()) out += "\n  " + approval;
  return out;
}

// A decide reply's decision as one JSON line; the approval the daemon opened for it, when
// there is one, as its member "approval_request" ({"id","token","status","expires_ms",
// "approvers_needed","how"}): the decision's own "approval" member holds the rules' terms.
std::string decision_json_line(const rapidjson::Value& p) {
  auto approval = p.FindMember("approval");
  if (approval == p.MemberEnd() || !approval->value.IsObject())
    return json_for_terminal(protocol::to_json_text(p["decision"]));
  rapidjson::Document d;
  d.CopyFrom(p["decision"], d.GetAllocator());
  if (!d.IsObject()) return json_for_terminal(protocol::to_json_text(p["decision"]));
  rapidjson::Value request;
  request.CopyFrom(approval->value, d.GetAllocator());
  d.RemoveMember("approval_request");
  d.AddMember("approval_request", request, d.GetAllocator());
  return json_for_terminal(protocol::to_json_text(d));
}

// ---- decide ---------------------------------------------------------------

struct DecideArgs {
  std::string input = "-";
  std::string format = "json";
  bool explain = false;
  int wait_s = 0;
  ClientFlags client;
};

// A proposal of the input: sent to the daemon, or refused here (error_json set; then it never
// goes to the daemon).
struct DecideItem {
  long line = 0;
  std::string error_json;  // {"code":…,"message":…}
};

// {"code":CODE,"message":MESSAGE}: an input line's error as `decide` prints it.
std::string input_error_json(std::string_view code, std::string_view message) {
  return "{\"code\":" + protocol::json_string(code) +
         ",\"message\":" + protocol::json_string(message) + "}";
}

// An invalid input line: {"line":N,"error":…} or "line N: error CODE: MESSAGE".
void print_invalid(long line, const std::string& error_json, bool json) {
  if (json) {
    std::printf("{\"line\":%ld,\"error\":%s}\n", line, json_for_terminal(error_json).c_str());
  } else {
    rapidjson::Document e;  // input_error_json's object
    warden::json::parse_stored(error_json, &e);
    std::printf("line %ld: error %s: %s\n", line, printable(string_member(e, "code")).c_str(),
                printable(string_member(e, "message")).c_str());
  }
  std::fflush(stdout);
}

// Reads the reply to the oldest decide in flight. A decision is printed and counted in
// *status; an error that is the proposal's fault becomes *error_json. Any other outcome is the
// daemon failing us: printed, and its exit status returned (kExitOk otherwise).
int take_decide_reply(protocol::Client& client, protocol::Client::ms timeout, long line, bool json,
                      RunStatus* status, std::string* error_json) {
  protocol::Message reply;
  // --wait: the daemon first says which approval the decision waits for, so a person can take
  // its token to an approver; the decision follows once they answered.
  auto on_event = [](const protocol::Message& event) {
    if (const rapidjson::Value* approval = event.waiting_approval()) {
      std::fprintf(stderr, "approval %s: waiting for an approver; approve with: %s\n",
                   printable(string_member(*approval, "id")).c_str(),
                   printable(string_member(*approval, "how")).c_str());
      std::fflush(stderr);
    }
  };
  switch (protocol::read_reply(
      client, [&] { return timeout; }, on_event, &reply)) {
    case protocol::ReplyStatus::Ok:
      break;
    case protocol::ReplyStatus::Malformed:
      std::fprintf(stderr, "warden: malformed reply from the daemon\n");
      return kExitInternal;
    case protocol::ReplyStatus::Timeout:
    case protocol::ReplyStatus::Closed:
      std::fprintf(stderr, "warden: no reply from the daemon (connection closed or timed out)\n");
      return kExitInternal;
  }
  const rapidjson::Value& p = reply.payload();
  if (reply.ok() && p.HasMember("decision")) {
    status->add(parse_outcome(string_member(p["decision"], "outcome")).value_or(Outcome::Reject));
    std::printf("%s\n", json ? decision_json_line(p).c_str() : decision_text(line, p).c_str());
    std::fflush(stdout);
    return kExitOk;
  }
  const rapidjson::Value& e = reply.error();
  std::string code = string_member(e, "code");
  if (code.empty()) code = code::kInternal;
  if (!code::is_input_error(code) && code != code::kBadRequest && code != code::kTooDeep) {
    // Not the proposal's fault: the daemon refused us (role, shutdown, ...).
    std::fprintf(stderr, "warden: %s: %s\n", printable(code).c_str(),
                 printable(string_member(e, "message")).c_str());
    return kExitInternal;
  }
  *error_json =
      e.HasMember("diagnostics") && e["diagnostics"].IsArray() && !e["diagnostics"].Empty()
          ? protocol::to_json_text(e["diagnostics"][0])
          : protocol::to_json_text(e);
  return kExitOk;
}

// Streams the input's proposals to the daemon, pipelined, and prints each reply in input order.
int run_decide(const DecideArgs& a) {
  int fd = a.input == "-" ? STDIN_FILENO : ::open(a.input.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "warden: cannot read %s\n", printable(a.input).c_str());
    return kExitUsage;
  }
  struct CloseInput {
    int fd;
    ~CloseInput() {
      if (fd != STDIN_FILENO) ::close(fd);
    }
  } close_input{fd};
  ProposalStream input(fd, std::size_t{1} << 20);
  protocol::Client client;
  if (int rc = open_client(a.client, &client); rc != kExitOk) return rc;
  const bool json = a.format == "json";
  // Pipelined requests in flight (below the daemon's cap). With --wait a reply may wait for
  // a person: one proposal at a time, so each answer is printed as soon as it is given.
  const std::size_t window = a.wait_s > 0 ? 1 : 32;
  std::deque<DecideItem> waiting;
  std::size_t sent = 0;
  bool input_done = false;
  RunStatus status;
  bool any = false;
  const auto timeout =
      std::chrono::milliseconds(a.client.timeout_ms) + std::chrono::seconds(a.wait_s);
  for (;;) {
    // Send what has arrived (and, with nothing in flight, wait for input); each reply is
    // printed before waiting for more input, so a caller can answer decision by decision.
    while (!input_done && waiting.size() < window && (waiting.empty() || input.ready())) {
      ProposalStream::Item next;
      if (!input.next(&next)) {
        input_done = true;
        break;
      }
      any = true;
      DecideItem item{next.line, ""};
      rapidjson::Document doc;
      // The daemon checks the depth against its own limit.
      if (json::parse(next.text, &doc, json::Limits::any_depth())) {
        item.error_json = input_error_json(code::kInputJson, "not valid JSON");
      } else if (!doc.IsObject()) {
        item.error_json = input_error_json(code::kInputShape, "a proposal must be a JSON object");
      } else {
        std::string error;
        const std::string request =
            protocol::decide_request(std::to_string(sent++), doc, a.explain, a.wait_s);
        if (!client.send_message(request, &error)) {
          std::fprintf(stderr, "warden: %s\n", printable(error).c_str());
          return kExitInternal;
        }
      }
      waiting.push_back(std::move(item));
    }
    if (waiting.empty()) break;
    DecideItem item = std::move(waiting.front());
    waiting.pop_front();
    if (item.error_json.empty()) {
      if (int rc = take_decide_reply(client, timeout, item.line, json, &status, &item.error_json);
          rc != kExitOk) {
        return rc;
      }
      if (item.error_json.empty()) continue;  // a decision, printed
    }
    status.add_invalid();
    print_invalid(item.line, item.error_json, json);
  }
  if (input.read_error()) {
    std::fprintf(stderr, "warden: cannot read %s\n", printable(a.input).c_str());
    return kExitUsage;
  }
  if (!any) {
    std::fprintf(stderr, "warden: no proposal in input\n");
    return kExitUsage;
  }
  return status.exit_code();
}

void register_decide(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "decide",
      "Send proposals (one JSON or JSON lines) to a running daemon as they are read; print "
      "decisions in input order. Exit: 2 if any input was invalid, else 1 if any reject, else 3 "
      "if any approval-required, else 0; 4 if the daemon failed us");
  auto a = std::make_shared<DecideArgs>();
  cmd->add_option("input", a->input, "Proposal file (JSON or JSON lines), - for stdin")
      ->capture_default_str();
  cmd->add_flag("--explain", a->explain, "Also print the facts the rules saw");
  cmd->add_option("--wait", a->wait_s,
                  "When a proposal needs a person's approval, wait up to SECONDS (0..3600) for the "
                  "answer and print the final decision (one proposal at a time)")
      ->check(CLI::Range(0, kMaxWaitSeconds));
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_client_flags(cmd, &a->client);
  cmd->callback([a, exit_code] { *exit_code = run_decide(*a); });
}

// ---- status ---------------------------------------------------------------

void register_status(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "status", "Show a running daemon's rules, counters and connections (role admin)");
  struct Args {
    std::string format = "text";
    ClientFlags client;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_client_flags(cmd, &a->client);
  cmd->callback([a, exit_code] {
    Client client;
    if (int rc = open_client(a->client, &client); rc != kExitOk) {
      *exit_code = rc;
      return;
    }
    std::string error;
    protocol::Message reply;
    protocol::ReplyStatus replied = protocol::ReplyStatus::Closed;
    if (client.send_message(protocol::make_request("status", "status"), &error)) {
      const auto timeout = std::chrono::milliseconds(a->client.timeout_ms);
      replied = protocol::read_reply(
          client, [&] { return timeout; }, {}, &reply);
    }
    if (replied == protocol::ReplyStatus::Malformed) {
      std::fprintf(stderr, "warden: malformed reply from the daemon\n");
      *exit_code = kExitInternal;
      return;
    }
    if (replied != protocol::ReplyStatus::Ok) {
      std::fprintf(stderr, "warden: no reply from the daemon\n");
      *exit_code = kExitInternal;
      return;
    }
    const auto& p = reply.payload();
    if (!reply.ok()) {
      std::fprintf(stderr, "warden: %s: %s\n", printable(reply.error_code()).c_str(),
                   printable(reply.error_message()).c_str());
      *exit_code = kExitInternal;
      return;
    }
    if (a->format == "json") {
      std::printf("%s\n", json_for_terminal(protocol::to_json_text(p)).c_str());
    } else {
      auto u = [&](const rapidjson::Value& v, const char* k) {
        auto it = v.IsObject() ? v.FindMember(k) : v.MemberEnd();
        return v.IsObject() && it != v.MemberEnd() && it->value.IsUint64()
                   ? std::to_string(it->value.GetUint64())
                   : std::string("?");
      };
      static const rapidjson::Value kNone;
      const auto& c = p.HasMember("counters") ? p["counters"] : kNone;
      const auto& n = p.HasMember("connections") ? p["connections"] : kNone;
      std::printf("status       %s\n", printable(string_member(p, "status")).c_str());
      std::printf("rules        %s (%s rules)\n",
                  printable(string_member(p, "rules_digest")).c_str(), u(p, "rule_count").c_str());
      std::printf("uptime       %s s\n", u(p, "uptime_s").c_str());
      std::printf("connections  %s open, %s accepted, %s refused\n", u(n, "current").c_str(),
                  u(n, "accepted").c_str(), u(n, "refused").c_str());
      std::printf(
          "decisions    %s (approve %s, reject %s, approval-required %s, failed closed %s)\n",
          u(c, "decisions").c_str(), u(c, "approve").c_str(), u(c, "reject").c_str(),
          u(c, "approval_required").c_str(), u(c, "failed_closed").c_str());
      std::printf("requests     %s (errors %s, protocol errors %s, auth failures %s)\n",
                  u(c, "requests").c_str(), u(c, "errors").c_str(), u(c, "protocol_errors").c_str(),
                  u(c, "auth_failures").c_str());
      std::printf("reloads      %s (failed %s)\n", u(c, "reloads").c_str(),
                  u(c, "reload_failures").c_str());
      std::printf("workers      %s (queue %s)\n", u(p, "workers").c_str(), u(p, "queue").c_str());
      if (p.HasMember("audit") && p["audit"].IsObject()) {
        const auto& au = p["audit"];
        bool enabled = au.HasMember("enabled") && au["enabled"].IsBool() && au["enabled"].GetBool();
        bool ok = au.HasMember("ok") && au["ok"].IsBool() && au["ok"].GetBool();
        if (!enabled) {
          std::printf("audit        off\n");
        } else {
          std::printf("audit        %s, seq %s, %s records, %s failed (%s)\n",
                      ok ? "ok" : "FAILING: decisions fail closed", u(au, "last_seq").c_str(),
                      u(au, "records").c_str(), u(au, "failures").c_str(),
                      printable(string_member(au, "path")).c_str());
          if (!ok) {
            std::printf("audit error  %s\n", printable(string_member(au, "error")).c_str());
          }
        }
      }
      if (p.HasMember("approvals") && p["approvals"].IsObject()) {
        const auto& ap = p["approvals"];
        bool ok = ap.HasMember("ok") && ap["ok"].IsBool() && ap["ok"].GetBool();
        std::printf("approvals    %s store, %s, %s failed calls\n",
                    printable(string_member(ap, "store")).c_str(),
                    ok ? "ok" : "FAILING: approvals cannot be recorded or answered",
                    u(ap, "failures").c_str());
        if (!ok) {
          std::printf("approvals error  %s\n", printable(string_member(ap, "error")).c_str());
        }
        if (ap.HasMember("notify") && ap["notify"].IsObject()) {
          const auto& no = ap["notify"];
          if (no.HasMember("enabled") && no["enabled"].IsBool() && no["enabled"].GetBool()) {
            std::printf("notify       %s: %s sent, %s failed, %s retried, %s dropped, %s queued\n",
                        printable(string_member(no, "where")).c_str(), u(no, "sent").c_str(),
                        u(no, "failed").c_str(), u(no, "retried").c_str(), u(no, "dropped").c_str(),
                        u(no, "queued").c_str());
            if (!string_member(no, "last_error").empty()) {
              std::printf("notify error %s\n", printable(string_member(no, "last_error")).c_str());
            }
          } else {
            std::printf("notify       off\n");
          }
        }
      }
      if (p.HasMember("warnings") && p["warnings"].IsArray()) {
        for (const auto& w : p["warnings"].GetArray()) {
          if (w.IsString()) std::printf("WARNING      %s\n", w.GetString());
        }
      }
    }
    *exit_code = kExitOk;
  });
}

// ---- token new ------------------------------------------------------------

void register_token(CLI::App& app, int* exit_code) {
  auto* token = app.add_subcommand("token", "Manage daemon tokens");
  token->require_subcommand(1);
  auto* cmd = token->add_subcommand(
      "new", "Make a token; print it and the token-file line (only its hash)");
  struct Args {
    std::string role;
    std::string principal;
    std::vector<std::string> groups;
    std::string format = "text";
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--role", a->role, "agent, approver or admin")
      ->required()
      ->check(CLI::IsMember({"agent", "approver", "admin"}));
  cmd->add_option("--principal", a->principal, "Who holds the token (no spaces), e.g. alice")
      ->required();
  cmd->add_option("--group", a->groups,
                  "A group of the principal, seen by rules (repeatable; A-Z a-z 0-9 . _ -)")
      ->allow_extra_args(false);
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([a, exit_code] {
    if (a->principal.empty() || a->principal.find_first_of(" \t\r\n#") != std::string::npos ||
        a->principal.size() > 256) {
      std::fprintf(stderr, "warden: --principal must be 1-256 characters without spaces or '#'\n");
      *exit_code = kExitUsage;
      return;
    }
    for (const std::string& group : a->groups) {
      if (!server::valid_group_name(group)) {
        std::fprintf(stderr, "warden: --group '%s' must be 1-64 characters of A-Z a-z 0-9 . _ -\n",
                     group.c_str());
        *exit_code = kExitUsage;
        return;
      }
    }
    std::string token = server::generate_token();
    std::string line = a->role + " " + a->principal + " " + server::token_hash_text(token);
    std::string groups_json = "[";
    for (std::size_t i = 0; i < a->groups.size(); ++i) {
      line += (i == 0 ? " groups=" : ",") + a->groups[i];
      groups_json += (i == 0 ? "" : ",") + protocol::json_string(a->groups[i]);
    }
    groups_json += "]";
    // The line must read back exactly as the daemon will read it.
    server::TokenStore check;
    std::vector<std::string> errors;
    if (!server::TokenStore::parse(line, "--group", &check, &errors)) {
      for (const auto& e : errors) std::fprintf(stderr, "warden: %s\n", e.c_str());
      *exit_code = kExitUsage;
      return;
    }
    if (a->format == "json") {
      std::printf("{\"token\":%s,\"role\":%s,\"principal\":%s,\"groups\":%s,\"line\":%s}\n",
                  protocol::json_string(token).c_str(), protocol::json_string(a->role).c_str(),
                  protocol::json_string(a->principal).c_str(), groups_json.c_str(),
                  protocol::json_string(line).c_str());
    } else {
      std::printf("token: %s\n", token.c_str());
      std::printf("add this line to the token file (warden serve --tokens FILE):\n%s\n",
                  line.c_str());
      std::fprintf(stderr, "The token is shown once; the daemon stores only its hash.\n");
    }
    *exit_code = kExitOk;
  });
}

}  // namespace

void register_server_commands(CLI::App& app, int* exit_code) {
  register_serve(app, exit_code);
  register_decide(app, exit_code);
  register_status(app, exit_code);
  register_token(app, exit_code);
}

}  // namespace warden::cli
