// Shell completions and manual pages generated from the command line's own definitions: the
// CLI11 tree `main` builds (every subcommand, option, flag, positional, the choices of an
// IsMember check, descriptions) is read into a CommandDoc, and each generator prints from
// that. Nothing here is written by hand per command, so nothing can go stale: `warden
// completion bash|zsh|fish` and `warden man DIR` print what the parser accepts.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace warden::cli {

struct OptionDoc {
  std::vector<std::string> long_names;   // without "--"
  std::vector<std::string> short_names;  // without "-"
  std::string value_name;                // "" for a flag; else e.g. TEXT, UINT
  std::vector<std::string> choices;      // from an IsMember check, in its order
  std::string default_value;             // when the option shows one (capture_default_str)
  std::string envname;                   // the environment variable it reads, if any
  std::string description;
  bool required = false;
  bool repeatable = false;
};

struct PositionalDoc {
  std::string name;
  std::string value_name;
  std::vector<std::string> choices;
  std::string description;
  bool required = false;
  bool repeatable = false;
};

struct CommandDoc {
  std::vector<std::string> path;  // {"warden"}, {"warden", "audit", "query"}
  std::string description;
  std::string footer;
  std::vector<OptionDoc> options;  // -h,--help included; hidden ones left out
  std::vector<PositionalDoc> positionals;
  std::vector<CommandDoc> subcommands;  // hidden (no group) and disabled ones left out
  bool requires_subcommand = false;
};

// Reads the tree under `app`; `program` names the root (the binary's name).
CommandDoc describe_command(CLI::App& app, const std::string& program);

// Every command of the tree, the root first, depth first in definition order.
std::vector<const CommandDoc*> all_commands(const CommandDoc& root);

// The first sentence of a description (for one-line summaries).
std::string first_sentence(const std::string& text);

// Completion scripts: bash (a function for `complete -F`), zsh (#compdef, _arguments) and fish
// (`complete` lines).
std::string bash_completion(const CommandDoc& root);
std::string zsh_completion(const CommandDoc& root);
std::string fish_completion(const CommandDoc& root);

struct ManPage {
  std::string file_name;  // warden.1, warden-audit-query.1
  std::string text;       // roff (man macros), ASCII only
};
// One page per command. `version` goes into the page's header ("warden 0.1.0").
std::vector<ManPage> man_pages(const CommandDoc& root, const std::string& version);

}  // namespace warden::cli
