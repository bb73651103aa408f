// Codex's config.toml: Warden's [[hooks.PreToolUse]] block, added as text, checked by toml++.
#include "agents/codex_config.h"

#include <cstdio>
#include <optional>
#include <sstream>

namespace warden::agents {

namespace {

SettingsEdit codex_edit_failed(const char* code, std::string message) {
  SettingsEdit e;
  e.error_code = code;
  e.error = std::move(message);
  return e;
}

bool parse(std::string_view text, toml::table* out, std::string* error) {
  try {
    *out = toml::parse(text);
    return true;
  } catch (const toml::parse_error& e) {
    std::ostringstream m;
    m << "not valid TOML at line " << e.source().begin.line << ", column "
      << e.source().begin.column << ": " << e.description();
    *error = m.str();
    return false;
  }
}

// Why an appended [[hooks.PreToolUse]] would not be valid TOML here; "" when it would be.
std::string append_obstacle(const toml::table& root) {
  const toml::node* hooks = root.get("hooks");
  if (!hooks) return "";
  if (!hooks->is_table()) return "\"hooks\" is not a table";
  if (hooks->as_table()->is_inline()) {
    return "\"hooks\" is an inline table (hooks = {…}): Warden cannot add a [[hooks.PreToolUse]] "
           "table to it; write it as [hooks] tables or add Warden's entry by hand";
  }
  const toml::node* pre = hooks->as_table()->get("PreToolUse");
  if (!pre) return "";
  const char* inline_array =
      "\"hooks.PreToolUse\" is an inline array (PreToolUse = […]): Warden cannot append a "
      "[[hooks.PreToolUse]] table to it; rewrite it as [[hooks.PreToolUse]] tables or add "
      "Warden's entry to the array by hand";
  if (!pre->is_array()) return "\"hooks.PreToolUse\" is not an array of tables";
  const toml::array& groups = *pre->as_array();
  if (groups.empty()) return inline_array;
  for (const auto& g : groups) {
    if (!g.is_table() || g.as_table()->is_inline()) return inline_array;
  }
  return "";
}

// Byte offset of a toml++ source position (1-based line, 1-based column in code points).
std::optional<std::size_t> offset_of(std::string_view text, toml::source_position pos) {
  std::size_t at = 0;
  for (std::size_t line = 1; line < pos.line; ++line) {
    at = text.find('\n', at);
    if (at == std::string_view::npos) return std::nullopt;
    ++at;
  }
  for (std::size_t col = 1; col < pos.column; ++col) {
    if (at >= text.size() || text[at] == '\n') return std::nullopt;
    ++at;
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  }
  return at;
}

// The end (one past the closing quote) of the single-line string literal starting at `at`.
std::optional<std::size_t> literal_end(std::string_view text, std::size_t at) {
  if (at >= text.size()) return std::nullopt;
  const char quote = text[at];
  if (quote != '"' && quote != '\'') return std::nullopt;
  if (text.substr(at, 3) == std::string(3, quote)) return std::nullopt;  // multi-line
  for (std::size_t i = at + 1; i < text.size() && text[i] != '\n'; ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;
      continue;
    }
    if (text[i] == quote) return i + 1;
  }
  return std::nullopt;
}

// The config holds Warden's entry with this command and this timeout (seconds).
bool holds_command(const toml::table& root, const std::string& command, int timeout_seconds) {
  for (const auto& h : codex_pretooluse_hooks(root)) {
    if (h.command == command && h.timeout_seconds == static_cast<double>(timeout_seconds))
      return true;
  }
  return false;
}

}  // namespace

