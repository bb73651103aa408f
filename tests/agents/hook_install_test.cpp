// `warden hook install` as a real child process on real files: Claude Code's settings.json
// merged (other keys, hooks and key order kept), Codex's config.toml appended with comments
// kept, idempotent runs, in-place updates, and refusals that leave the file untouched.
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cstring>
#include <memory>

#include "agents/claude_settings.h"
#include "agents/codex_config.h"
#include "agents/hook_install.h"
#include "tests/agents/hook_setup_fixture.h"
#include "tests/build_paths.h"

using namespace warden::agents;
using namespace warden::agents::testing;

namespace {

rapidjson::Document parse_json(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

std::vector<HookEntry> warden_hooks(const std::vector<HookEntry>& hooks, HookAgent agent) {
  std::vector<HookEntry> out;
  for (const auto& h : hooks) {
    if (is_warden_hook_command(h.command, agent)) out.push_back(h);
  }
  return out;
}

ino_t inode(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_ino;
}

}  // namespace

TEST_CASE("install claude-code into a project without settings creates the entry",
          "[agents][install]") {
  HookHome dir;
  auto r = warden_cli({"hook", "install", "claude-code", "--project", dir.str(), "--addr",
                       "127.0.0.1:9105", "--token-file", dir.str() + "/token"},
                      {"HOME=" + dir.str() + "/home"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("added") != std::string::npos);
  auto doc = parse_json(dir.read(".claude/settings.json"));
  const auto& group = doc["hooks"]["PreToolUse"][0];
  CHECK(std::string(group["matcher"].GetString()) == "*");
  const auto& hook = group["hooks"][0];
  CHECK(std::string(hook["type"].GetString()) == "command");
  CHECK(hook["timeout"].GetInt() == kHookTimeoutSeconds);
  auto words = split_shell_words(hook["command"].GetString());
  REQUIRE(words);
  CHECK(*words == std::vector<std::string>{kWardenPath, "hook", "claude-code", "--addr",
                                           "127.0.0.1:9105", "--token-file", dir.str() + "/token"});
  CHECK(r.out.find(hook["command"].GetString()) != std::string::npos);
}

TEST_CASE("install keeps every other key and hook, in order", "[agents][install]") {
  HookHome dir;
  const std::string before = R"J({
  "model": "opus",
  "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
  "hooks": {
    "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/audit.sh"}]}]
  },
  "zeta": 1
})J";
  dir.write(".claude/settings.json", before, 0600);
  auto r = warden_cli(
      {"hook", "install", "claude-code", "--project", dir.str(), "--rules", kShippedRules});
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto doc = parse_json(dir.read(".claude/settings.json"));
  std::vector<std::string> keys;
  for (const auto& m : doc.GetObject()) keys.push_back(m.name.GetString());
  CHECK(keys == std::vector<std::string>{"model", "permissions", "hooks", "zeta"});
  CHECK(std::string(doc["permissions"]["allow"][0].GetString()) == "Bash(ls:*)");
  CHECK(std::string(doc["hooks"]["PostToolUse"][0]["hooks"][0]["command"].GetString()) == "fmt.sh");
  const auto& pre = doc["hooks"]["PreToolUse"];
  REQUIRE(pre.Size() == 2);
  CHECK(std::string(pre[0]["hooks"][0]["command"].GetString()) == "/usr/local/bin/audit.sh");
  CHECK(std::string(pre[0]["matcher"].GetString()) == "Bash");
  CHECK(warden_hooks(claude_pretooluse_hooks(doc), HookAgent::ClaudeCode).size() == 1);
  struct stat st {};
  REQUIRE(::stat((dir.path() / ".claude/settings.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);  // the file's mode is kept
}

TEST_CASE("install twice changes nothing the second time", "[agents][install]") {
  HookHome dir;
  std::vector<std::string> args{"hook",
                                "install",
                                "claude-code",
                                "--project",
                                dir.str(),
                                "--token-file",
                                "/etc/warden/agent.token"};
  REQUIRE(warden_cli(args).code == 0);
  const std::string file = (dir.path() / ".claude/settings.json").string();
  const std::string first = dir.read(".claude/settings.json");
  const ino_t first_inode = inode(file);
  auto again = warden_cli(args);
  REQUIRE(again.code == 0);
  CHECK(again.out.find("unchanged") != std::string::npos);
  CHECK(dir.read(".claude/settings.json") == first);
  CHECK(inode(file) == first_inode);  // not rewritten at all
}

TEST_CASE("install updates an existing Warden entry in place", "[agents][install]") {
  HookHome dir;
  dir.write(".claude/settings.json", R"({"hooks": {"PreToolUse": [
    {"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/old/warden hook claude-code --addr 10.0.0.1:1"}]},
    {"matcher": "Bash", "hooks": [{"type": "command", "command": "other.sh"}]}]}})");
  auto r = warden_cli(
      {"hook", "install", "claude-code", "--project", dir.str(), "--addr", "127.0.0.1:9200"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("updated") != std::string::npos);
  auto doc = parse_json(dir.read(".claude/settings.json"));
  const auto& pre = doc["hooks"]["PreToolUse"];
  REQUIRE(pre.Size() == 2);
  auto ours = warden_hooks(claude_pretooluse_hooks(doc), HookAgent::ClaudeCode);
  REQUIRE(ours.size() == 1);
  CHECK(ours[0].matcher == "*");  // Warden's own group matches every tool
  CHECK(ours[0].command.find(kWardenPath) == 0);
  CHECK(ours[0].command.find("127.0.0.1:9200") != std::string::npos);
  CHECK(std::string(pre[1]["hooks"][0]["command"].GetString()) == "other.sh");
}

