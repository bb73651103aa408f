// TomlDocument: one *.toml file of a rule set, parsed once (toml++) and handed to the parser
// of its kind (effects table, path classes, rule overlay), which Policy::compile picks by
// what the document holds. Internal to the engine library: the public headers only name the
// type. A plain value; one thread at a time.
#pragma once

#include <toml++/toml.h>

#include <cstddef>
#include <optional>
#include <string>
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

// The errors a document's parser finds: each a `code` error at a line of the file. any(): one
// was added since the parser began.
class TomlErrors {
 public:
  TomlErrors(const RuleSource& source, const char* code, Diagnostics* diagnostics)
      : source_(source), code_(code), diagnostics_(diagnostics), before_(diagnostics->size()) {}
  void operator()(long line, std::string message) const {
    diagnostics_->push_back({code_, Severity::Error, source_.path, line, "", std::move(message)});
  }
  bool any() const { return diagnostics_->size() != before_; }

 private:
  const RuleSource& source_;
  const char* code_;
  Diagnostics* diagnostics_;
  std::size_t before_;
};

// The line a node of the document starts at.
inline long toml_line(const toml::node& n) { return static_cast<long>(n.source().begin.line); }

}  // namespace warden
