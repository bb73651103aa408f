// Daemon and in-process deciders (agents/decider.h).
#include "agents/decider.h"

#include <poll.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "bindings/json.h"
#include "engine/engine.h"
#include "engine/rule_files.h"
#include "protocol/client.h"
#include "protocol/message.h"
#include "protocol/reply.h"

namespace warden::agents {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Causes of a missing decision that are not the daemon's or the engine's own codes.
using ::warden::code::kTimeout;      // the budget ran out before the reply
using ::warden::code::kUnavailable;  // cannot connect, or the connection broke
constexpr const char* kConfig = ::warden::code::kClientConfig;  // token or TLS settings unusable
using ::warden::code::kBadReply;  // the daemon's reply is not a decision
using ::warden::code::kInternal;  // a bug; failed closed
using ::warden::code::kTls;       // the daemon's certificate failed the checks

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

Verdict failure(std::string code, std::string message) {
  Verdict v;
  v.ok = false;
  v.error_code = std::move(code);
  v.error_message = std::move(message);
  return v;
}

// What a front end needs of a decision in its JSON form (SPEC §3): the daemon's reply.
Verdict verdict_from_json(const rapidjson::Value& d) {
  if (!d.IsObject()) return failure(kBadReply, "the decision is not a JSON object");
  auto str = [&](const rapidjson::Value& v, const char* key) -> std::optional<std::string> {
    const rapidjson::Value* m = protocol::find_member(v, key);
    if (!m || !m->IsString()) return std::nullopt;
    return std::string(m->GetString(), m->GetStringLength());
  };
  auto outcome_text = str(d, "outcome");
  auto outcome = outcome_text ? parse_outcome(*outcome_text) : std::nullopt;
  if (!outcome) return failure(kBadReply, "the decision has no valid outcome");
  Verdict v;
  v.ok = true;
  v.outcome = *outcome;
  v.reason = str(d, "reason").value_or("");
  v.decision_id = str(d, "decision_id").value_or("");
  if (const auto* rules = protocol::find_member(d, "rules"); rules && rules->IsArray()) {
    for (const auto& r : rules->GetArray()) {
      auto mode = str(r, "mode");
      auto name = str(r, "rule");
      auto o = str(r, "outcome");
      if (!name || !o || mode.value_or("enforce") != "enforce") continue;
      if (parse_outcome(*o) == v.outcome) v.rules.push_back(*name);
    }
  }
  if (const auto* rewrites = protocol::find_member(d, "rewrites");
      rewrites && rewrites->IsArray()) {
    for (const auto& w : rewrites->GetArray()) {
      const auto* applied = protocol::find_member(w, "applied");
      if (str(w, "mode").value_or("enforce") == "enforce" && applied && applied->IsBool() &&
          applied->GetBool()) {
        v.rewritten = true;
      }
    }
  }
  if (const auto* action = protocol::find_member(d, "action"); action && action->IsObject()) {
    v.action_json = protocol::to_json_text(*action);
  }
  v.decision_json = protocol::to_json_text(d);
  return v;
}

Verdict verdict_from_decision(const Decision& d) {
  Verdict v;
  v.ok = true;
  v.outcome = d.outcome;
  v.reason = d.reason;
  v.decision_id = d.decision_id;
  for (const auto& r : d.rules) {
    if (!r.monitor && r.outcome == d.outcome) v.rules.push_back(r.rule);
  }
  for (const auto& w : d.rewrites) v.rewritten = v.rewritten || (!w.monitor && w.applied);
  v.action_json = d.action_json;
  v.decision_json = decision_to_json(d);
  return v;
}

// ---- in-process -----------------------------------------------------------

class InProcessDecider final : public Decider {
 public:
  InProcessDecider(std::shared_ptr<const Policy> policy, EngineOptions options,
                   const DeciderConfig& config)
      : engine_(std::move(policy), std::move(options)), config_(config) {
    for (const auto& r : config.rules) rules_ += (rules_.empty() ? "" : " ") + r;
  }