TEST_CASE("install refuses malformed settings and leaves them untouched", "[agents][install]") {
  HookHome dir;
  const std::string broken = "{\"hooks\": {\"PreToolUse\": [\n";
  dir.write(".claude/settings.json", broken);
  auto r = warden_cli({"hook", "install", "claude-code", "--project", dir.str()});
  CHECK(r.code == 2);
  CHECK(r.err.find("E_SETTINGS_PARSE") != std::string::npos);
  CHECK(dir.read(".claude/settings.json") == broken);

  dir.write(".claude/settings.json", R"({"hooks": []})");
  r = warden_cli({"hook", "install", "claude-code", "--project", dir.str()});
  CHECK(r.code == 2);
  CHECK(r.err.find("E_SETTINGS_SHAPE") != std::string::npos);
  CHECK(dir.read(".claude/settings.json") == R"({"hooks": []})");
}

TEST_CASE("install refuses --token: no secret goes into a settings file", "[agents][install]") {
  HookHome dir;
  auto r =
      warden_cli({"hook", "install", "claude-code", "--project", dir.str(), "--token", "wdn_x"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--token-file") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path() / ".claude/settings.json"));
}

TEST_CASE("install --user writes the user's settings", "[agents][install]") {
  HookHome dir;
  auto r = warden_cli({"hook", "install", "claude-code", "--user"}, {"HOME=" + dir.str()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(fs::exists(dir.path() / ".claude/settings.json"));
  r = warden_cli({"hook", "install", "codex", "--user"},
                 {"HOME=" + dir.str(), "CODEX_HOME=" + dir.str() + "/codex-home"});
  REQUIRE(r.code == 0);
  CHECK(fs::exists(dir.path() / "codex-home/config.toml"));
}

TEST_CASE("shell quoting round-trips through the word splitter and sh", "[agents][install]") {
  for (std::string word : {"plain", "/a b/c", "it's", "$HOME", "a\"b", "back\\slash", "*", ""}) {
    auto words = split_shell_words("x " + shell_quote(word));
    REQUIRE(words);
    REQUIRE(words->size() == 2);
    CHECK((*words)[1] == word);
  }
  HookHome dir;
  const std::string odd = dir.str() + "/it's a $dir";
  fs::create_directories(odd);
  auto r = warden_cli(
      {"hook", "install", "claude-code", "--project", dir.str(), "--token-file", odd + "/token"});
  REQUIRE(r.code == 0);
  auto doc = parse_json(dir.read(".claude/settings.json"));
  std::string command = doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"].GetString();
  auto words = split_shell_words(command);
  REQUIRE(words);
  CHECK(words->back() == odd + "/token");
  CHECK(is_warden_hook_command(command, HookAgent::ClaudeCode));
  CHECK_FALSE(is_warden_hook_command(command, HookAgent::Codex));
  CHECK_FALSE(is_warden_hook_command("warden hook claude-code; rm -rf /", HookAgent::ClaudeCode));
}

TEST_CASE("install codex appends its block, keeps comments, and parses with toml++",
          "[agents][install][codex]") {
  HookHome dir;
  const std::string before =
      "# my Codex settings\n"
      "model = \"gpt-5\" # the model\n"
      "approval_policy = \"never\"\n"
      "\n"
      "[model_providers.fake]\n"
      "base_url = \"http://127.0.0.1:1/v1\" # loopback\n"
      "\n"
      "[[hooks.PreToolUse]]\n"
      "matcher = \"Bash\"\n"
      "[[hooks.PreToolUse.hooks]]\n"
      "type = \"command\"\n"
      "command = \"audit.sh\"";  // no final newline
  dir.write(".codex/config.toml", before);
  auto r =
      warden_cli({"hook", "install", "codex", "--project", dir.str(), "--rules", kShippedRules});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string after = dir.read(".codex/config.toml");
  CHECK(after.rfind(before, 0) == 0);  // everything before is kept as it was
  toml::table config = toml::parse(after);
  CHECK(config["model"].value_or(std::string()) == "gpt-5");
  auto hooks = codex_pretooluse_hooks(config);
  REQUIRE(hooks.size() == 2);
  CHECK(hooks[0].command == "audit.sh");
  auto ours = warden_hooks(hooks, HookAgent::Codex);
  REQUIRE(ours.size() == 1);
  CHECK(ours[0].matcher == "*");
  CHECK(ours[0].timeout_seconds == kHookTimeoutSeconds);
  auto words = split_shell_words(ours[0].command);
  REQUIRE(words);
  // In-process in a project: the project is the workspace; Codex: approval-required is deny.
  CHECK(*words == std::vector<std::string>{kWardenPath, "hook", "codex", "--rules", kShippedRules,
                                           "--workspace", dir.str(), "--on-approval-required",
                                           "deny"});

  // Twice: unchanged. Other flags: the command is replaced where it stands.
  auto again =
      warden_cli({"hook", "install", "codex", "--project", dir.str(), "--rules", kShippedRules});
  CHECK(again.out.find("unchanged") != std::string::npos);
  CHECK(dir.read(".codex/config.toml") == after);
  auto update =
      warden_cli({"hook", "install", "codex", "--project", dir.str(), "--addr", "127.0.0.1:9300"});
  INFO(update.err);
  REQUIRE(update.code == 0);
  CHECK(update.out.find("updated") != std::string::npos);
  const std::string updated = dir.read(".codex/config.toml");
  CHECK(updated.rfind(before, 0) == 0);
  CHECK(updated.find("# Warden decides every tool call") != std::string::npos);
  auto now = warden_hooks(codex_pretooluse_hooks(toml::parse(updated)), HookAgent::Codex);
  REQUIRE(now.size() == 1);
  CHECK(now[0].command.find("127.0.0.1:9300") != std::string::npos);
}

TEST_CASE("install codex refuses what it cannot append to, and ask", "[agents][install][codex]") {
  HookHome dir;
  const std::string inline_array =
      "# hooks written inline\n"
      "hooks.PreToolUse = [{ matcher = \"Bash\", hooks = [{ type = \"command\", command = \"a.sh\" }] }]\n";
  dir.write(".codex/config.toml", inline_array);
  auto r = warden_cli({"hook", "install", "codex", "--project", dir.str()});
  CHECK(r.code == 2);
  CHECK(r.err.find("E_SETTINGS_SHAPE") != std::string::npos);
  CHECK(r.err.find("inline array") != std::string::npos);
  CHECK(dir.read(".codex/config.toml") == inline_array);

  dir.write(".codex/config.toml", "model = \n");
  r = warden_cli({"hook", "install", "codex", "--project", dir.str()});
  CHECK(r.code == 2);
  CHECK(r.err.find("E_SETTINGS_PARSE") != std::string::npos);
  CHECK(dir.read(".codex/config.toml") == "model = \n");

  r = warden_cli(
      {"hook", "install", "codex", "--project", dir.str(), "--on-approval-required", "ask"});
  CHECK(r.code == 2);
  CHECK(r.err.find("runs the command") != std::string::npos);
}

TEST_CASE("install writes through a settings symlink and keeps it", "[agents][install]") {
  HookHome dir;
  const std::string real = dir.write("dotfiles/claude.json", "{\"model\": \"opus\"}\n");
  fs::create_directories(dir.path() / ".claude");
  fs::create_symlink(real, dir.path() / ".claude/settings.json");
  auto r = warden_cli({"hook", "install", "claude-code", "--project", dir.str()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(fs::is_symlink(dir.path() / ".claude/settings.json"));
  auto doc = parse_json(dir.read("dotfiles/claude.json"));
  CHECK(std::string(doc["model"].GetString()) == "opus");
  CHECK(warden_hooks(claude_pretooluse_hooks(doc), HookAgent::ClaudeCode).size() == 1);
}

namespace {

// `warden ARGS` run in the working directory `cwd` (the test process moves there only while
// the child is forked).
warden::cli::testing::Run warden_cli_in(const std::string& cwd, std::vector<std::string> args,
                                        std::vector<std::string> env = {}) {
  const fs::path here = fs::current_path();
  fs::current_path(cwd);
  auto child = std::make_unique<warden::cli::testing::Child>(std::move(args), std::move(env));
  fs::current_path(here);
  int code = child->finish();
  REQUIRE_FALSE(child->timed_out);
  return {code, child->out(), child->err()};
}

// The words of Warden's hook command in a Claude Code settings file, and its timeout.
std::pair<std::vector<std::string>, int> claude_entry(const HookHome& dir) {
  auto doc = parse_json(dir.read(".claude/settings.json"));
  auto ours = warden_hooks(claude_pretooluse_hooks(doc), HookAgent::ClaudeCode);
  REQUIRE(ours.size() == 1);
  auto words = split_shell_words(ours[0].command);
  REQUIRE(words);
  REQUIRE(ours[0].timeout_seconds);
  return {*words, static_cast<int>(*ours[0].timeout_seconds)};
}

HookEntry codex_entry(const std::string& text) {
  auto ours = warden_hooks(codex_pretooluse_hooks(toml::parse(text)), HookAgent::Codex);
  REQUIRE(ours.size() == 1);
  return ours[0];
}

// A Unix socket file at `path` (bound, not listening: what `stat` sees of a daemon's socket).
struct SocketFile {
  int fd = -1;
  explicit SocketFile(const std::string& path) {
    fs::create_directories(fs::path(path).parent_path());
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof addr.sun_path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  ~SocketFile() { ::close(fd); }
};

}  // namespace

TEST_CASE("install writes only where it is told: --project DIR (which must exist) or --user",
          "[agents][install]") {
  HookHome dir;
  const std::vector<std::string> env{"HOME=" + dir.str() + "/home"};
  auto codex =
      warden_cli_in(dir.str(), {"hook", "install", "codex", "--addr", "127.0.0.1:9105"}, env);
  CHECK(codex.code == 2);
  CHECK(codex.err ==
        "warden: hook install needs where to write: --project DIR (DIR/.codex/config.toml) or "
        "--user ($CODEX_HOME/config.toml, default ~/.codex/config.toml)\n");
  CHECK(codex.out.empty());
  CHECK_FALSE(fs::exists(dir.path() / ".codex"));
  auto claude = warden_cli_in(dir.str(), {"hook", "install", "claude-code"}, env);
  CHECK(claude.code == 2);
  CHECK(claude.err ==
        "warden: hook install needs where to write: --project DIR (DIR/.claude/settings.json) or "
        "--user (~/.claude/settings.json)\n");
  CHECK_FALSE(fs::exists(dir.path() / ".claude"));

  // A project directory that is not there is not made: a typo must not get a settings file.
  const std::string missing = dir.str() + "/no-such-project";
  for (const char* agent : {"claude-code", "codex"}) {
    INFO(agent);
    auto r = warden_cli({"hook", "install", agent, "--project", missing}, env);
    CHECK(r.code == 2);
    CHECK(r.err ==
          "warden: --project " + missing +
              ": no such directory; give the agent's project directory (it is not created)\n");
    CHECK_FALSE(fs::exists(missing));
  }
  const std::string file = dir.write("a-file", "x");
  auto not_dir = warden_cli({"hook", "install", "claude-code", "--project", file}, env);
  CHECK(not_dir.code == 2);
  CHECK(not_dir.err.find("warden: --project " + file + ": not a directory") == 0);
  CHECK(dir.read("a-file") == "x");
}

TEST_CASE("install pins the daemon address and the token file the hook would use now",
          "[agents][install]") {
  HookHome dir;
  const std::string token_file = dir.write("agent.token", "wdn_x\n", 0600);
  fs::create_directories(dir.path() / "proj");
  const std::string project = dir.str() + "/proj";
  auto install = [&](std::vector<std::string> flags, std::vector<std::string> env) {
    std::vector<std::string> args{"hook", "install", "claude-code", "--project", project};
    args.insert(args.end(), flags.begin(), flags.end());
    env.push_back("HOME=" + dir.str() + "/home");
    env.push_back("XDG_STATE_HOME=" + dir.str() + "/state");
    auto r = warden_cli(args, env);
    INFO(r.err);
    REQUIRE(r.code == 0);
    return r;
  };
  const std::string proj_settings = "proj/.claude/settings.json";
  auto entry = [&] {
    auto doc = parse_json(dir.read(proj_settings));
    auto ours = warden_hooks(claude_pretooluse_hooks(doc), HookAgent::ClaudeCode);
    REQUIRE(ours.size() == 1);
    return *split_shell_words(ours[0].command);
  };
  // From the environment of the shell that installs: $WARDEN_ADDR and $WARDEN_TOKEN_FILE.
  install({}, {"WARDEN_ADDR=127.0.0.1:9311", "WARDEN_TOKEN_FILE=" + token_file});
  CHECK(entry() == std::vector<std::string>{kWardenPath, "hook", "claude-code", "--addr",
                                            "127.0.0.1:9311", "--token-file", token_file});
  // The flags win over the environment; --unix becomes an absolute unix: address.
  install({"--unix", dir.str() + "/other.sock", "--token-file", token_file},
          {"WARDEN_ADDR=127.0.0.1:9311", "WARDEN_TOKEN_FILE=/nowhere"});
  CHECK(entry() == std::vector<std::string>{kWardenPath, "hook", "claude-code", "--addr",
                                            "unix:" + dir.str() + "/other.sock", "--token-file",
                                            token_file});
  // Nothing set: the daemon's Unix socket when there is one, else 127.0.0.1:9105.
  install({"--token-file", token_file}, {"WARDEN_ADDR=", "WARDEN_TOKEN_FILE="});
  CHECK(entry() == std::vector<std::string>{kWardenPath, "hook", "claude-code", "--addr",
                                            "127.0.0.1:9105", "--token-file", token_file});
  {
    SocketFile socket(dir.str() + "/state/warden/warden.sock");
    install({"--token-file", token_file}, {"WARDEN_ADDR=", "WARDEN_TOKEN_FILE="});
    CHECK(entry() == std::vector<std::string>{kWardenPath, "hook", "claude-code", "--addr",
                                              "unix:" + dir.str() + "/state/warden/warden.sock",
                                              "--token-file", token_file});
  }
  // A token only in $WARDEN_TOKEN is never written; the installer says the hook has none.
  auto r = install(
      {}, {"WARDEN_ADDR=127.0.0.1:9311", "WARDEN_TOKEN_FILE=", "WARDEN_TOKEN=wdn_secret_value"});
  CHECK(dir.read(proj_settings).find("wdn_secret_value") == std::string::npos);
  CHECK(entry() ==
        std::vector<std::string>{kWardenPath, "hook", "claude-code", "--addr", "127.0.0.1:9311"});
  CHECK(r.err.find("warden: WARNING: no token file for the hook ($WARDEN_TOKEN is set here, but a "
                   "token is never written into settings)") == 0);
  // In-process (--rules) there is no daemon to pin.
  install({"--rules", kShippedRules},
          {"WARDEN_ADDR=127.0.0.1:9311", "WARDEN_TOKEN_FILE=" + token_file});
  CHECK(entry() == std::vector<std::string>{kWardenPath, "hook", "claude-code", "--rules",
                                            kShippedRules, "--workspace", project});
}

TEST_CASE("install --wait writes the wait and a hook timeout that covers budget and wait",
          "[agents][install]") {
  HookHome dir;
  const std::vector<std::string> env{"HOME=" + dir.str() + "/home"};
  const std::vector<std::string> daemon{"--addr", "127.0.0.1:9105", "--token-file",
                                        "/etc/warden/agent.token"};
  auto install = [&](const char* agent, std::vector<std::string> flags) {
    std::vector<std::string> args{"hook", "install", agent, "--project", dir.str()};
    args.insert(args.end(), daemon.begin(), daemon.end());
    args.insert(args.end(), flags.begin(), flags.end());
    return warden_cli(args, env);
  };
  auto r = install("claude-code", {"--wait", "120"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find(
            "hook timeout: 126 s (budget 5000 ms + wait 120 s, and 1000 ms to start and answer)") !=
        std::string::npos);
  auto [words, timeout] = claude_entry(dir);
  CHECK(words == std::vector<std::string>{kWardenPath, "hook", "claude-code", "--addr",
                                          "127.0.0.1:9105", "--token-file",
                                          "/etc/warden/agent.token", "--wait", "120"});
  CHECK(timeout == 126);  // 5 s budget + 120 s wait + 1 s
  REQUIRE(install("claude-code", {"--timeout-ms", "20000", "--wait", "100"}).code == 0);
  CHECK(claude_entry(dir).second == 121);
  // Without --wait: back to the plain entry and 30 s.
  REQUIRE(install("claude-code", {}).code == 0);
  auto [plain, plain_timeout] = claude_entry(dir);
  CHECK(std::find(plain.begin(), plain.end(), "--wait") == plain.end());
  CHECK(plain_timeout == kHookTimeoutSeconds);

  // Codex: a new entry, then an existing one whose timeout is replaced where it stands, then
  // one without a timeout, which gets one.
  REQUIRE(install("codex", {"--wait", "120"}).code == 0);
  auto added = codex_entry(dir.read(".codex/config.toml"));
  CHECK(added.timeout_seconds == 126);
  CHECK(added.command.find(" --wait 120") != std::string::npos);
  const std::string before =
      "model = \"gpt-5\"\n"
      "[[hooks.PreToolUse]]\n"
      "matcher = \"*\"\n"
      "[[hooks.PreToolUse.hooks]]\n"
      "timeout = 30 # seconds\n"
      "type = \"command\"\n"
      "command = \"/opt/warden hook codex --addr 127.0.0.1:1\"\n";
  dir.write(".codex/config.toml", before);
  r = install("codex", {"--wait", "300"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::string after = dir.read(".codex/config.toml");
  auto updated = codex_entry(after);
  CHECK(updated.timeout_seconds == 306);
  CHECK(updated.command.find(" --wait 300") != std::string::npos);
  CHECK(after.find("timeout = 306 # seconds\n") != std::string::npos);
  CHECK(after.rfind("model = \"gpt-5\"\n[[hooks.PreToolUse]]\nmatcher = \"*\"\n", 0) == 0);
  r = install("codex", {"--wait", "300"});
  CHECK(r.out.find("unchanged") != std::string::npos);
  dir.write(
      ".codex/config.toml",
      "[[hooks.PreToolUse]]\nmatcher = \"*\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\n"
      "command = \"/opt/warden hook codex\" # ours\n");
  r = install("codex", {"--wait", "60"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(codex_entry(dir.read(".codex/config.toml")).timeout_seconds == 66);

  // In-process there are no approvals to wait for; past 3600 s is refused by the range.
  auto in_process = warden_cli({"hook", "install", "claude-code", "--project", dir.str(), "--rules",
                                kShippedRules, "--wait", "10"},
                               env);
  CHECK(in_process.code == 2);
  CHECK(in_process.err ==
        "warden: --wait needs the daemon (it holds the approvals); in-process (--rules) there is "
        "nothing to wait for\n");
  CHECK(install("claude-code", {"--wait", "3601"}).code == 2);
}

// The settings file is read with the shared JSON parser (bindings/json.h): a NUL after the
// object, nesting deeper than json::kMaxDepth and a zero RapidJSON would misread are refused
// like a syntax error, and the file is not rewritten.
TEST_CASE("add_claude_hook refuses a NUL byte, deep nesting and a misread zero", "[hook]") {
  using namespace std::string_literals;
  const std::string command = "/usr/bin/warden hook run --agent claude";
  CHECK(add_claude_hook(R"({"model":"x"})", command).ok);
  const SettingsEdit nul = add_claude_hook("{\"model\":\"x\"}\0{\"hooks\":1}"s, command);
  CHECK_FALSE(nul.ok);
  CHECK(nul.error_code == "E_SETTINGS_PARSE");
  CHECK(nul.error == "not valid JSON at offset 13: NUL byte");
  const SettingsEdit deep =
      add_claude_hook("{\"a\":" + std::string(200, '[') + std::string(200, ']') + "}", command);
  CHECK(deep.error_code == "E_SETTINGS_PARSE");
  CHECK(deep.error == "not valid JSON at offset 132: nested too deep");
  const SettingsEdit zero = add_claude_hook(R"({"n":0e66})", command);
  CHECK(zero.error_code == "E_SETTINGS_PARSE");
  CHECK(zero.error == "not valid JSON at offset 5: Number too big to be stored in double.");
  // As before: a syntax error at its offset.
  CHECK(add_claude_hook("{\"a\":}", command).error == "not valid JSON at offset 5: Invalid value.");
}
