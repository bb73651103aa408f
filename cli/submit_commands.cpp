// `warden submit "text"` and `warden chat`: a signal into a running daemon's pipeline (the
// model proposes, the rules decide, actuators act), its events printed as they arrive.
// Thin wiring over protocol::Client and submit_events.h; the work is in the daemon.
#include <rapidjson/document.h>
#include <unistd.h>

#include <clocale>
#include <cstdio>
#include <random>

#include "cli/approval_text.h"
#include "cli/client_flags.h"
#include "cli/commands.h"
#include "cli/line_editor.h"
#include "cli/submit_events.h"
#include "cli/terminal_text.h"
#include "protocol/client.h"
#include "protocol/json_text.h"
#include "protocol/message.h"
#include "protocol/reply.h"

namespace warden::cli {
namespace {

using protocol::Client;

struct SubmitFlags {
  ClientFlags client;
  std::string session;
  std::string agent;
  std::string format = "text";
  int wait_ms = 600000;
  int wait_s = 0;  // "wait_s": how long the run waits for a person's answer to an approval
};

void add_submit_flags(CLI::App* cmd, SubmitFlags* flags) {
  cmd->add_option("--session", flags->session,
                  "Session id: its history and budget (default: a new random one)");
  cmd->add_option("--agent", flags->agent, "Agent name the rules see in the proposal's context");
  cmd->add_option("--format", flags->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--wait-ms", flags->wait_ms,
                  "Longest wait for the next event (model calls and commands take time)")
      ->capture_default_str();
  cmd->add_option("--wait", flags->wait_s,
                  "When an action needs a person's approval, the run waits up to SECONDS "
                  "(0..3600) for the answer before it ends (0: it ends suspended)")
      ->check(CLI::Range(0, kMaxWaitSeconds));
  add_client_flags(cmd, &flags->client);
}

std::string random_session(const char* prefix) {
  std::random_device rd;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s-%08x", prefix, static_cast<unsigned>(rd()));
  return buf;
}

struct Outcome {
  bool ok = false;         // a final response with ok:true arrived
  bool connection = true;  // false: the connection failed (no point in going on)
  std::string status;      // the run's final status
  int cycles = 0;
};

// Sends one submit and prints its events until its response. Text goes to stdout; a
// refused request to stderr.
Outcome run_one(Client& client, const SubmitFlags& flags, const std::string& id,
                const std::string& text, const char* sensor, const std::string& session) {
  Outcome result;
  std::string fields = "\"text\":" + protocol::json_string(text) +
                       ",\"sensor\":" + protocol::json_string(sensor) +
                       ",\"session\":" + protocol::json_string(session);
  if (!flags.agent.empty()) fields += ",\"agent\":" + protocol::json_string(flags.agent);
  if (flags.wait_s > 0) fields += ",\"wait_s\":" + std::to_string(flags.wait_s);
  std::string error;
  if (!client.send_message(protocol::make_request(id, "submit", fields), &error)) {
    std::fprintf(stderr, "warden: %s\n", printable(error).c_str());
    result.connection = false;
    return result;
  }
  const bool json = flags.format == "json";
  auto on_event = [json](const protocol::Message& event) {
    const std::string text = protocol::to_json_text(event.payload());
    if (json) {
      std::printf("%s\n", json_for_terminal(text).c_str());
    } else {
      std::fputs(render_event(text).c_str(), stdout);
    }
    std::fflush(stdout);
  };
  // With --wait the next event may be a person's answer, up to wait_s later.
  const auto timeout =
      std::chrono::milliseconds(flags.wait_ms) + std::chrono::seconds(flags.wait_s);
  protocol::Message reply;
  switch (protocol::read_reply(
      client, [&] { return timeout; }, on_event, &reply)) {
    case protocol::ReplyStatus::Ok:
      break;
    case protocol::ReplyStatus::Malformed:
      std::fprintf(stderr, "warden: malformed message from the daemon\n");
      result.connection = false;
      return result;
    case protocol::ReplyStatus::Timeout:
      std::fprintf(stderr, "warden: no event from the daemon within --wait-ms\n");
      result.connection = false;
      return result;
    case protocol::ReplyStatus::Closed:
      std::fprintf(stderr, "warden: the daemon closed the connection before the run ended\n");
      result.connection = false;
      return result;
  }
  const rapidjson::Value& p = reply.payload();
  if (reply.ok()) {
    result.ok = true;
    result.status = string_member(p, "status");
    result.cycles = p.HasMember("cycles") && p["cycles"].IsInt() ? p["cycles"].GetInt() : 0;
    if (json) {
      std::printf("%s\n", json_for_terminal(protocol::to_json_text(p)).c_str());
      std::fflush(stdout);
    }
    return result;
  }
  std::fprintf(stderr, "warden: %s: %s\n", printable(reply.error_code()).c_str(),
               printable(reply.error_message()).c_str());
  return result;
}

void register_submit(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "submit",
      "Send text to a running daemon's pipeline (the model proposes, the rules decide, "
      "actuators act) and print its events as they arrive. Exit: 0 done, 1 rejected, "
      "3 suspended for approval, 4 failed");
  struct Args {
    std::string text;
    SubmitFlags flags;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("text", a->text, "What to ask")->required();
  add_submit_flags(cmd, &a->flags);
  cmd->callback([a, exit_code] {
    Client client;
    if (int rc = open_client(a->flags.client, &client); rc != kExitOk) {
      *exit_code = rc;
      return;
    }
    std::string session = a->flags.session.empty() ? random_session("submit") : a->flags.session;
    Outcome result = run_one(client, a->flags, "submit", a->text, "user-input", session);
    if (!result.ok) {
      *exit_code = kExitInternal;
      return;
    }
    if (a->flags.format == "text" && result.status != "done") {
      std::printf("— %s after %d cycle%s\n", printable(result.status).c_str(), result.cycles,
                  result.cycles == 1 ? "" : "s");
    }
    *exit_code = exit_code_for_status(result.status);
  });
}

void register_chat(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "chat",
      "Talk to a running daemon's pipeline: each line you type goes to the model, every "
      "proposed action is decided by the rules (✓ approve, ✗ reject, ⏸ approval required) "
      "and what runs is shown as it happens. /quit to leave");
  auto flags = std::make_shared<SubmitFlags>();
  add_submit_flags(cmd, flags.get());
  cmd->callback([flags, exit_code] {
    std::setlocale(LC_CTYPE, "");  // libedit edits UTF-8 lines
    Client client;
    if (int rc = open_client(flags->client, &client); rc != kExitOk) {
      *exit_code = rc;
      return;
    }
    std::string session = flags->session.empty() ? random_session("chat") : flags->session;
    LineEditor editor("warden", "you> ");
    if (editor.interactive()) {
      std::printf(
          "warden chat · session %s · every action is decided by the rules · /quit to "
          "leave\n",
          printable(session).c_str());
    }
    int turn = 0;
    std::string line;
    while (editor.read(&line)) {
      std::size_t start = line.find_first_not_of(" \t");
      if (start == std::string::npos) continue;
      line = line.substr(start, line.find_last_not_of(" \t") - start + 1);
      if (line == "/quit" || line == "/exit") break;
      if (line == "/help") {
        std::printf(
            "Type a request; the model answers and proposes actions, the rules decide "
            "each one.\n/quit leaves. Session: %s\n",
            printable(session).c_str());
        continue;
      }
      Outcome result =
          run_one(client, *flags, "chat-" + std::to_string(++turn), line, "chat-message", session);
      if (!result.connection) {
        *exit_code = kExitInternal;
        return;
      }
      if (result.ok && flags->format == "text" && result.status != "done") {
        std::printf("— %s\n", printable(result.status).c_str());
      }
      std::fflush(stdout);
    }
    *exit_code = kExitOk;
  });
}

}  // namespace

void register_submit_commands(CLI::App& app, int* exit_code) {
  register_submit(app, exit_code);
  register_chat(app, exit_code);
}

}  // namespace warden::cli
