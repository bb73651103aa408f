// Provider: one language-model API behind one interface. Each call is a single blocking
// HTTP exchange through libcurl (reasoning/http.h), or a line of a script file. A provider
// never throws and never crashes on a bad answer: every failure is an Answer with ok=false
// and an error that names the cause (and never the API key).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reasoning/config.h"

namespace warden::reasoning {

struct Message {
  std::string role;  // "user", "assistant", "tool" (the system prompt is Request::system)
  std::string content;
};

// A target or tool the model may use, as native tool definitions or as text in the prompt.
struct ToolSpec {
  std::string name;  // "shell", "file", "http", "reply", … or a registered tool's name
  std::string description;
  std::string parameters_schema_json;  // JSON Schema object of its payload / arguments
};

struct Request {
  std::string system;             // identity, catalog, rules' hints, rejection trace
  std::vector<Message> messages;  // the conversation, last one the current perception
  std::vector<ToolSpec> tools;    // native tools (providers that have them)
  std::string model;              // "" = the provider's configured model
  std::string session;            // for budgets and script matching; never sent
};

struct ToolCall {
  std::string name;            // the tool's name
  std::string arguments_json;  // its arguments as a JSON object text
};

struct Usage {
  long long input_tokens = 0;
  long long output_tokens = 0;
};

struct Answer {
  bool ok = false;
  std::string
      error;  // why it failed: "HTTP 500", "timeout after 60000 ms", "unparseable answer: …"
  int http_status = 0;       // 0 when no HTTP answer was read
  bool retry_later = false;  // 429: the cascade may retry after retry_after
  std::chrono::milliseconds retry_after{0};
  std::string text;                   // assistant text (JSON output mode), "" with a tool call
  std::optional<ToolCall> tool_call;  // the first native tool call, if any
  Usage usage;
  std::string provider;  // the provider's configured name
  std::string model;     // the model that answered
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual const ProviderConfig& config() const = 0;
  // One attempt; no retries (the cascade retries 429s). Thread-safe.
  virtual Answer complete(const Request& request) = 0;
};

// Builds a provider of config.kind; null with *error set for an unknown kind or a bad
// config (a script file that cannot be read or parsed names its line).
std::unique_ptr<Provider> make_provider(const ProviderConfig& config, std::string* error);

}  // namespace warden::reasoning
