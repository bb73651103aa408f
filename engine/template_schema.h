// TemplateSchema: the engine's fact templates (engine/templates.h) as data — each template's
// slots, the types each holds and the symbols it allows — plus the values Warden gives slots
// that CLIPS leaves open (a proposal's target). Read by the rule checker to judge the patterns
// and asserted facts of rules. Built once from fixed text; immutable; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace warden {

struct SlotSchema {
  std::string name;
  bool multislot = false;
  std::vector<std::string> types;            // STRING SYMBOL INTEGER FLOAT; empty: any
  std::vector<std::string> allowed_symbols;  // empty: any symbol
};

struct TemplateSchema {
  std::string name;
  std::vector<SlotSchema> slots;  // in template order

  const SlotSchema* slot(std::string_view slot_name) const;
  std::vector<std::string> slot_names() const;
};

// Every template the engine defines, in definition order.
const std::vector<TemplateSchema>& engine_templates();
// The template called `name` (a "MAIN::" prefix is ignored), or nullptr.
const TemplateSchema* find_template(std::string_view name);
// Names of every engine template, in definition order.
std::vector<std::string> template_names();

// The symbols Warden, its actuators and its agents give a slot that the template leaves open,
// or nullptr when the slot has no such list. A pattern constant outside the list matches only
// a proposal no part of Warden makes: `(proposal (target shel))`.
const std::vector<std::string>* known_values(std::string_view template_name,
                                             std::string_view slot_name);

// The value type CLIPS reads a constant token as: "STRING" for a string, "INTEGER" or
// "FLOAT" for a number, "SYMBOL" for any other atom. `is_string` says which token it was.
std::string constant_type(const std::string& text, bool is_string);

}  // namespace warden
