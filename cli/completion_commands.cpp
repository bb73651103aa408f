// `warden completion bash|zsh|fish` and `warden man DIR`: the shell completions and the manual
// pages, generated from the command line's own definitions (cli_docs.h). The build runs both,
// and `cmake --install` installs what they wrote.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cli/cli_docs.h"
#include "cli/commands.h"
#include "cli/terminal_text.h"
#include "cli/version.h"

namespace warden::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProgram = "warden";

// Writes `text` to `path` whole, or says why not.
std::string write_whole_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return "cannot open " + path.string() + " for writing: " + std::strerror(errno);
  out << text;
  out.close();
  if (!out) return "cannot write " + path.string() + ": " + std::strerror(errno);
  return {};
}

void register_completion(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "completion",
      "Print the completion script of a shell (bash, zsh or fish) for warden, generated from its "
      "own command-line definitions");
  cmd->footer(
      "bash: source it, or install it as bash-completion/completions/warden. zsh: install it as "
      "_warden in a directory of $fpath (or source it after compinit). fish: install it as "
      "vendor_completions.d/warden.fish, or source it. `cmake --install` installs all three.");
  struct Args {
    std::string shell;
    std::string output;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("shell", a->shell, "The shell")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->add_option("-o,--output", a->output, "Write the script to this file instead of stdout");
  cmd->callback([&app, a, exit_code] {
    const CommandDoc root = describe_command(app, kProgram);
    const std::string script = a->shell == "bash"  ? bash_completion(root)
                               : a->shell == "zsh" ? zsh_completion(root)
                                                   : fish_completion(root);
    if (a->output.empty()) {
      std::fwrite(script.data(), 1, script.size(), stdout);
      *exit_code = std::fflush(stdout) == 0 ? kExitOk : kExitInternal;
      return;
    }
    if (std::string error = write_whole_file(a->output, script); !error.empty()) {
      std::fprintf(stderr, "warden: completion: %s\n", printable(error).c_str());
      *exit_code = kExitInternal;
      return;
    }
    *exit_code = kExitOk;
  });
}

void register_man(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "man",
      "Write the manual pages of warden and of each of its commands (warden.1, warden-serve.1, "
      "warden-audit-query.1 …) into a directory, generated from the command-line definitions");
  auto dir = std::make_shared<std::string>();
  cmd->add_option("dir", *dir,
                  "The directory (created when missing); pages of the same name are replaced")
      ->required();
  cmd->callback([&app, dir, exit_code] {
    std::error_code ec;
    fs::create_directories(*dir, ec);
    if (ec) {
      std::fprintf(stderr, "warden: man: cannot create %s: %s\n", printable(*dir).c_str(),
                   printable(ec.message()).c_str());
      *exit_code = kExitInternal;
      return;
    }
    std::string version = version_text();
    version = version.substr(0, version.find('\n'));  // "warden 0.1.0"
    for (const ManPage& page : man_pages(describe_command(app, kProgram), version)) {
      if (std::string error = write_whole_file(fs::path(*dir) / page.file_name, page.text);
          !error.empty()) {
        std::fprintf(stderr, "warden: man: %s\n", printable(error).c_str());
        *exit_code = kExitInternal;
        return;
      }
    }
    *exit_code = kExitOk;
  });
}

}  // namespace

void register_completion_commands(CLI::App& app, int* exit_code) {
  register_completion(app, exit_code);
  register_man(app, exit_code);
}

}  // namespace warden::cli
