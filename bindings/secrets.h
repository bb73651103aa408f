// Secret detection for outgoing data: known token formats and high-entropy strings.
// Patterns are compiled once (function-local statics); thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace warden::secrets {

struct Finding {
  std::size_t offset = 0;
  std::size_t length = 0;
  std::string kind;  // "aws-access-key", "github-token", "openai-key", "anthropic-key",
                     // "slack-token", "private-key", "jwt", "high-entropy"
};

// find() and looks_like_secret() throw (std::runtime_error, std::bad_alloc) on internal
// errors rather than report a partial scan; redact() then returns only the replacement.
std::vector<Finding> find(std::string_view text);
bool looks_like_secret(std::string_view text);
std::string redact(std::string_view text, std::string_view replacement = "[REDACTED]");

}  // namespace warden::secrets