  Verdict decide(std::string_view proposal_json) override {
    try {
      DecideRequest request;
      request.proposal_json = proposal_json;
      if (!config_.principal.empty()) request.principal = config_.principal;
      request.groups = config_.groups;
      DecideResult r = engine_.decide(request);
      if (!r.ok) return failure(r.error.code, r.error.message);
      return verdict_from_decision(r.decision);
    } catch (const std::exception& e) {
      return failure(kInternal, std::string("in-process decision failed: ") + e.what());
    } catch (...) {
      return failure(kInternal, "in-process decision failed");
    }
  }
  std::string describe() const override { return "rules " + rules_ + " (in-process)"; }

 private:
  Engine engine_;
  DeciderConfig config_;
  std::string rules_;
};

// ---- daemon ---------------------------------------------------------------

std::string resolve_daemon_address(const DeciderConfig& config);

class DaemonDecider final : public Decider {
 public:
  explicit DaemonDecider(const DeciderConfig& config) : config_(config) {
    address_ = resolve_daemon_address(config);
    setup();
  }

  Verdict decide(std::string_view proposal_json) override {
    try {
      return decide_once_or_twice(proposal_json);
    } catch (const std::exception& e) {
      client_.close();
      connected_ = false;
      return failure(kInternal, std::string("daemon decision failed: ") + e.what());
    } catch (...) {
      client_.close();
      connected_ = false;
      return failure(kInternal, "daemon decision failed");
    }
  }
  std::string describe() const override { return "daemon " + address_; }

 private:
  // The token and TLS settings; a problem here fails every decide with E_CONFIG.
  void setup() {
    token_ = config_.token;
    if (token_.empty() && !config_.token_file.empty()) {
      read_token(config_.token_file);
    } else if (token_.empty()) {
      token_ = env("WARDEN_TOKEN");
      if (token_.empty() && !env("WARDEN_TOKEN_FILE").empty()) read_token(env("WARDEN_TOKEN_FILE"));
    }
    const bool tls = config_.tls || !config_.ca.empty() || !config_.pin.empty();
    if (!tls) return;
    if (address_.rfind("unix:", 0) == 0) {
      config_error_ = "--tls, --ca and --pin apply to TCP addresses, not " + address_;
      return;
    }
    if (!config_.pin.empty() && !protocol::valid_certificate_pin(config_.pin)) {
      config_error_ = "--pin must be sha256: followed by 64 hex digits";
      return;
    }
    client_.set_tls({true, config_.ca, config_.server_name, config_.pin});
  }

  void read_token(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) {
      config_error_ = "cannot read the token file " + path;
      return;
    }
    std::string t = text.str();
    token_ = t.substr(0, t.find_first_of("\r\n"));
    if (token_.empty()) config_error_ = "the token file " + path + " is empty";
  }

  // The time left for one client call. The client rounds its waits down to whole
  // milliseconds, so 2 ms more make a wait that timed out end past our deadline (and be
  // reported as E_TIMEOUT, not as the daemon being unavailable).
  milliseconds left(Clock::time_point deadline) const {
    auto l = std::chrono::ceil<milliseconds>(deadline - Clock::now());
    return l.count() > 0 ? l + milliseconds(2) : milliseconds(0);
  }

  // A connection failure: E_TIMEOUT when the budget ran out (or a wait the client timed
  // out, whatever the clock says now), else E_UNAVAILABLE.
  Verdict lost(Clock::time_point deadline, const std::string& what) {
    client_.close();
    connected_ = false;
    if (Clock::now() >= deadline || what.find("timed out") != std::string::npos) {
      return failure(kTimeout, "no decision from the daemon at " + address_ + " within " +
                                   std::to_string(config_.budget.count()) + " ms (" + what + ")");
    }
    if (what.rfind("TLS", 0) == 0) {
      return failure(kTls, "no trusted TLS connection to the daemon at " + address_ + ": " + what);
    }
    return failure(kUnavailable, "the daemon at " + address_ + " is unavailable: " + what);
  }

