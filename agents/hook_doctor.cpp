// `warden hook doctor`: the checks common to both agents, then each agent's own traps
// (hook_doctor_claude.cpp, hook_doctor_codex.cpp); the probe is in hook_probe.cpp.
#include "agents/hook_doctor.h"

#include <rapidjson/document.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "agents/claude_settings.h"
#include "agents/codex_config.h"
#include "agents/hook_doctor_checks.h"
#include "bindings/json.h"

namespace warden::agents {

namespace fs = std::filesystem;

std::string_view level_name(CheckLevel level) {
  switch (level) {
    case CheckLevel::Ok:
      return "OK";
    case CheckLevel::Info:
      return "INFO";
    case CheckLevel::Warn:
      return "WARN";
    case CheckLevel::Fail:
      return "FAIL";
  }
  return "FAIL";
}

bool DoctorReport::failed() const {
  for (const auto& l : lines) {
    if (l.level == CheckLevel::Fail) return true;
  }
  return false;
}

bool matcher_covers(HookAgent agent, bool has_matcher, const std::string& matcher,
                    const std::string& tool) {
  if (!has_matcher || matcher.empty() || matcher == "*") return true;
  if (agent == HookAgent::ClaudeCode &&
      matcher.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_- ,|") ==
          std::string::npos) {
    // Claude Code: plain names (separated by | or ,) match exactly.
    std::string name;
    for (char c : matcher + "|") {
      if (c == '|' || c == ',') {
        auto b = name.find_first_not_of(' '), e = name.find_last_not_of(' ');
        if (b != std::string::npos && name.substr(b, e - b + 1) == tool) return true;
        name.clear();
      } else {
        name += c;
      }
    }
    return false;
  }
  try {  // a regex, unanchored (JavaScript's test, Rust's is_match)
    return std::regex_search(tool, std::regex(matcher, std::regex::ECMAScript));
  } catch (const std::regex_error&) {
    return false;  // an invalid matcher selects nothing we can vouch for
  }
}

namespace doctor {

void add(DoctorReport* r, CheckLevel level, std::string text) {
  r->lines.push_back({level, std::move(text)});
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

std::string flag_value(const std::vector<std::string>& words, const std::string& flag) {
  std::string value;
  for (std::size_t i = 3; i < words.size(); ++i) {
    if (words[i] == flag && i + 1 < words.size()) value = words[i + 1];
    if (words[i].rfind(flag + "=", 0) == 0) value = words[i].substr(flag.size() + 1);
  }
  return value;
}

// The checks of Warden's entry itself, the same for both agents.
void check_entry(const DoctorOptions& o, const std::vector<HookEntry>& hooks, DoctorReport* r,
                 HookEntry* warden_entry, bool* found) {
  std::vector<HookEntry> ours;
  for (const auto& h : hooks) {
    if (is_warden_hook_command(h.command, o.agent)) ours.push_back(h);
  }
  *found = !ours.empty();
  if (ours.empty()) {
    add(r, CheckLevel::Fail,
        "no Warden PreToolUse entry (" + std::to_string(hooks.size()) +
            " other hook(s)): run `warden hook install " + std::string(agent_name(o.agent)) +
            (o.project_dir.empty() ? " --user" : " --project " + shell_quote(o.project_dir)) + "`");
    return;
  }
  *warden_entry = ours.front();
  add(r, CheckLevel::Ok, "Warden PreToolUse entry: " + warden_entry->command);
  if (ours.size() > 1) {
    add(r, CheckLevel::Warn,
        std::to_string(ours.size()) + " Warden entries: each call is decided once per entry");
  }
  if (warden_entry->type != "command") {
    add(r, CheckLevel::Fail,
        "the Warden hook's type is \"" + warden_entry->type +
            "\", not \"command\": the agent does not run it");
  }

  const std::vector<std::string> tools =
      o.agent == HookAgent::ClaudeCode
          ? std::vector<std::string>{"Bash",         "Write",     "Edit", "MultiEdit",
                                     "NotebookEdit", "Read",      "Grep", "Glob",
                                     "WebFetch",     "WebSearch", "Task", "mcp__server__tool"}
          : std::vector<std::string>{"Bash", "apply_patch", "mcp__server__tool"};
  std::string uncovered;
  for (const auto& t : tools) {
    if (!matcher_covers(o.agent, warden_entry->has_matcher, warden_entry->matcher, t)) {
      uncovered += (uncovered.empty() ? "" : ", ") + t;
    }
  }
  std::string matcher = warden_entry->has_matcher ? "\"" + warden_entry->matcher + "\"" : "(none)";
  if (uncovered.empty()) {
    add(r, CheckLevel::Ok, "matcher " + matcher + " covers every tool");
  } else {
    add(r, CheckLevel::Warn,
        "matcher " + matcher + " leaves " + uncovered +
            " unguarded: Warden never sees those calls (use \"" +
            (o.agent == HookAgent::ClaudeCode ? "*" : kCodexMatcher) + "\")");
  }

  auto words = split_shell_words(warden_entry->command).value_or(std::vector<std::string>{});
  const std::string binary = words.empty() ? "" : words[0];
  if (!binary.empty() && binary.front() == '/' && ::access(binary.c_str(), X_OK) == 0 &&
      fs::is_regular_file(binary)) {
    add(r, CheckLevel::Ok, "binary " + binary + " is executable");
  } else if (!binary.empty() && binary.front() != '/') {
    add(r, CheckLevel::Warn,
        "binary \"" + binary + "\" is not an absolute path: it depends on the agent's PATH");
  } else {
    add(r, CheckLevel::Fail, "binary " + binary + " does not exist or is not executable");
  }

  const double hook_timeout =
      warden_entry->timeout_seconds.value_or(o.agent == HookAgent::ClaudeCode ? 60.0 : 600.0);
  const std::string budget_text = flag_value(words, "--timeout-ms");
  const std::string wait_text = flag_value(words, "--wait");
  long budget_ms = kHookDefaultBudgetMs;
  long wait_s = 0;
  try {
    if (!budget_text.empty()) budget_ms = std::stol(budget_text);
  } catch (...) {
    add(r, CheckLevel::Fail, "--timeout-ms \"" + budget_text + "\" is not a number");
  }
  try {
    if (!wait_text.empty()) wait_s = std::stol(wait_text);
  } catch (...) {
    add(r, CheckLevel::Fail, "--wait \"" + wait_text + "\" is not a number");
  }
  // The hook may run its budget plus the wait (--wait: the daemon holds its reply for a
  // person's answer), and the agent must not give up on it before.
  std::ostringstream t;
  t << "decision budget " << budget_ms << " ms" << (budget_text.empty() ? " (default)" : "");
  if (wait_s > 0) t << " + wait " << wait_s << " s";
  t << " vs hook timeout " << hook_timeout << " s"
    << (warden_entry->timeout_seconds ? "" : " (agent default)");
  if (budget_ms + wait_s * 1000 + kHookMarginMs <= hook_timeout * 1000) {
    add(r, CheckLevel::Ok, t.str());
  } else {
    add(r, CheckLevel::Fail,
        t.str() + ": the budget" + (wait_s > 0 ? " and the wait" : "") + " must leave the hook " +
            std::to_string(kHookMarginMs) +
            " ms to start and answer, else the agent may give up on the "
            "hook before Warden answers, and a hook timeout is not a deny" +
            " (reinstall with `warden hook install " + std::string(agent_name(o.agent)) +
            (wait_s > 0 ? " --wait " + std::to_string(wait_s) : std::string()) +
            "`, which writes a timeout that fits)");
  }
}

void probe(const DoctorOptions& o, const HookEntry& entry, DoctorReport* r) {
  const char* home = std::getenv("HOME");
  std::string cwd = !o.project_dir.empty() ? o.project_dir : (home ? home : "/");
  auto describe = [](const ProbeAnswer& a) {
    return a.decision + (a.reason.empty() ? "" : " (" + a.reason + ")");
  };
  static const std::regex error_code(R"(\bE_[A-Z0-9_]+\b)");
  ProbeAnswer rm = probe_hook(o.agent, entry.command, cwd, "rm -rf /", o.probe_deadline);
  if (!rm.ran || rm.decision.empty()) {
    add(r, CheckLevel::Fail,
        "probe `rm -rf /` got no valid answer: " +
            (rm.ran ? "exit " + std::to_string(rm.exit_code) + ", stdout \"" + rm.stdout_text +
                          "\", stderr \"" + rm.stderr_text + "\""
                    : rm.failure));
    return;
  }
  if (!rm.json) {
    add(r, CheckLevel::Fail,
        "probe `rm -rf /`: the hook answered no decision of Warden's (exit " +
            std::to_string(rm.exit_code) + ": " + rm.reason +
            "); the agent denies, but nothing was decided");
    return;
  }
  if (rm.decision == "deny" && std::regex_search(rm.reason, error_code)) {
    add(r, CheckLevel::Fail, "probe `rm -rf /`: the hook could not decide: " + rm.reason);
    return;  // the same cause answers every call; no second probe
  }
  if (rm.decision == "deny") {
    add(r, CheckLevel::Ok, "probe `rm -rf /` denied: " + rm.reason);
  } else {
    add(r, CheckLevel::Fail,
        "probe `rm -rf /` answered " + describe(rm) + ": the rules in force do not deny it");
  }
  ProbeAnswer ls = probe_hook(o.agent, entry.command, cwd, "ls", o.probe_deadline);
  if (!ls.ran || ls.decision.empty()) {
    add(r, CheckLevel::Fail,
        "probe `ls` got no valid answer: " +
            (ls.ran ? "exit " + std::to_string(ls.exit_code) : ls.failure));
  } else if (!ls.json || (ls.decision == "deny" && std::regex_search(ls.reason, error_code))) {
    add(r, CheckLevel::Fail, "probe `ls`: the hook could not decide: " + ls.reason);
  } else if (ls.decision == "allow") {
    add(r, CheckLevel::Ok, "probe `ls` allowed");
  } else {
    add(r, CheckLevel::Warn,
        "probe `ls` answered " + describe(ls) +
            ": an everyday command is not allowed by the rules in force");
  }
}

}  // namespace doctor

DoctorReport run_doctor(const DoctorOptions& o) {
  using namespace doctor;
  DoctorReport r;
  auto text = read_text(o.settings_file);
  if (!text) {
    add(&r, CheckLevel::Fail,
        o.settings_file + " not found: run `warden hook install " +
            std::string(agent_name(o.agent)) +
            (o.project_dir.empty() ? " --user" : " --project " + shell_quote(o.project_dir)) + "`");
    return r;
  }
  std::vector<HookEntry> hooks;
  rapidjson::Document json;
  toml::table config;
  if (o.agent == HookAgent::ClaudeCode) {
    // The user's settings file: outside text, with the shared limits.
    if (const warden::json::Error e = warden::json::parse(*text, &json); e || !json.IsObject()) {
      add(&r, CheckLevel::Fail,
          o.settings_file + " is not a valid JSON object (offset " + std::to_string(e.offset) +
              ")");
      return r;
    }
    hooks = claude_pretooluse_hooks(json);
  } else {
    try {
      config = toml::parse(*text);
    } catch (const toml::parse_error& e) {
      add(&r, CheckLevel::Fail,
          o.settings_file + " is not valid TOML (line " + std::to_string(e.source().begin.line) +
              "): " + std::string(e.description()));
      return r;
    }
    hooks = codex_pretooluse_hooks(config);
  }
  add(&r, CheckLevel::Ok, o.settings_file + " parses");
  HookEntry entry;
  bool found = false;
  check_entry(o, hooks, &r, &entry, &found);
  if (o.agent == HookAgent::ClaudeCode) {
    check_claude_layers(o, json, &r);
  } else {
    check_codex(o, config, found ? &entry : nullptr, &r);
  }
  if (found && o.probe) probe(o, entry, &r);
  return r;
}

}  // namespace warden::agents
