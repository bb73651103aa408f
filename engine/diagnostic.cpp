#include "engine/diagnostic.h"

#include <algorithm>

#include "engine/json_writer.h"

namespace warden {

std::string Diagnostic::to_text() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) out += ":" + std::to_string(line);
    out += ": ";
  }
  out += severity == Severity::Error ? "error " : "warning ";
  out += code;
  out += ": ";
  if (!rule.empty()) out += "in rule '" + rule + "': ";
  out += message;
  return out;
}

std::string Diagnostic::to_json() const {
  std::string out = "{\"code\":";
  append_json_string(out, code);
  out += ",\"severity\":";
  out += severity == Severity::Error ? "\"error\"" : "\"warning\"";
  out += ",\"file\":";
  append_json_string(out, file);
  out += ",\"line\":" + std::to_string(line);
  if (column > 0) out += ",\"column\":" + std::to_string(column);
  out += ",\"rule\":";
  append_json_string(out, rule);
  out += ",\"message\":";
  append_json_string(out, message);
  out += "}";
  return out;
}

bool has_errors(const Diagnostics& diagnostics) {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

}  // namespace warden