  // Connects, reads the handshake and authenticates; false with *v set on failure.
  bool open(Clock::time_point deadline, Verdict* v) {
    std::string error;
    if (!client_.connect(address_, left(deadline), &error)) {
      *v = lost(deadline, error);
      return false;
    }
    if (client_.auth_required()) {
      if (token_.empty()) {
        client_.close();
        *v = failure(kConfig, "the daemon at " + address_ +
                                  " needs a token: --token-file, --token or WARDEN_TOKEN");
        return false;
      }
      if (!client_.authenticate(token_, left(deadline), &error)) {
        if (Clock::now() >= deadline || error.rfind("E_", 0) != 0) {
          *v = lost(deadline, "authentication: " + error);
          return false;
        }
        client_.close();
        std::size_t colon = error.find(": ");
        *v = failure(error.substr(0, colon),
                     "the daemon refused the token: " +
                         (colon == std::string::npos ? error : error.substr(colon + 2)));
        return false;
      }
    }
    connected_ = true;
    return true;
  }

  Verdict decide_once_or_twice(std::string_view proposal_json) {
    const auto deadline =
        Clock::now() + config_.budget + std::chrono::seconds(std::max(0, config_.wait_s));
    if (!config_error_.empty()) return failure(kConfig, config_error_);
    rapidjson::Document proposal;
    // The daemon checks the depth against its own limit.
    if (json::parse(proposal_json, &proposal, json::Limits::any_depth()) || !proposal.IsObject()) {
      return failure(code::kInputJson, "the proposal is not a JSON object");
    }
    for (int attempt = 0;; ++attempt) {
      if (connected_ && stale()) {
        client_.close();
        connected_ = false;
      }
      const bool reused = connected_;
      Verdict v;
      if (!connected_ && !open(deadline, &v)) return v;
      const std::string id = std::to_string(++next_id_);
      const std::string request = protocol::decide_request(id, proposal, false, config_.wait_s);
      if (const std::uint64_t limit = client_.max_frame_bytes(); limit && request.size() > limit) {
        return failure(code::kInputTooLarge, "the proposal (" + std::to_string(request.size()) +
                                                 " bytes) is over the daemon's frame limit of " +
                                                 std::to_string(limit) + " bytes");
      }
      std::string error;
      protocol::Message reply;
      protocol::ReplyStatus status = protocol::ReplyStatus::Closed;
      if (client_.send_message(request, &error)) {
        // With wait_s the daemon first names the approval it waits for (an event, handed to
        // on_pending), then answers once a person did or the wait ran out (a reply still
        // pending carries the approval again).
        status = protocol::read_reply(
            client_, [&] { return left(deadline); },
            [&](const protocol::Message& event) { on_event(event, id); }, &reply);
      }
      if (status == protocol::ReplyStatus::Ok) return verdict_of_reply(reply, id);
      if (status == protocol::ReplyStatus::Malformed) return malformed_reply();
      // A kept connection may have been closed by the daemon (idle timeout, reload): once
      // more on a fresh one, within the same budget.
      if (reused && attempt == 0 && status != protocol::ReplyStatus::Timeout &&
          Clock::now() < deadline) {
        client_.close();
        connected_ = false;
        continue;
      }
      return lost(deadline, status == protocol::ReplyStatus::Timeout ? "no reply"
                            : error.empty()                          ? "connection lost"
                                                                     : error);
    }
  }

  // An event on the way to the reply of request `id`: with wait_s, the pending approval.
  void on_event(const protocol::Message& event, const std::string& id) {
    const rapidjson::Value* approval = event.waiting_approval();
    if (event.id() != id || !approval || !config_.on_pending) return;
    const rapidjson::Value* aid = protocol::find_member(*approval, "id");
    const rapidjson::Value* token = protocol::find_member(*approval, "token");
    if (aid && aid->IsString() && token && token->IsString()) {
      config_.on_pending(aid->GetString(), token->GetString());
    }
  }

  // A kept connection with something to read before we asked (the daemon's idle-timeout
  // notice, or its end) is no longer usable.
  bool stale() const {
    pollfd p{client_.fd(), POLLIN, 0};
    return client_.fd() < 0 || ::poll(&p, 1, 0) != 0;
  }

