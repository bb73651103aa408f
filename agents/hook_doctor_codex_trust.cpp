// `hook doctor` for Codex: is Warden's hook trusted? Codex runs a non-managed hook only when
// the user config holds [hooks.state."FILE:pre_tool_use:G:H"] trusted_hash equal to the hook's
// current hash, and skips it silently otherwise. Codex itself computes the hash, so the
// doctor asks `codex app-server` (hooks/list) when Codex is at hand, else reads the table.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "agents/hook_doctor_checks.h"
#include "bindings/json.h"

namespace warden::agents::doctor {

namespace {

namespace fs = std::filesystem;

const char* kTrustHelp =
    "start `codex` in the project once and trust the hook in its review (or install it in "
    "/etc/codex/config.toml, where hooks are managed and need no trust); "
    "`codex exec --dangerously-bypass-hook-trust` runs untrusted hooks for one run";

std::string codex_home() {
  const char* h = std::getenv("CODEX_HOME");
  if (h && *h) return h;
  const char* home = std::getenv("HOME");
  return home && *home ? (fs::path(home) / ".codex").string() : "";
}

bool is_managed(const std::string& file) { return file.rfind("/etc/codex/", 0) == 0; }

std::string request(int id, const char* method, const char* params_json) {
  rapidjson::Document params;
  if (params_json) json::parse(params_json, &params);  // a literal of this file
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("jsonrpc");
  w.String("2.0");
  if (id >= 0) {
    w.Key("id");
    w.Int(id);
  }
  w.Key("method");
  w.String(method);
  if (params_json) {
    w.Key("params");
    params.Accept(w);
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

// The app-server's reply with id 2 (hooks/list), or a Null document.
rapidjson::Document reply_2(const std::string& out) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    rapidjson::Document d;
    // The app-server's output: outside text, the shared limits.
    if (!json::parse(line, &d) && d.IsObject() && d.HasMember("id") && d["id"].IsInt() &&
        d["id"].GetInt() == 2) {
      return d;
    }
  }
  return rapidjson::Document();
}

// trustStatus of the hook with `key` (or `command`) in a hooks/list reply; "" when not listed.
// *hash: the hook's currentHash.
std::string trust_status(const rapidjson::Value& reply, const std::string& key,
                         const std::string& command, std::string* hash) {
  if (!reply.HasMember("result") || !reply["result"].IsObject()) return "";
  const auto& result = reply["result"];
  if (!result.HasMember("data") || !result["data"].IsArray()) return "";
  std::string by_command;
  for (const auto& d : result["data"].GetArray()) {
    if (!d.IsObject() || !d.HasMember("hooks") || !d["hooks"].IsArray()) continue;
    for (const auto& h : d["hooks"].GetArray()) {
      if (!h.IsObject() || !h.HasMember("trustStatus") || !h["trustStatus"].IsString()) continue;
      std::string status = h["trustStatus"].GetString();
      const bool ours_by_key =
          h.HasMember("key") && h["key"].IsString() && h["key"].GetString() == key;
      const bool ours_by_command = h.HasMember("command") && h["command"].IsString() &&
                                   h["command"].GetString() == command &&
                                   h.HasMember("eventName") && h["eventName"].IsString() &&
                                   std::string(h["eventName"].GetString()) == "preToolUse";
      if (!ours_by_key && !ours_by_command) continue;
      if (h.HasMember("currentHash") && h["currentHash"].IsString())
        *hash = h["currentHash"].GetString();
      if (ours_by_key) return status;
      by_command = status;
    }
  }
  return by_command;
}

}  // namespace

void check_codex_trust(const DoctorOptions& o, const HookEntry& entry, DoctorReport* r) {
  if (is_managed(o.settings_file)) {
    add(r, CheckLevel::Ok, "hook trust: " + o.settings_file + " is managed; no trust needed");
    return;
  }
  const std::string key = fs::absolute(o.settings_file).lexically_normal().string() +
                          ":pre_tool_use:" + std::to_string(entry.group) + ":" +
                          std::to_string(entry.handler);
  if (!o.codex_binary.empty()) {
    const char* home = std::getenv("HOME");
    std::string cwd = !o.project_dir.empty() ? o.project_dir : (home ? home : "/");
    std::string input =
        request(
            1, "initialize",
            R"({"clientInfo":{"name":"warden-hook-doctor","version":"0"},"capabilities":{"experimentalApi":true}})") +
        request(-1, "initialized", nullptr) + request(2, "hooks/list", "{}");
    auto run = run_child({o.codex_binary, "app-server"}, cwd, input, o.probe_deadline,
                         [](const std::string& out) { return reply_2(out).IsObject(); });
    rapidjson::Document reply = reply_2(run.out);
    if (reply.IsObject()) {
      std::string hash;
      std::string status = trust_status(reply, key, entry.command, &hash);
      if (status == "trusted" || status == "managed") {
        add(r, CheckLevel::Ok, "hook trust: Codex reports Warden's hook " + status);
      } else if (status.empty()) {
        add(r, CheckLevel::Fail,
            "hook trust: Codex (" + o.codex_binary + " app-server, in " + cwd +
                ") does not list Warden's hook: this config layer is not active there (a "
                "project's .codex/config.toml is read only in a trusted project), so every "
                "command runs unchecked");
      } else {
        add(r, CheckLevel::Fail,
            "hook trust: Codex reports Warden's hook \"" + status +
                "\": Codex skips it silently and runs every command. " + kTrustHelp +
                ". Codex records a trust in its user config as "
                "[hooks.state.\"" +
                key + "\"] trusted_hash = \"" + hash + "\"");
      }
      return;
    }
    add(r, CheckLevel::Warn,
        "hook trust: could not ask " + o.codex_binary + " app-server (" +
            (run.ran ? "exit " + std::to_string(run.exit_code) : run.failure) +
            "); reading the trust table instead");
  }
  const std::string home = codex_home();
  const std::string user_config = home.empty() ? "" : (fs::path(home) / "config.toml").string();
  auto text = user_config.empty() ? std::nullopt : read_text(user_config);
  std::optional<std::string> hash;
  if (text) {
    try {
      toml::table t = toml::parse(*text);
      hash = t["hooks"]["state"][key]["trusted_hash"].value<std::string>();
    } catch (const toml::parse_error&) {
      add(r, CheckLevel::Fail, "hook trust: " + user_config + " is not valid TOML");
      return;
    }
  }
  if (!o.project_dir.empty()) {
    // Codex reads a project's .codex/config.toml only in a project it trusts.
    bool trusted_project = false;
    try {
      toml::table t = text ? toml::parse(*text) : toml::table();
      for (fs::path dir = fs::absolute(o.project_dir).lexically_normal(); !trusted_project;
           dir = dir.parent_path()) {
        std::string d = dir.string();
        if (d.size() > 1 && d.back() == '/') d.pop_back();
        trusted_project = t["projects"][d]["trust_level"].value_or(std::string()) == "trusted";
        if (dir == dir.parent_path()) break;
      }
    } catch (const toml::parse_error&) {
    }
    if (!trusted_project) {
      add(r, CheckLevel::Fail,
          "Codex reads " + o.settings_file + " only in a trusted project, and " + user_config +
              " has no [projects.\"" + o.project_dir +
              "\"] trust_level = \"trusted\" (or for a parent): Codex ignores Warden's hook there");
    }
  }
  if (!hash) {
    add(r, CheckLevel::Fail,
        "hook trust: Warden's hook was never trusted (no [hooks.state.\"" + key + "\"] in " +
            user_config + "): Codex skips it silently and runs every command. " + kTrustHelp);
  } else {
    add(r, CheckLevel::Warn,
        "hook trust: Warden's hook was trusted once (" + *hash +
            "); if it changed since (a new `hook install`), Codex skips it silently until it is "
            "trusted again. Pass --codex PATH to let the doctor ask Codex");
  }
}

}  // namespace warden::agents::doctor
