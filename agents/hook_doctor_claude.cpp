// `hook doctor` for Claude Code: the settings layers that can switch hooks off, bypass
// Claude's own prompts, or add hooks of their own next to Warden's.
#include <rapidjson/document.h>

#include <cstdlib>
#include <filesystem>

#include "agents/claude_settings.h"
#include "agents/hook_doctor_checks.h"
#include "bindings/json.h"

namespace warden::agents::doctor {

namespace {

namespace fs = std::filesystem;

struct Layer {
  std::string name;
  std::string path;
};

std::vector<Layer> layers(const DoctorOptions& o) {
  std::vector<Layer> out;
  const char* home = std::getenv("HOME");
  std::string user =
      !o.claude_user_settings.empty()
          ? o.claude_user_settings
          : (home && *home ? (fs::path(home) / ".claude/settings.json").string() : "");
  if (!o.claude_managed_settings.empty()) out.push_back({"managed", o.claude_managed_settings});
  if (!user.empty()) out.push_back({"user", user});
  if (!o.project_dir.empty()) {
    out.push_back({"project", (fs::path(o.project_dir) / ".claude/settings.json").string()});
    out.push_back({"local", (fs::path(o.project_dir) / ".claude/settings.local.json").string()});
  }
  return out;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return a == b || fs::equivalent(a, b, ec);
}

}  // namespace

void check_claude_layers(const DoctorOptions& o, const rapidjson::Document& checked,
                         DoctorReport* r) {
  bool managed_only = false, warden_in_managed = false;
  for (const auto& layer : layers(o)) {
    const bool is_checked = same_file(layer.path, o.settings_file);
    rapidjson::Document other;
    const rapidjson::Value* doc = &checked;
    if (!is_checked) {
      auto text = read_text(layer.path);
      if (!text) continue;
      if (warden::json::parse(*text, &other) || !other.IsObject()) {
        add(r, CheckLevel::Warn, layer.name + " settings " + layer.path + " are not valid JSON");
        continue;
      }
      doc = &other;
    }
    const std::string where = layer.name + " settings " + layer.path;
    if (doc->HasMember("disableAllHooks") && (*doc)["disableAllHooks"].IsBool() &&
        (*doc)["disableAllHooks"].GetBool()) {
      add(r, CheckLevel::Fail,
          where + " set disableAllHooks: true: Claude Code runs no hook, Warden's included");
    }
    if (layer.name == "managed" && doc->HasMember("allowManagedHooksOnly") &&
        (*doc)["allowManagedHooksOnly"].IsBool() && (*doc)["allowManagedHooksOnly"].GetBool()) {
      managed_only = true;
    }
    if (doc->HasMember("permissions") && (*doc)["permissions"].IsObject()) {
      const auto& p = (*doc)["permissions"];
      if (p.HasMember("defaultMode") && p["defaultMode"].IsString() &&
          std::string(p["defaultMode"].GetString()) == "bypassPermissions") {
        add(r, CheckLevel::Warn,
            where +
                " set permissions.defaultMode bypassPermissions: Claude asks nothing itself, "
                "so Warden is the only check and approval-required must answer deny "
                "(`warden hook claude-code` does so in this mode)");
      }
      if (p.HasMember("allow") && p["allow"].IsArray() && !p["allow"].Empty()) {
        add(r, CheckLevel::Info,
            where + " allow " + std::to_string(p["allow"].Size()) +
                " permission rule(s): Claude runs those without asking, but Warden's hook is "
                "still called first and its deny wins");
      }
      if (p.HasMember("deny") && p["deny"].IsArray() && !p["deny"].Empty()) {
        add(r, CheckLevel::Info,
            where + " deny " + std::to_string(p["deny"].Size()) +
                " permission rule(s): Claude refuses those even when Warden allows them");
      }
    }
    int others = 0, wardens = 0;
    for (const auto& h : claude_pretooluse_hooks(*doc)) {
      if (is_warden_hook_command(h.command, HookAgent::ClaudeCode)) {
        ++wardens;
      } else {
        ++others;
      }
    }
    if (layer.name == "managed" && wardens > 0) warden_in_managed = true;
    if (others > 0) {
      add(r, CheckLevel::Info,
          where + " hold " + std::to_string(others) +
              " other PreToolUse hook(s): they run next to Warden's, and "
              "any deny among them wins");
    }
    if (!is_checked && wardens > 0) {
      add(r, CheckLevel::Warn,
          where +
              " hold a Warden hook too: Claude runs both, each call is "
              "decided twice");
    }
  }
  if (managed_only && !warden_in_managed) {
    add(r, CheckLevel::Fail,
        "managed settings set allowManagedHooksOnly: Claude Code ignores Warden's hook in " +
            o.settings_file + "; it must be installed in the managed settings");
  }
}

}  // namespace warden::agents::doctor