  Verdict malformed_reply() {
    client_.close();
    connected_ = false;
    return failure(kBadReply, "malformed reply from the daemon at " + address_);
  }

  Verdict verdict_of_reply(const protocol::Message& reply, const std::string& id) {
    if (reply.id() != id) {
      // Not the reply to this request: the daemon's notice before it closed (a frame over
      // its limit, an idle timeout …) names the cause when there is one.
      const rapidjson::Value* e = protocol::find_member(reply.payload(), "error");
      const rapidjson::Value* code = e ? protocol::find_member(*e, "code") : nullptr;
      if (!code || !code->IsString()) return malformed_reply();
      client_.close();
      connected_ = false;
      const rapidjson::Value* message = protocol::find_member(*e, "message");
      return failure(code->GetString(), message && message->IsString()
                                            ? message->GetString()
                                            : "the daemon refused the request");
    }
    const rapidjson::Value* decision = protocol::find_member(reply.payload(), "decision");
    if (reply.ok() && decision) {
      Verdict v = verdict_from_json(*decision);
      if (const rapidjson::Value* approval = reply.waiting_approval(); v.ok && approval) {
        v.approval_id = protocol::string_member(*approval, "id");
        v.approval_token = protocol::string_member(*approval, "token");
        v.approval_status = protocol::string_member(*approval, "status");
      }
      return v;
    }
    const rapidjson::Value* e = protocol::find_member(reply.payload(), "error");
    const rapidjson::Value* code = e ? protocol::find_member(*e, "code") : nullptr;
    const rapidjson::Value* message = e ? protocol::find_member(*e, "message") : nullptr;
    return failure(
        code && code->IsString() ? code->GetString() : kBadReply,
        message && message->IsString() ? message->GetString() : "the daemon gave no decision");
  }

  using Client = protocol::Client;
  DeciderConfig config_;
  std::string address_;
  std::string token_;
  std::string config_error_;
  Client client_;
  bool connected_ = false;
  unsigned long next_id_ = 0;
};

// HOST:PORT or unix:PATH, as decider.h orders the defaults.
std::string resolve_daemon_address(const DeciderConfig& config) {
  if (!config.addr.empty()) return config.addr;
  if (std::string a = env("WARDEN_ADDR"); !a.empty()) return a;
  if (std::string sock = protocol::default_socket_path(); !sock.empty()) {
    std::error_code ec;
    if (std::filesystem::is_socket(sock, ec)) return "unix:" + sock;
  }
  return protocol::kDefaultAddress;
}

}  // namespace

std::string deciding_rules_text(const Verdict& v) {
  std::string out;
  for (const auto& r : v.rules) out += (out.empty() ? "" : ", ") + r;
  return out.empty() ? out : (v.rules.size() == 1 ? "rule " : "rules ") + out;
}

std::string daemon_address(const DeciderConfig& config) { return resolve_daemon_address(config); }

std::unique_ptr<Decider> make_decider(const DeciderConfig& config, std::string* error) {
  if (config.rules.empty()) return std::make_unique<DaemonDecider>(config);
  try {
    LoadedPolicy loaded = load_policy(config.rules);
    if (!loaded.policy) {
      if (error) {
        error->clear();
        for (const auto& d : loaded.diagnostics) {
          if (d.severity == Severity::Error) *error += d.to_text() + "\n";
        }
        if (error->empty()) *error = "the rules did not load\n";
      }
      return nullptr;
    }
    EngineOptions options;
    if (!config.workspace.empty()) options.workspace_root = config.workspace;
    if (!config.home.empty()) options.home = config.home;
    // In-process the rules running is the whole decision: its deadline is the budget
    // (--timeout-ms), not the daemon's default, which a loaded machine passes for no fault of
    // the rules.
    options.deadline = config.budget;
    return std::make_unique<InProcessDecider>(loaded.policy, options, config);
  } catch (const std::exception& e) {
    if (error) *error = std::string("cannot build the in-process engine: ") + e.what() + "\n";
    return nullptr;
  }
}

}  // namespace warden::agents
