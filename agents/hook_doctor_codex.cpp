// `hook doctor` for Codex: the traps where Codex runs a command although Warden's hook would
// deny it (hooks switched off, an untrusted hook, an `ask` answer), and its own guards.
#include <filesystem>

#include "agents/codex_config.h"
#include "agents/hook_doctor_checks.h"

namespace warden::agents::doctor {

namespace fs = std::filesystem;

void check_codex(const DoctorOptions& o, const toml::table& config, const HookEntry* entry,
                 DoctorReport* r) {
  for (const char* key : {"hooks", "codex_hooks"}) {
    if (config["features"][key].value<bool>() == false) {
      add(r, CheckLevel::Fail,
          std::string("[features] ") + key + " = false: Codex runs no hook, Warden's included");
    }
  }
  if (entry) {
    auto words = split_shell_words(entry->command).value_or(std::vector<std::string>{});
    std::string mapping = flag_value(words, "--on-approval-required");
    if (mapping == "ask") {
      add(r, CheckLevel::Fail,
          "--on-approval-required ask: Codex does not support an ask answer and runs the "
          "command; use deny");
    } else {
      add(r, CheckLevel::Ok,
          "approval-required answers deny" +
              std::string(mapping.empty() ? " (the Codex hook's default)" : ""));
    }
    check_codex_trust(o, *entry, r);
  }
  if (auto policy = config["approval_policy"].value<std::string>()) {
    add(r, CheckLevel::Info,
        "approval_policy = \"" + *policy + "\"" +
            (*policy == "never" ? ": Codex asks no one; Warden's deny is the only stop"
                                : ": Codex's own approvals apply after Warden allows"));
  }
  if (auto sandbox = config["sandbox_mode"].value<std::string>()) {
    if (*sandbox == "danger-full-access") {
      add(r, CheckLevel::Warn,
          "sandbox_mode = \"danger-full-access\": a command Warden allows runs with no sandbox");
    } else {
      add(r, CheckLevel::Info,
          "sandbox_mode = \"" + *sandbox + "\": Codex's sandbox still confines what Warden allows");
    }
  }
  if (auto req = read_text(o.codex_requirements)) {
    try {
      toml::table t = toml::parse(*req);
      if (t["allow_managed_hooks_only"].value_or(false) &&
          o.settings_file.rfind("/etc/codex/", 0) != 0) {
        add(r, CheckLevel::Fail,
            o.codex_requirements +
                " sets allow_managed_hooks_only: Codex ignores Warden's hook "
                "in " +
                o.settings_file + "; install it in /etc/codex/config.toml");
      }
    } catch (const toml::parse_error&) {
      add(r, CheckLevel::Warn, o.codex_requirements + " is not valid TOML");
    }
  }
  fs::path hooks_json = fs::path(o.settings_file).parent_path() / "hooks.json";
  std::error_code ec;
  if (fs::exists(hooks_json, ec)) {
    add(r, CheckLevel::Info,
        hooks_json.string() +
            " exists: its hooks run next to Warden's (all matching hooks "
            "run; any deny wins)");
  }
}

}  // namespace warden::agents::doctor
