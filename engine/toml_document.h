// TomlDocument: one *.toml file of a rule set, parsed once (toml++) and handed to the parser
// of its kind (effects table, path classes, rule overlay), which Policy::compile picks by
// what the document holds. Internal to the engine library: the public headers only name the
// type. A plain value; one thread at a time.
#pragma once

#include <toml++/toml.h>

#include <optional>
#include <string_view>

#include "engine/diagnostic.h"
#include "engine/rule_source.h"

namespace warden {

struct TomlDocument {
  const RuleSource& source;  // the file's path (for diagnostics) and text
  toml::table root;
};

// Parses source.text as TOML. A syntax error is one `code` error at the error's line, its
// message toml++'s description after `prefix`; nullopt then.
std::optional<toml::table> parse_toml(const RuleSource& source, const char* code,
                                      std::string_view prefix, Diagnostics* diagnostics);

}  // namespace warden
