// End to end through the real `warden serve` binary: submit with the `script` provider and
// with the `openai` kind against a loopback model server (HttpFake). The model proposes
// `rm -rf ~` → rejected → proposes `ls` → executed in the workspace (a real process) →
// output fed back → final reply; the events on the wire in order; the audit log holds the
// decisions and the act record and verifies; the depth limit; heartbeats never actuate;
// E_NO_PROVIDER; the agent role; a cascade failure reply with every provider down; the
// connection closing mid-run cancels it.
#include "submit_daemon.h"

#include <catch2/catch.hpp>

#include "server/errors.h"
#include "tests/support/http_fake.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

struct RunResult {
  std::vector<std::string> events;  // event payloads, in order
  std::string response;             // the response message ("" if none)
  std::string status;               // response payload.status
};

std::string member_of(const rapidjson::Value& v, const char* key) {
  return v.IsObject() && v.HasMember(key) && v[key].IsString() ? v[key].GetString() : "";
}

RunResult submit_and_read(Client& client, const std::string& id, const std::string& fields) {
  RunResult out;
  std::string error;
  REQUIRE(client.send_message(make_request(id, "submit", fields), &error));
  for (;;) {
    std::string message = read_or_fail(client, 60000ms);
    auto doc = parse(message);
    INFO(message);
    REQUIRE(doc.IsObject());
    REQUIRE(reply_id(message) == id);
    if (member_of(doc, "type") == "event") {
      out.events.push_back(to_json_text(doc["payload"]));
      continue;
    }
    out.response = message;
    out.status = member_of(doc["payload"], "status");
    return out;
  }
}

RunResult submit_text(const std::string& address, const std::string& text,
                      const std::string& extra = "") {
  Client client;
  std::string error;
  REQUIRE(client.connect(address, 5000ms, &error));
  REQUIRE(client.authenticate(Tokens{}.agent, 5000ms, &error));
  return submit_and_read(client, "run",
                         "\"text\":" + json_string(text) + ",\"session\":\"e2e\"" + extra);
}

std::vector<std::string> kinds(const RunResult& run) {
  std::vector<std::string> out;
  for (const auto& e : run.events) out.push_back(member_of(parse(e), "event"));
  return out;
}

// The events of a kind, parsed.
std::vector<rapidjson::Document> submit_events_of(const RunResult& run, const std::string& kind) {
  std::vector<rapidjson::Document> out;
  for (const auto& e : run.events) {
    auto doc = parse(e);
    if (member_of(doc, "event") == kind) out.push_back(std::move(doc));
  }
  return out;
}

std::string dump(const RunResult& run) {
  std::string out;
  for (const auto& e : run.events) out += e + "\n";
  return out + run.response;
}

std::string script_provider(const std::string& path) {
  return "[[reasoning.providers]]\nname = \"scripted\"\nkind = \"script\"\nscript = " +
         json_string(path) + "\n";
}

