#include "engine/template_schema.h"

#include <map>

#include "engine/rule_tokens.h"
#include "engine/templates.h"

namespace warden {
namespace {

// (deftemplate NAME (slot|multislot S (type T…) (allowed-symbols A…) …) …)
std::vector<TemplateSchema> parse_templates() {
  std::vector<TemplateSchema> out;
  std::vector<Token> t;
  TokenError error;
  if (!tokenize(kTemplates, &t, &error)) return out;
  for (std::size_t i = 0; i + 2 < t.size(); ++i) {
    if (t[i].type != TokenType::Open || t[i + 1].text != "deftemplate") continue;
    TemplateSchema& tmpl = out.emplace_back();
    tmpl.name = t[i + 2].text;
    int depth = 1;
    for (std::size_t k = i + 3; k < t.size() && depth > 0; ++k) {
      if (t[k].type == TokenType::Close) --depth;
      if (t[k].type != TokenType::Open) continue;
      ++depth;
      if (depth != 2 || k + 2 >= t.size() ||
          (t[k + 1].text != "slot" && t[k + 1].text != "multislot"))
        continue;
      SlotSchema& slot = tmpl.slots.emplace_back();
      slot.name = t[k + 2].text;
      slot.multislot = t[k + 1].text == "multislot";
      std::size_t end = k + 1;  // the ')' closing this slot
      for (int open = 1; end < t.size() && open > 0; ++end)
        open += t[end].type == TokenType::Open ? 1 : t[end].type == TokenType::Close ? -1 : 0;
      for (std::size_t q = k + 3; q + 1 < end; ++q) {
        if (t[q].type != TokenType::Open) continue;
        std::vector<std::string>* into = t[q + 1].text == "type" ? &slot.types
                                         : t[q + 1].text == "allowed-symbols"
                                             ? &slot.allowed_symbols
                                             : nullptr;
        if (!into) continue;
        for (std::size_t v = q + 2; v < end && t[v].type == TokenType::Atom; ++v)
          into->push_back(t[v].text);
      }
    }
  }
  return out;
}

}  // namespace

const SlotSchema* TemplateSchema::slot(std::string_view slot_name) const {
  for (const auto& s : slots)
    if (s.name == slot_name) return &s;
  return nullptr;
}

std::vector<std::string> TemplateSchema::slot_names() const {
  std::vector<std::string> names;
  for (const auto& s : slots) names.push_back(s.name);
  return names;
}

const std::vector<TemplateSchema>& engine_templates() {
  static const std::vector<TemplateSchema> templates = parse_templates();
  return templates;
}

const TemplateSchema* find_template(std::string_view name) {
  if (name.rfind("MAIN::", 0) == 0) name.remove_prefix(6);
  for (const auto& t : engine_templates())
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<std::string> template_names() {
  std::vector<std::string> names;
  for (const auto& t : engine_templates()) names.push_back(t.name);
  return names;
}

const std::vector<std::string>* known_values(std::string_view template_name,
                                             std::string_view slot_name) {
  // The targets of the built-in actuators (actuators/builtin.cpp: shell, file, http, reply,
  // log, system, tool), the message target of SPEC §3, and the MCP gateway's own target
  // (agents/mcp_tool_gate.cpp: mcp). An operator's own actuator adds a name to this list.
  static const std::vector<std::string> kTargets = {"shell", "file",   "http", "message", "tool",
                                                    "reply", "system", "log",  "mcp"};
  if (template_name.rfind("MAIN::", 0) == 0) template_name.remove_prefix(6);
  if (template_name == "proposal" && slot_name == "target") return &kTargets;
  return nullptr;
}

std::string constant_type(const std::string& text, bool is_string) {
  if (is_string) return "STRING";
  // A number as the CLIPS scanner reads one: [sign] digits [. digits] [e [sign] digits], with
  // at least one digit before the exponent; anything else is a symbol.
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  std::size_t digits = 0;
  bool fraction = false, exponent = false;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    fraction = true;
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++digits;
  }
  if (digits > 0 && i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t k = i + 1;
    if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
    std::size_t exp_digits = 0;
    while (k < text.size() && text[k] >= '0' && text[k] <= '9') ++k, ++exp_digits;
    if (exp_digits > 0) {
      exponent = true;
      i = k;
    }
  }
  if (digits == 0 || i != text.size()) return "SYMBOL";
  return fraction || exponent ? "FLOAT" : "INTEGER";
}

}  // namespace warden
