// The workspace root and home every front end uses when none is configured: the engine
// (EngineOptions), warden.toml and `warden serve`, `warden dry-run` and `warden test` all
// take them from here, so one proposal is judged alike everywhere. Constants only.
#pragma once

namespace warden {

// Paths inside the workspace root are "in the workspace" for rules. The default is the
// example world of the shipped rule pack's cases and examples/; a deployment sets its own
// (`workspace_root` in warden.toml, `--workspace`). The daemon refuses to start when the
// workspace holds its rules, tokens, config, state or binary.
inline constexpr const char* kDefaultWorkspaceRoot = "/home/user/project";

// What "~" and "$HOME" mean in proposal paths (the agent's home, not the daemon's).
inline constexpr const char* kDefaultHome = "/home/user";

}  // namespace warden
