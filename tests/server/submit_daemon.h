// The real `warden serve` as a child process for the submit and chat tests: a temporary
// directory with test rules, tokens, a workspace holding one known file, a model script, and
// a warden.toml the test extends with its [reasoning] / [actuators] / [limits] sections. Reads
// the daemon's stderr on a thread; address() once serving. One per test; not thread-safe.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "engine/json_writer.h"
#include "server_fixture.h"
#include "warden_child.h"

namespace warden::server::testing {

// rm is refused, ls approved, replies approved; everything else falls to the default
// (approval-required).
inline const char* kSubmitRules = R"CLP(
(defrule no-rm
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "rm"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-rm) (reason "rm deletes files"))))
(defrule ls-ok
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "ls"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule ls-ok) (reason "listing is harmless"))))
(defrule replies-ok
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule replies-ok) (reason "fine"))))
)CLP";

// One line of a script provider's file: the model's text answer `proposal`.
inline std::string script_line(const std::string& proposal, const std::string& extra = "") {
  std::string out = "{\"text\":" + json_string(proposal);
  if (!extra.empty()) out += "," + extra;
  return out + "}\n";
}

inline std::string shell_proposal(const std::string& command) {
  return "{\"target\":\"shell\",\"action\":\"run\",\"payload\":{\"command\":" +
         json_string(command) + "},\"explanation\":\"needed for the task\"}";
}

inline std::string reply_proposal(const std::string& text) {
  return "{\"target\":\"reply\",\"action\":\"send\",\"payload\":{\"text\":" + json_string(text) +
         "}}";
}

class SubmitDaemon {
 public:
  // toml: sections appended to the generated warden.toml. The workspace holds marker.txt.
  explicit SubmitDaemon(const TempDir& dir, const std::string& toml,
                        std::vector<std::string> extra_args = {})
      : dir_(dir) {
    dir.write("rules/policy.clp", kSubmitRules);
    dir.write("workspace/marker.txt", "x");
    fs::create_directories(dir.path() / "home");
    std::string tokens = dir.write("tokens", Tokens{}.file_text(), 0600);
    std::string config = dir.write("warden.toml", toml, 0600);
    std::vector<std::string> args{"serve",
                                  "--config",
                                  config,
                                  "--listen",
                                  "127.0.0.1:0",
                                  "--tokens",
                                  tokens,
                                  "--rules",
                                  dir.str() + "/rules",
                                  "--state-dir",
                                  state(),
                                  "--workspace",
                                  workspace(),
                                  "--home",
                                  dir.str() + "/home",
                                  "--workers",
                                  "2"};
    for (auto& a : extra_args) args.push_back(a);
    child_ = std::make_unique<WardenChild>(args);
  }

  std::string state() const { return dir_.str() + "/state"; }
  std::string log() const { return state() + "/audit.jsonl"; }
  std::string workspace() const { return dir_.str() + "/workspace"; }
  std::string err() { return child_->err(); }
  // Waits until the daemon serves (true, address() set) or exits (false).
  bool serving() { return child_->serving(); }
  const std::string& address() const { return child_->address(); }
  bool exited() { return child_->exited(); }
  int exit_code() const { return child_->exit_code(); }
  // SIGTERM and wait: the audit log gets its stop record and final checkpoint.
  int terminate() { return child_->terminate(); }
  void kill9() { child_->kill9(); }

 private:
  const TempDir& dir_;
  std::unique_ptr<WardenChild> child_;
};

}  // namespace warden::server::testing