// `warden ARGS…` to completion; stdout and the exit status.
int submit_run_warden(const std::vector<std::string>& args, std::string* out) {
  int pipe_fd[2];
  REQUIRE(::pipe2(pipe_fd, O_CLOEXEC) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(pipe_fd[1], 1);
    ::dup2(pipe_fd[1], 2);
    std::vector<char*> argv{const_cast<char*>(kWardenBinary.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(kWardenBinary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(pipe_fd[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipe_fd[0], buf, sizeof buf)) > 0)
    out->append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The OpenAI chat-completions answer carrying `content`.
std::string openai_answer(const std::string& content) {
  return "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
         "\"message\":{\"role\":\"assistant\",\"content\":" +
         json_string(content) +
         "},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5}}";
}

void check_rm_then_ls(const RunResult& run, const SubmitDaemon& daemon) {
  INFO(dump(run));
  CHECK(run.status == "done");
  CHECK(error_code(run.response) == "");
  auto decisions = submit_events_of(run, "decision");
  REQUIRE(decisions.size() >= 3);
  // 1: rm -rf ~ refused by its rule; 2: ls approved; its last-mile check approved.
  CHECK(member_of(decisions[0], "outcome") == "reject");
  CHECK(to_json_text(decisions[0]).find("no-rm") != std::string::npos);
  CHECK(to_json_text(decisions[0]).find("rm -rf ~") != std::string::npos);
  CHECK(member_of(decisions[1], "outcome") == "approve");
  CHECK(to_json_text(decisions[1]).find("ls-ok") != std::string::npos);
  CHECK(member_of(decisions[2], "stage") == "last-mile");
  CHECK(member_of(decisions[2], "outcome") == "approve");
  // ls ran in the workspace: its output is the workspace's file.
  auto outputs = submit_events_of(run, "tool-output");
  REQUIRE(outputs.size() == 1);
  CHECK(member_of(outputs[0], "target") == "shell");
  CHECK(member_of(outputs[0], "output").find("marker.txt") != std::string::npos);
  CHECK(member_of(outputs[0], "decision_id") == member_of(decisions[2], "decision_id"));
  // The model's final reply came after the output, and nothing was deleted.
  auto k = kinds(run);
  auto out_at = std::find(k.begin(), k.end(), "tool-output");
  auto reply_at = std::find(k.begin(), k.end(), "reply");
  REQUIRE(reply_at != k.end());
  CHECK(out_at < reply_at);
  CHECK(k.back() == "final");
  CHECK(fs::exists(fs::path(daemon.workspace()) / "marker.txt"));
}

}  // namespace

TEST_CASE("submit end to end with the script provider: rm -rf ~ refused, ls run, reply",
          "[server][submit][e2e]") {
  TempDir dir;
  std::string script = dir.write(
      "model.jsonl", script_line(shell_proposal("rm -rf ~")) + script_line(shell_proposal("ls")) +
                         script_line(reply_proposal("the workspace holds marker.txt")));
  SubmitDaemon daemon(dir, script_provider(script));
  INFO(daemon.err());
  REQUIRE(daemon.serving());
  RunResult run = submit_text(daemon.address(), "tidy up my home directory");
  check_rm_then_ls(run, daemon);
  auto replies = submit_events_of(run, "reply");
  REQUIRE_FALSE(replies.empty());
  CHECK(member_of(replies.back(), "text") == "the workspace holds marker.txt");

  // The audit log holds every decision of the run and the dispatch, and verifies.
  std::string log = dir.read("state/audit.jsonl");
  for (const auto& d : submit_events_of(run, "decision")) {
    CHECK(log.find("\"decision_id\":\"" + member_of(d, "decision_id") + "\"") != std::string::npos);
  }
  auto outputs = submit_events_of(run, "tool-output");
  REQUIRE(outputs.size() == 1);
  CHECK(log.find("\"kind\":\"act\"") != std::string::npos);
  CHECK(log.find("\"decision_id\":\"" + member_of(outputs[0], "decision_id") +
                 "\",\"target\":\"shell\",\"principal\":\"alice\",\"ok\":true,\"error_code\":\"\","
                 "\"exit_code\":0,\"truncated\":false") != std::string::npos);
  CHECK(daemon.terminate() == 0);
  std::string out;
  CHECK(submit_run_warden(
            {"audit", "verify", daemon.log(), "--key", daemon.state() + "/audit-signing.pem.pub"},
            &out) == 0);
  INFO(out);
  out.clear();
  CHECK(submit_run_warden(
            {"replay", daemon.log(), "--rules", dir.str() + "/rules", "--format", "json"}, &out) ==
        0);
}

TEST_CASE("submit end to end with the openai kind against a loopback model server",
          "[server][submit][e2e]") {
  TempDir dir;
  warden::testing::HttpFake model;
  model.push(
      {200, {{"Content-Type", "application/json"}}, openai_answer(shell_proposal("rm -rf ~"))});
  model.push({200, {{"Content-Type", "application/json"}}, openai_answer(shell_proposal("ls"))});
  model.push({200,
              {{"Content-Type", "application/json"}},
              openai_answer(reply_proposal("the workspace holds marker.txt"))});
  SubmitDaemon daemon(dir,
                      "[[reasoning.providers]]\nname = \"fake-openai\"\nkind = \"openai\"\n"
                      "base_url = " +
                          json_string(model.base_url()) +
                          "\nmodel = \"m\"\nnative_tools = false\n");
  INFO(daemon.err());
  REQUIRE(daemon.serving());
  RunResult run = submit_text(daemon.address(), "tidy up my home directory");
  check_rm_then_ls(run, daemon);
  auto seen = model.requests();
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].target == "/v1/chat/completions");
  // The retry carried the rejection; the third call carried ls's output.
  CHECK(seen[1].body.find("no-rm") != std::string::npos);
  CHECK(seen[2].body.find("marker.txt") != std::string::npos);
}

TEST_CASE("submit: the depth limit stops a model that never stops acting",
          "[server][submit][e2e]") {
  TempDir dir;
  std::string script =
      dir.write("model.jsonl", script_line(shell_proposal("ls"), "\"repeat\":true"));
  SubmitDaemon daemon(dir, script_provider(script) + "[limits]\ndepth = 2\n");
  INFO(daemon.err());
  REQUIRE(daemon.serving());
  RunResult run = submit_text(daemon.address(), "list forever");
  INFO(dump(run));
  CHECK(run.status == "dropped");
  CHECK(submit_events_of(run, "dropped").size() == 1);
  // depth 0, 1, 2 ran; depth 3 was dropped.
  CHECK(submit_events_of(run, "tool-output").size() == 3);
}

TEST_CASE("submit: a heartbeat never reaches the model nor an actuator", "[server][submit][e2e]") {
  TempDir dir;
  // Any model call would get ls approved and run.
  std::string script =
      dir.write("model.jsonl", script_line(shell_proposal("ls"), "\"repeat\":true"));
  SubmitDaemon daemon(dir, script_provider(script));
  INFO(daemon.err());
  REQUIRE(daemon.serving());
  RunResult run = submit_text(daemon.address(), "tick", ",\"sensor\":\"heartbeat\"");
  INFO(dump(run));
  CHECK(error_code(run.response) == "");
  CHECK(submit_events_of(run, "decision").empty());
  CHECK(submit_events_of(run, "tool-output").empty());
  CHECK(dir.read("state/audit.jsonl").find("\"kind\":\"act\"") == std::string::npos);
}

TEST_CASE("submit: E_NO_PROVIDER without providers, agent role required", "[server][submit][e2e]") {
  TempDir dir;
  SubmitDaemon daemon(dir, "");
  INFO(daemon.err());
  REQUIRE(daemon.serving());
  Client agent;
  std::string error;
  REQUIRE(agent.connect(daemon.address(), 5000ms, &error));
  REQUIRE(agent.authenticate(Tokens{}.agent, 5000ms, &error));
  REQUIRE(agent.send_message(make_request("1", "submit", "\"text\":\"hi\""), &error));
  CHECK(error_code(read_or_fail(agent)) == err::kNoProvider);
  Client admin;
  REQUIRE(admin.connect(daemon.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  REQUIRE(admin.send_message(make_request("2", "submit", "\"text\":\"hi\""), &error));
  CHECK(error_code(read_or_fail(admin)) == err::kForbidden);
  // warden submit says so and exits 4.
  std::string out;
  CHECK(submit_run_warden({"submit", "hi", "--addr", daemon.address(), "--token", Tokens{}.agent},
                          &out) == 4);
  CHECK(out.find("E_NO_PROVIDER") != std::string::npos);
}

TEST_CASE("submit: every provider down is a cascade failure reply, not a crash",
          "[server][submit][e2e]") {
  TempDir dir;
  warden::testing::HttpFake down;
  down.set_fallback({500, {{"Content-Type", "text/plain"}}, "upstream exploded"});
  warden::testing::HttpFake garbage;
  garbage.set_fallback({200, {{"Content-Type", "application/json"}}, "{not json"});
  SubmitDaemon daemon(dir,
                      "[[reasoning.providers]]\nname = \"first\"\nkind = \"openai\"\nbase_url = " +
                          json_string(down.base_url()) +
                          "\nmodel = \"m\"\n[[reasoning.providers]]\nname = \"second\"\nkind = "
                          "\"openai\"\nbase_url = " +
                          json_string(garbage.base_url()) + "\nmodel = \"m\"\n");
  INFO(daemon.err());
  REQUIRE(daemon.serving());
  RunResult run = submit_text(daemon.address(), "hello");
  INFO(dump(run));
  CHECK(run.status == "failed");
  auto errors = submit_events_of(run, "error");
  REQUIRE(errors.size() == 1);
  std::string message = member_of(errors[0], "message");
  CHECK(message.find("cascade failure") != std::string::npos);
  CHECK(message.find("first") != std::string::npos);
  CHECK(message.find("second") != std::string::npos);
  CHECK_FALSE(submit_events_of(run, "reply").empty());
  // The daemon still serves.
  RunResult again = submit_text(daemon.address(), "hello again");
  CHECK(again.status == "failed");
  CHECK(daemon.terminate() == 0);
}

TEST_CASE("submit: closing the connection mid-run cancels the run", "[server][submit][e2e]") {
  TempDir dir;
  warden::testing::HttpFake model;
  Gate second_call, answer_it;
  std::atomic<int> calls{0};
  model.route("/v1/chat/completions", [&](const warden::testing::HttpSeen&) {
    if (++calls == 1) {
      return warden::testing::HttpReply{
          200, {{"Content-Type", "application/json"}}, openai_answer(shell_proposal("ls"))};
    }
    // The second model call (after ls's output) waits until the client has gone.
    second_call.open();
    answer_it.wait();
    return warden::testing::HttpReply{
        200, {{"Content-Type", "application/json"}}, openai_answer(shell_proposal("ls -la"))};
  });
  SubmitDaemon daemon(dir,
                      "[[reasoning.providers]]\nname = \"m\"\nkind = \"openai\"\nbase_url = " +
                          json_string(model.base_url()) + "\nmodel = \"m\"\n",
                      {"--log-level", "debug"});
  REQUIRE(daemon.serving());
  {
    Client client;
    std::string error;
    REQUIRE(client.connect(daemon.address(), 5000ms, &error));
    REQUIRE(client.authenticate(Tokens{}.agent, 5000ms, &error));
    REQUIRE(client.send_message(make_request("c", "submit", "\"text\":\"look around\""), &error));
    REQUIRE(second_call.wait());
  }  // the client goes away while the model "thinks"
  // The daemon has seen the close before the model answers.
  // (EOF with the run in flight, or a reset: unread events make the close a reset).
  bool seen = eventually([&] {
    std::string e = daemon.err();
    return e.find("peer closed its side") != std::string::npos ||
           e.find("connection 1 closed") != std::string::npos;
  });
  INFO(daemon.err());
  REQUIRE(seen);
  answer_it.open();
  Client admin;
  std::string error;
  REQUIRE(admin.connect(daemon.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  REQUIRE(eventually([&] {
    REQUIRE(admin.send_message(make_request("s", "status"), &error));
    auto doc = parse(read_or_fail(admin));
    return doc["payload"]["pipelines"]["running"].GetUint64() == 0;
  }));
  // The second proposal (ls -la) was never decided nor run; no third model call.
  std::string log = dir.read("state/audit.jsonl");
  CHECK(log.find("ls -la") == std::string::npos);
  CHECK(calls == 2);
  std::size_t acts = 0;
  for (std::size_t at = log.find("\"kind\":\"act\""); at != std::string::npos;
       at = log.find("\"kind\":\"act\"", at + 1)) {
    ++acts;
  }
  CHECK(acts == 1);  // the first ls only
}
