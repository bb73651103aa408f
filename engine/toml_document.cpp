#include "engine/toml_document.h"

#include <string>

namespace warden {

std::optional<toml::table> parse_toml(const RuleSource& source, const char* code,
                                      std::string_view prefix, Diagnostics* diagnostics) {
  try {
    return toml::parse(source.text, source.path);
  } catch (const toml::parse_error& e) {
    diagnostics->push_back({code, Severity::Error, source.path,
                            static_cast<long>(e.source().begin.line), "",
                            std::string(prefix) + std::string(e.description())});
    return std::nullopt;
  }
}

}  // namespace warden
