// Configuration of the reasoning layer: the providers in cascade order, the model selector,
// consensus, cool-off and the budgets per session and per principal. Filled from `[reasoning]` in
// warden.toml (server/config.cpp) or by tests. Plain values.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace warden::reasoning {

struct ProviderConfig {
  std::string name;  // unique, as it appears in errors, events and the audit log ("local-vllm")
  // "openai" (OpenAI-compatible /v1/chat/completions: OpenAI, OpenRouter, vLLM, llama.cpp
  // server, LM Studio), "openai-responses" (/v1/responses), "ollama" (/api/chat),
  // "anthropic" (/v1/messages), "script" (answers from a JSON-lines file, offline).
  std::string kind;
  std::string base_url;     // e.g. "https://api.openai.com" or "http://127.0.0.1:11434"; the
                            // endpoint path is appended by the provider ("/v1/chat/completions")
  std::string model;        // default model for this provider
  std::string api_key_env;  // name of the environment variable holding the key ("" = none).
                            // The key is read when a request is made; it never appears in
                            // logs, errors, events or the audit log.
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds timeout{60000};  // whole request, including reading the answer
  int max_retries_429 = 2;  // retries after 429 (waiting Retry-After) before moving on
  std::chrono::milliseconds retry_after_max{10000};  // a longer Retry-After moves on at once
  std::size_t max_response_bytes = 4 << 20;          // a larger answer is an error (moves on)
  double price_input_per_mtok = 0;                   // USD per million input tokens (budget)
  double price_output_per_mtok = 0;                  // USD per million output tokens
  bool native_tools = true;  // send the catalog as native tools where the API has them
  std::string script_path;   // kind "script": the JSON-lines file
  int max_tokens = 1024;
};

// A selector rule: the first rule that matches a request picks the provider (moved to the
// front of the cascade for this request) and optionally its model.
struct SelectorRule {
  std::string sensor;         // match the signal's sensor ("" = any)
  std::string text_regex;     // RE2 pattern searched in the signal text ("" = any)
  std::size_t min_chars = 0;  // the text has at least this many characters
  std::string provider;       // provider name to put first
  std::string model;          // model to use with it ("" = the provider's own)
};

struct ReasoningConfig {
  std::vector<ProviderConfig> providers;  // cascade order
  std::vector<SelectorRule> selector;
  std::chrono::seconds cool_off{60};  // a failed provider is tried last for this long
  int consensus = 0;                  // >= 2: that many providers must propose the same action
  double budget_per_session_usd = 0;  // 0 = unlimited; past it no more model calls
  // A principal's spending over all its sessions, 0 = unlimited. It drains at
  // budget_per_principal_usd per budget_window (a leaky bucket); while it is at or past the
  // budget, no more model calls for that principal.
  double budget_per_principal_usd = 0;
  std::chrono::seconds budget_window{86400};
  // Spending is kept for at most this many sessions and this many principals (memory stays
  // bounded whatever session ids clients send); a session idle for budget_window is
  // forgotten, and past the bound the least recently used entries go first.
  std::size_t budget_max_entries = 10000;
  std::string identity =
      "You are an assistant whose every action is checked by a security policy before it runs.";
};

}  // namespace warden::reasoning
