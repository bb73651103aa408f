// `warden exec`: runs one command under the kernel envelope of its approved decision
// (actuators/confine.h): the decision fetched from the daemon (--decision ID, the `envelope`
// request: once, by its principal, bound to the command's digest) or made here (--rules).
// Fails closed: without an approved decision for exactly this command and a confinement
// that holds, nothing runs and the exit status is 125 (docs/CLI.md).
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "actuators/confine.h"
#include "agents/decider.h"
#include "agents/hook_exec.h"
#include "bindings/json.h"
#include "bindings/paths.h"
#include "bindings/text.h"
#include "cli/agent_commands.h"
#include "cli/client_flags.h"
#include "cli/commands.h"
#include "cli/terminal_text.h"
#include "engine/engine.h"
#include "engine/rule_files.h"
#include "protocol/message.h"
#include "protocol/reply.h"
#include "server/errors.h"
#include "server/exec_envelopes.h"
#include "server/exec_wire.h"

namespace warden::cli {

namespace {

namespace confine = actuators::confine;

// Nothing ran: no approved decision for this command, or no confinement (docs/CLI.md).
constexpr int kExecRefused = 125;

struct ExecArgs {
  agents::DeciderConfig decider;
  std::string decision_id;
  int time_limit_s = 600;
  std::vector<std::string> command;  // after --
};

// What `warden exec` is about to run, ready for its envelope.
struct ExecPlanned {
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<EffectRecord> effects;
  std::vector<std::string> granted;  // capabilities the decision granted (`allow` facts)
  confine::Inputs inputs;
};

int exec_refuse(std::string_view code, const std::string& message) {
  std::fprintf(stderr, "warden exec: %s: %s\n", std::string(code).c_str(),
               printable(message).c_str());
  return kExecRefused;
}

std::string exec_env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string exec_real_path(const std::string& path) {
  std::error_code ec;
  auto real = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : real.string();
}

// The token files and rules this exec was handed: hidden from the command like the daemon's.
void exec_hide_own(const ExecArgs& a, confine::Inputs* in) {
  for (const std::string& f : {a.decider.token_file, exec_env("WARDEN_TOKEN_FILE")}) {
    if (!f.empty()) in->own_files.push_back(exec_real_path(f));
  }
  for (const std::string& r : a.decider.rules) in->own_files.push_back(exec_real_path(r));
}

// --decision ID: the daemon hands the decision once; the command is bound by its digest.
int exec_plan_from_daemon(const ExecArgs& a, ExecPlanned* plan) {
  const agents::DeciderConfig& c = a.decider;
  ClientFlags flags;
  flags.addr = agents::daemon_address(c);
  flags.token = c.token;
  flags.token_file = c.token_file;
  if (flags.token.empty() && flags.token_file.empty())
    flags.token_file = exec_env("WARDEN_TOKEN_FILE");
  flags.tls = c.tls;
  flags.ca = c.ca;
  flags.pin = c.pin;
  flags.server_name = c.server_name;
  flags.timeout_ms = static_cast<int>(c.budget.count());
  // With a command: its text as the rules would have seen it, bound by digest. Without one:
  // the command the daemon holds for the decision, run as bash runs a line.
  std::string text;
  if (!a.command.empty()) text = agents::exec_command_text(a.command);
  std::string fields = "\"decision_id\":";
  protocol::append_json_string(fields, a.decision_id);
  if (!a.command.empty()) {
    fields += ",\"action_digest\":";
    protocol::append_json_string(fields, server::exec_action_digest(text));
  }
  protocol::Client client;
  if (open_client(flags, &client) != kExitOk) {
    return exec_refuse(code::kExecUnknown,
                       "no decision could be fetched from the daemon at " + flags.addr);
  }
  std::string error;
  if (!client.send_message(protocol::make_request("exec", "envelope", fields), &error)) {
    return exec_refuse(code::kExecUnknown, "the daemon at " + flags.addr + ": " + error);
  }
  protocol::Message reply;
  const auto timeout = std::chrono::milliseconds(flags.timeout_ms);
  switch (protocol::read_reply(
      client, [&] { return timeout; }, {}, &reply)) {
    case protocol::ReplyStatus::Ok:
      break;
    case protocol::ReplyStatus::Malformed:
      return exec_refuse(code::kExecUnknown, "the daemon's reply is not a response");
    case protocol::ReplyStatus::Timeout:
    case protocol::ReplyStatus::Closed:
      return exec_refuse(code::kExecUnknown, "no reply from the daemon at " + flags.addr);
  }
  const rapidjson::Value* payload = &reply.payload();
  if (!reply.ok()) {
    const std::string c_code = reply.error_code();
    const std::string message = reply.error_message();
    return exec_refuse(c_code.rfind("E_", 0) == 0 ? c_code : code::kExecUnknown,
                       message.empty() ? "the daemon refused" : message);
  }
  server::ExecEnvelopeWire wire;
  if (!server::parse_exec_envelope(*payload, &wire, &error)) {
    return exec_refuse(code::kExecUnknown, "the daemon's envelope is malformed: " + error);
  }
  // What the daemon released must be what was asked for, approved, for this command.
  if (wire.decision.decision_id != a.decision_id) {
    return exec_refuse(code::kExecMismatch, "the daemon answered for another decision");
  }
  if (wire.decision.outcome != Outcome::Approve || !wire.decision.error_code.empty()) {
    return exec_refuse(code::kExecNotApproved, "decision " + a.decision_id + " is not an approve");
  }
  if (!a.command.empty() && wire.command != text) {
    return exec_refuse(code::kExecMismatch, "the command to run is not the command decision " +
                                                a.decision_id + " approved");
  }
  if (wire.command.find('\0') != std::string::npos) {
    return exec_refuse(code::kExecCommand, "the decided command holds a NUL byte");
  }
  plan->argv =
      a.command.empty() ? std::vector<std::string>{"/bin/bash", "-c", wire.command} : a.command;
  plan->cwd = wire.cwd;
  plan->granted = granted_capabilities(wire.decision);
  plan->effects = std::move(wire.decision.effects);
  plan->inputs = std::move(wire.inputs);
  exec_hide_own(a, &plan->inputs);
  return 0;
}

// --rules DIR: the command is decided here, as `warden hook --rules` decides it.
int exec_plan_in_process(const ExecArgs& a, ExecPlanned* plan) {
  const agents::DeciderConfig& c = a.decider;
  if (a.command.empty())
    return exec_refuse(code::kExecCommand, "--rules needs the command after --");
  const std::string line = agents::exec_command_text(a.command);
  if (!text::valid_utf8(line)) {
    return exec_refuse(code::kExecCommand, "the command is not UTF-8, so no rule could judge it");
  }
  char buffer[4096];
  if (!::getcwd(buffer, sizeof buffer)) {
    return exec_refuse(code::kExecCommand,
                       std::string("no working directory: ") + std::strerror(errno));
  }
  const std::string cwd = buffer;
  LoadedPolicy loaded = load_policy(c.rules);
  if (!loaded.policy) {
    std::string why;
    for (const auto& d : loaded.diagnostics) {
      if (d.severity == Severity::Error) why += (why.empty() ? "" : "; ") + d.to_text();
    }
    return exec_refuse(code::kExecNotApproved, "the rules did not load: " + why);
  }
  EngineOptions options;
  if (!c.workspace.empty()) options.workspace_root = c.workspace;
  if (!c.home.empty()) options.home = c.home;
  options.deadline = std::min<std::chrono::microseconds>(options.deadline, c.budget);
  Engine engine(loaded.policy, options);

  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.StartObject();
  w.Key("target");
  w.String("shell");
  w.Key("action");
  w.String("run");
  w.Key("payload");
  w.StartObject();
  w.Key("command");
  w.String(line.data(), static_cast<rapidjson::SizeType>(line.size()));
  w.Key("cwd");
  w.String(cwd.data(), static_cast<rapidjson::SizeType>(cwd.size()));
  w.EndObject();
  w.Key("context");
  w.StartObject();
  w.Key("agent");
  w.String("warden-exec");
  w.EndObject();
  w.EndObject();
  DecideRequest request;
  const std::string proposal(sb.GetString(), sb.GetSize());
  request.proposal_json = proposal;
  if (!c.principal.empty()) request.principal = c.principal;
  request.groups = c.groups;
  DecideResult r = engine.decide(request);
  if (!r.ok) return exec_refuse(r.error.code, r.error.message);
  const Decision& d = r.decision;
  if (d.outcome != Outcome::Approve || !d.error_code.empty()) {
    return exec_refuse(code::kExecNotApproved,
                       "decision " + d.decision_id + " is " + std::string(outcome_name(d.outcome)) +
                           (d.error_code.empty() ? "" : " (" + d.error_code + ")") + ": " +
                           d.reason);
  }
  // A rule that rewrote the command approved another command than this one.
  rapidjson::Document action;  // the engine's decided action
  warden::json::parse_stored(d.action_json, &action);
  const rapidjson::Value* p =
      action.IsObject() ? protocol::find_member(action, "payload") : nullptr;
  if (!p || string_member(*p, "command") != line) {
    return exec_refuse(code::kExecMismatch,
                       "a rule rewrote the command: run the approved form instead");
  }
  plan->argv = a.command;
  plan->cwd = paths::normalize(cwd, options.workspace_root, options.home);
  plan->effects = d.effects;
  plan->granted = granted_capabilities(d);
  plan->inputs.workspace = exec_real_path(options.workspace_root);
  exec_hide_own(a, &plan->inputs);
  return 0;
}

int exec_run(const ExecArgs& a) {
  if (a.decision_id.empty() == a.decider.rules.empty()) {
    return exec_refuse(code::kExecCommand, "give exactly one of --decision ID and --rules DIR");
  }
  for (const std::string& word : a.command) {
    if (word.find('\0') != std::string::npos) return exec_refuse(code::kExecCommand, "NUL byte");
  }
  ExecPlanned plan;
  int refused =
      a.decider.rules.empty() ? exec_plan_from_daemon(a, &plan) : exec_plan_in_process(a, &plan);
  if (refused) return refused;
  const confine::Support& support = confine::probe();
  if (!support.ok) {
    return exec_refuse(code::kExecConfine,
                       "this kernel cannot confine the command: " + support.error);
  }
  confine::Envelope envelope = confine::derive(plan.effects, plan.inputs);
  // As the shell actuator: the proxy reaches a private address only when the rules granted it.
  envelope.private_network =
      std::find(plan.granted.begin(), plan.granted.end(), "private-network") != plan.granted.end();
  std::string error;
  int status = confine::run_attached(envelope, plan.argv, exec_real_path(plan.cwd),
                                     std::chrono::seconds(a.time_limit_s), &error);
  if (status < 0)
    return exec_refuse(code::kExecConfine, error.empty() ? "the command did not start" : error);
  return status;
}

}  // namespace

void register_exec_commands(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "exec", "Run a command under the kernel envelope of its approved decision");
  cmd->footer(
      "warden exec --decision ID [-- CMD…]: the daemon hands decision ID (a shell run it "
      "approved for this token's principal, at most " +
      std::to_string(server::ExecEnvelopes::kTtl.count()) +
      " s ago, never run before) and its envelope; CMD must be the decided command (bash -c "
      "LINE is LINE; any other argv is its words joined as a shell line); without CMD the "
      "decided line runs with /bin/bash -c.\n"
      "warden exec --rules DIR [--workspace DIR] -- CMD…: CMD is decided here and must be "
      "approved.\n"
      "The command runs in the decision's cwd, in the envelope derived from the decision's "
      "effects (actuators/confine.h). Exit status: the command's (128 + signal when killed); "
      "125 when nothing ran, with `warden exec: E_CODE: why` on stderr: E_EXEC_UNKNOWN, "
      "E_EXEC_NOT_APPROVED, E_EXEC_EXPIRED, E_EXEC_USED, E_EXEC_MISMATCH, E_EXEC_COMMAND, "
      "E_EXEC_CONFINE (the kernel lacks what the envelope needs), or the engine's code.");
  auto a = std::make_shared<ExecArgs>();
  add_decider_flags(cmd, &a->decider);
  cmd->add_option("--decision", a->decision_id, "The approved decision to run under (daemon)");
  cmd->add_option("--time-limit", a->time_limit_s, "Seconds before the command is killed")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  cmd->add_option("command", a->command, "The command and its arguments (after --)");
  cmd->callback([a, exit_code] { *exit_code = exec_run(*a); });
}

}  // namespace warden::cli
