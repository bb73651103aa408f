// `warden`: one binary, subcommands like `opa run`/`opa eval`/`opa test`.
#include <cstdio>
#include <exception>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Warden: CLIPS rules between AI agents and the world"};
  app.require_subcommand(1);
  int exit_code = warden::cli::kExitOk;
  warden::cli::register_rule_commands(app, &exit_code);
  warden::cli::register_server_commands(app, &exit_code);
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