// TOML, not JSON (text::append_json_string): a basic string must escape DEL as well.
std::string toml_quote(std::string_view value) {
  std::string out = "\"";
  for (unsigned char c : value) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04X", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

SettingsEdit add_codex_hook(std::string_view text, const std::string& command,
                            int timeout_seconds) {
  toml::table root;
  std::string error;
  if (!parse(text, &root, &error)) return codex_edit_failed(code::kSettingsParse, error);

  SettingsEdit edit;
  const std::string timeout_text = std::to_string(timeout_seconds);
  // An existing Warden hook: its command string and its timeout are replaced where they stand.
  if (const toml::array* groups = root["hooks"]["PreToolUse"].as_array()) {
    for (const auto& g : *groups) {
      const toml::array* hooks = g.is_table() ? (*g.as_table())["hooks"].as_array() : nullptr;
      if (!hooks) continue;
      for (const auto& h : *hooks) {
        const toml::node* cmd = h.is_table() ? h.as_table()->get("command") : nullptr;
        if (!cmd || !cmd->is_string()) continue;
        const std::string& old = cmd->as_string()->get();
        if (!is_warden_hook_command(old, HookAgent::Codex)) continue;
        const toml::node* timeout = h.as_table()->get("timeout");
        const std::optional<double> old_timeout =
            timeout && timeout->is_number() ? timeout->value<double>() : std::nullopt;
        if (old == command && old_timeout == static_cast<double>(timeout_seconds)) {
          edit.ok = true;
          return edit;  // unchanged
        }
        auto begin = offset_of(text, cmd->source().begin);
        auto end = begin ? literal_end(text, *begin) : std::nullopt;
        if (!end) {
          return codex_edit_failed(code::kSettingsShape,
                                   "the Warden hook's command at line " +
                                       std::to_string(cmd->source().begin.line) +
                                       " is not a one-line string; edit it by hand");
        }
        // The timeout's value: from its first character to the next space, comment, comma or
        // brace on its line. Edited first when it comes after the command (offsets stay valid).
        std::optional<std::size_t> t_begin, t_end;
        if (timeout) {
          t_begin = offset_of(text, timeout->source().begin);
          if (!t_begin) {
            return codex_edit_failed(code::kSettingsShape,
                                     "the Warden hook's timeout at line " +
                                         std::to_string(timeout->source().begin.line) +
                                         " cannot be located; edit it by hand");
          }
          t_end = text.find_first_of(" \t\r\n#,}", *t_begin);
          if (*t_end == std::string_view::npos) t_end = text.size();
        }
        std::string out(text);
        auto replace_timeout = [&] {
          if (t_begin) out.replace(*t_begin, *t_end - *t_begin, timeout_text);
        };
        if (t_begin && *t_begin > *begin) replace_timeout();
        out.replace(*begin, *end - *begin,
                    toml_quote(command) + (t_begin ? "" : "\ntimeout = " + timeout_text));
        if (t_begin && *t_begin < *begin) replace_timeout();
        edit.text = std::move(out);
        break;
      }
      if (!edit.text.empty()) break;
    }
  }
  if (edit.text.empty()) {
    std::string obstacle = append_obstacle(root);
    if (!obstacle.empty()) return codex_edit_failed(code::kSettingsShape, obstacle);
    edit.text = std::string(text);
    if (!edit.text.empty() && edit.text.back() != '\n') edit.text += '\n';
    if (!edit.text.empty()) edit.text += '\n';
    edit.text +=
        "# Warden decides every tool call before Codex runs it (`warden hook install codex`).\n"
        "[[hooks.PreToolUse]]\n"
        "matcher = " +
        toml_quote(kCodexMatcher) +
        "\n\n"
        "[[hooks.PreToolUse.hooks]]\n"
        "type = \"command\"\n"
        "command = " +
        toml_quote(command) +
        "\n"
        "timeout = " +
        timeout_text + "\n";
    edit.added = true;
  }
  // The result must read back with Warden's command where Codex looks for it.
  toml::table check;
  if (!parse(edit.text, &check, &error) || !holds_command(check, command, timeout_seconds)) {
    return codex_edit_failed(
        code::kSettingsShape,
        "adding Warden's entry would not give a valid hooks.PreToolUse (" +
            (error.empty() ? std::string("the entry did not read back") : error) +
            "); add it by hand");
  }
  edit.ok = edit.changed = true;
  return edit;
}

std::vector<HookEntry> codex_pretooluse_hooks(const toml::table& config) {
  std::vector<HookEntry> out;
  const toml::array* groups = config["hooks"]["PreToolUse"].as_array();
  if (!groups) return out;
  for (std::size_t gi = 0; gi < groups->size(); ++gi) {
    const toml::node& g = *groups->get(gi);
    if (!g.is_table()) continue;
    const toml::table& group = *g.as_table();
    HookEntry base;
    base.group = static_cast<int>(gi);
    if (auto m = group["matcher"].value<std::string>()) {
      base.has_matcher = true;
      base.matcher = *m;
    }
    const toml::array* hooks = group["hooks"].as_array();
    if (!hooks) continue;
    for (std::size_t hi = 0; hi < hooks->size(); ++hi) {
      const toml::node& h = *hooks->get(hi);
      if (!h.is_table()) continue;
      const toml::table& hook = *h.as_table();
      HookEntry e = base;
      e.handler = static_cast<int>(hi);
      e.type = hook["type"].value_or(std::string());
      e.command = hook["command"].value_or(std::string());
      if (auto t = hook["timeout"].value<double>()) e.timeout_seconds = *t;
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace warden::agents
