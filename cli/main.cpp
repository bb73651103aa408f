// `warden`: one binary, subcommands like `opa run`/`opa eval`/`opa test`.
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "cli/version.h"

namespace {

void register_version(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("version", "Print Warden's, CLIPS's and the protocol's versions");
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("--format", *format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([format, exit_code] {
    std::printf(
        "%s\n",
        (*format == "json" ? warden::cli::version_json() : warden::cli::version_text()).c_str());
    *exit_code = warden::cli::kExitOk;
  });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Warden: CLIPS rules between AI agents and the world"};
  app.set_version_flag("--version", warden::cli::version_text(), "Print the versions and exit");
  app.require_subcommand(1);
  int exit_code = warden::cli::kExitOk;
  warden::cli::register_rule_commands(app, &exit_code);
  warden::cli::register_server_commands(app, &exit_code);
  warden::cli::register_agent_commands(app, &exit_code);
  warden::cli::register_audit_commands(app, &exit_code);
  warden::cli::register_replay_command(app, &exit_code);
  warden::cli::register_submit_commands(app, &exit_code);
  warden::cli::register_approval_commands(app, &exit_code);
  warden::cli::register_exec_commands(app, &exit_code);
  register_version(app, &exit_code);
  warden::cli::register_completion_commands(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : warden::cli::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warden: internal error: %s\n", e.what());
    return warden::cli::kExitInternal;
  }
  return exit_code;
}
