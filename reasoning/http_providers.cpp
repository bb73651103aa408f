// The HTTP providers: OpenAI-compatible chat completions, the OpenAI Responses API, Ollama
// and Anthropic. Each builds its request body from a Request, posts it with http_post and
// reads the answer (text or the first tool call, and the token usage). Stateless apart from
// the configuration, so thread-safe.
#include <cstdlib>

#include "bindings/text.h"
#include "reasoning/http.h"
#include "reasoning/json_text.h"
#include "reasoning/provider.h"
#include "reasoning/providers.h"

namespace warden::reasoning {
namespace {

using rapidjson::Document;
using rapidjson::Value;
using Alloc = Document::AllocatorType;

// The JSON Schema of a tool's parameters as a value; an empty or broken schema becomes
// {"type":"object"} so one bad catalog entry cannot break every request.
Value schema_value(const std::string& text, Alloc& a) {
  Document schema;
  if (text.empty() || !json::parse(text, &schema).empty() || !schema.IsObject()) {
    Value object(rapidjson::kObjectType);
    object.AddMember("type", "object", a);
    return object;
  }
  return Value(schema, a);
}

// Model APIs know "user" and "assistant" turns; anything else is sent as the user's.
const char* api_role(const std::string& role) { return role == "assistant" ? "assistant" : "user"; }

// At most n bytes of `text` as valid UTF-8 (never cut inside a character), on one line.
std::string first_bytes(const std::string& text, std::size_t n) {
  std::string out = json::valid_utf8(text.substr(0, n + 3));
  if (out.size() > n) {
    while (n > 0 && (static_cast<unsigned char>(out[n]) & 0xC0) == 0x80) --n;
    out.resize(n);
  }
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return out;
}

std::chrono::milliseconds parse_retry_after(const std::string& value) {
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
    return std::chrono::milliseconds(1000);  // absent, a date, or nonsense: one second
  if (value.size() > 9) return std::chrono::hours(24 * 365);  // longer than any maximum
  return std::chrono::seconds(std::stol(value));
}

// `text` with printable ASCII written as \u00XX escapes (or \/) spelled plainly; the JSON
// it may hold means the same (those characters need no escape).
std::string plain_ascii_escapes(const std::string& text) {
  using warden::text::hex_value;
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    if (text[i + 1] == '/') {
      out += '/';
      ++i;
      continue;
    }
    if (text[i + 1] == 'u' && i + 5 < text.size() && text[i + 2] == '0' && text[i + 3] == '0' &&
        hex_value(text[i + 4]) >= 0 && hex_value(text[i + 5]) >= 0) {
      const char c = static_cast<char>(hex_value(text[i + 4]) * 16 + hex_value(text[i + 5]));
      if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
        out += c;
        i += 5;
        continue;
      }
    }
    out += text[i];  // another escape (or an escaped backslash): kept whole
    out += text[i + 1];
    ++i;
  }
  return out;
}

// redact() for a text that may hold JSON the model's proposal is read from: a key spelled
// with escapes would come out of parse_answer plainly, so it is looked for spelled plainly.
std::string redact_json_text(std::string text, const std::string& key) {
  if (key.empty()) return text;
  text = redact(std::move(text), key);
  if (text.find('\\') == std::string::npos) return text;
  std::string plain = plain_ascii_escapes(text);
  if (plain.find(key) == std::string::npos) return text;
  return redact(std::move(plain), key);
}

class HttpProvider : public Provider {
 public:
  explicit HttpProvider(ProviderConfig config) : config_(std::move(config)) {
    while (!config_.base_url.empty() && config_.base_url.back() == '/') config_.base_url.pop_back();
  }
  const ProviderConfig& config() const override { return config_; }

  Answer complete(const Request& request) override {
    Answer answer;
    answer.provider = config_.name;
    answer.model = request.model.empty() ? config_.model : request.model;
    std::string key;
    if (!config_.api_key_env.empty()) {
      const char* value = std::getenv(config_.api_key_env.c_str());
      if (!value || !*value) {
        answer.error = "API key variable " + config_.api_key_env + " is not set";
        return answer;
      }
      key = value;
      // A key pasted with a trailing newline still works; one with a line break inside is
      // refused by http_post, naming the header and not the value.
      key.erase(0, key.find_first_not_of(" \t\r\n"));
      key.erase(key.find_last_not_of(" \t\r\n") + 1);
      if (key.empty()) {
        answer.error = "API key variable " + config_.api_key_env + " is not set";
        return answer;
      }
    }
    HttpPost post;
    post.url = url();
    post.headers = headers(key);
    post.body = body(request, answer.model);
    post.connect_timeout = config_.connect_timeout;
    post.timeout = config_.timeout;
    post.max_response_bytes = config_.max_response_bytes;
    HttpResponse response = http_post(post);
    answer.http_status = response.status;
    if (response.not_sent) {
      answer.error = "request not sent: " + redact(response.error, key);
      return answer;
    }
    if (response.too_large) {
      answer.error = "answer larger than " + std::to_string(config_.max_response_bytes) + " bytes";
      return answer;
    }
    if (!response.completed) {
      answer.http_status = 0;
      answer.error = response.timed_out
                         ? "timeout after " + std::to_string(config_.timeout.count()) + " ms (" +
                               redact(response.error, key) + ")"
                         : "connection failed: " + redact(response.error, key);
      return answer;
    }
    if (response.status < 200 || response.status > 299) {
      answer.error = "HTTP " + std::to_string(response.status) + ": " +
                     first_bytes(redact(response.body, key), 200);
      if (response.status == 429) {
        answer.retry_later = true;
        answer.retry_after = parse_retry_after(response.header("Retry-After"));
      }
      return answer;
    }
    Document doc;
    if (std::string error = json::parse(response.body, &doc); !error.empty()) {
      answer.error = "unparseable answer: " + error;
      return answer;
    }
    if (!doc.IsObject()) {
      answer.error = "unparseable answer: not a JSON object";
      return answer;
    }
    if (std::string error = read(doc, &answer); !error.empty()) {
      answer.error = "unparseable answer: " + redact(error, key);
      return answer;
    }
    if (answer.text.empty() && !answer.tool_call) {
      answer.error = "empty answer: neither text nor a tool call";
      return answer;
    }
    // A server that echoes the key into its answer does not get it into a proposal (nor
    // into the model name that events and the audit log show).
    answer.text = redact_json_text(std::move(answer.text), key);
    answer.model = redact(std::move(answer.model), key);
    if (answer.tool_call) {
      answer.tool_call->name = redact(std::move(answer.tool_call->name), key);
      answer.tool_call->arguments_json =
          redact_json_text(std::move(answer.tool_call->arguments_json), key);
    }
    answer.ok = true;
    return answer;
  }

 protected:
  virtual std::string path() const = 0;
  virtual std::vector<std::pair<std::string, std::string>> headers(const std::string& key) const {
    if (key.empty()) return {};
    return {{"Authorization", "Bearer " + key}};
  }
  // The request body: {"model": model, …what add_members adds}.
  std::string body(const Request& request, const std::string& model) const {
    Document doc(rapidjson::kObjectType);
    Alloc& a = doc.GetAllocator();
    doc.AddMember("model", json::string_value(model, a), a);
    add_members(request, &doc, a);
    return json::write(doc);
  }
  virtual void add_members(const Request& request, Value* doc, Alloc& a) const = 0;
  // Fills text / tool_call / usage from the parsed answer; "" or what is missing.
  virtual std::string read(const Document& doc, Answer* answer) const = 0;

  // base_url + the endpoint; a base_url that already ends in /v1 is not doubled.
  std::string url() const {
    const std::string endpoint = path();
    const std::string& base = config_.base_url;
    if (endpoint.rfind("/v1/", 0) == 0 && base.size() >= 3 &&
        base.compare(base.size() - 3, 3, "/v1") == 0)
      return base + endpoint.substr(3);
    return base + endpoint;
  }

  bool send_tools(const Request& request) const {
    return config_.native_tools && !request.tools.empty();
  }

  ProviderConfig config_;
};

// Appends {role, content} for each of the request's messages (every provider's shape).
void push_messages(const Request& request, Value* messages, Alloc& a) {
  for (const Message& message : request.messages) {
    Value m(rapidjson::kObjectType);
    m.AddMember("role", Value(api_role(message.role), a), a);
    m.AddMember("content", json::string_value(message.content, a), a);
    messages->PushBack(m, a);
  }
}

// Shared by chat completions and Ollama: [{role:system}, …messages].
Value chat_messages(const Request& request, Alloc& a) {
  Value messages(rapidjson::kArrayType);
  if (!request.system.empty()) {
    Value m(rapidjson::kObjectType);
    m.AddMember("role", "system", a);
    m.AddMember("content", json::string_value(request.system, a), a);
    messages.PushBack(m, a);
  }
  push_messages(request, &messages, a);
  return messages;
}

// Adds name, description and `schema` (the parameters' JSON schema) of one tool.
void add_tool_members(const ToolSpec& spec, const char* schema, Value* tool, Alloc& a) {
  tool->AddMember("name", json::string_value(spec.name, a), a);
  tool->AddMember("description", json::string_value(spec.description, a), a);
  tool->AddMember(rapidjson::StringRef(schema), schema_value(spec.parameters_schema_json, a), a);
}

// [{type:function, function:{name, description, parameters}}] (chat completions, Ollama).
Value function_tools(const Request& request, Alloc& a) {
  Value tools(rapidjson::kArrayType);
  for (const ToolSpec& spec : request.tools) {
    Value function(rapidjson::kObjectType);
    add_tool_members(spec, "parameters", &function, a);
    Value tool(rapidjson::kObjectType);
    tool.AddMember("type", "function", a);
    tool.AddMember("function", function, a);
    tools.PushBack(tool, a);
  }
  return tools;
}

// [{[type:function,] name, description, <schema>}] (Responses with the type, Anthropic without).
Value flat_tools(const Request& request, bool typed, const char* schema, Alloc& a) {
  Value tools(rapidjson::kArrayType);
  for (const ToolSpec& spec : request.tools) {
    Value tool(rapidjson::kObjectType);
    if (typed) tool.AddMember("type", "function", a);
    add_tool_members(spec, schema, &tool, a);
    tools.PushBack(tool, a);
  }
  return tools;
}

// Arguments arrive as a JSON text (OpenAI) or as an object (Ollama, Anthropic).
// Reads the token counts (members `input` and `output` of `usage`, the answer's usage object
// or the answer itself; none when absent) and the model that answered.
void read_usage_and_model(const Value& doc, const Value* usage, const char* input,
                          const char* output, Answer* answer) {
  if (usage) {
    answer->usage.input_tokens = json::int_member(*usage, input);
    answer->usage.output_tokens = json::int_member(*usage, output);
  }
  if (std::string model = json::string_member(doc, "model"); !model.empty()) answer->model = model;
}

std::string arguments_text(const Value* arguments) {
  if (!arguments) return "{}";
  if (arguments->IsString())
    return std::string(arguments->GetString(), arguments->GetStringLength());
  return json::write(*arguments);
}

// A chat message's text and its first tool call (chat completions, Ollama); an error or empty.
std::string read_chat_message(const Value& message, Answer* answer) {
  answer->text = json::string_member(message, "content");
  const Value* calls = json::member(message, "tool_calls");
  if (calls && calls->IsArray() && !calls->Empty()) {
    const Value* function = json::member((*calls)[0], "function");
    if (!function) return "tool_calls[0] without a function";
    answer->tool_call = ToolCall{json::string_member(*function, "name"),
                                 arguments_text(json::member(*function, "arguments"))};
  }
  return {};
}

class ChatCompletions : public HttpProvider {
 public:
  using HttpProvider::HttpProvider;

 protected:
  std::string path() const override { return "/v1/chat/completions"; }
  void add_members(const Request& request, Value* doc, Alloc& a) const override {
    doc->AddMember("messages", chat_messages(request, a), a);
    doc->AddMember("max_tokens", config_.max_tokens, a);
    if (send_tools(request)) doc->AddMember("tools", function_tools(request, a), a);
  }
  std::string read(const Document& doc, Answer* answer) const override {
    const Value* choices = json::member(doc, "choices");
    if (!choices || !choices->IsArray() || choices->Empty()) return "no choices";
    const Value* message = json::member((*choices)[0], "message");
    if (!message || !message->IsObject()) return "no choices[0].message";
    if (std::string error = read_chat_message(*message, answer); !error.empty()) return error;
    read_usage_and_model(doc, json::member(doc, "usage"), "prompt_tokens", "completion_tokens",
                         answer);
    return {};
  }
};

class Responses : public HttpProvider {
 public:
  using HttpProvider::HttpProvider;

 protected:
  std::string path() const override { return "/v1/responses"; }
  void add_members(const Request& request, Value* doc, Alloc& a) const override {
    if (!request.system.empty())
      doc->AddMember("instructions", json::string_value(request.system, a), a);
    Value input(rapidjson::kArrayType);
    push_messages(request, &input, a);
    doc->AddMember("input", input, a);
    doc->AddMember("max_output_tokens", config_.max_tokens, a);
    if (send_tools(request)) doc->AddMember("tools", flat_tools(request, true, "parameters", a), a);
  }
  std::string read(const Document& doc, Answer* answer) const override {
    const Value* output = json::member(doc, "output");
    if (!output || !output->IsArray()) return "no output";
    for (const Value& item : output->GetArray()) {
      const std::string type = json::string_member(item, "type");
      if (type == "function_call" && !answer->tool_call) {
        answer->tool_call = ToolCall{json::string_member(item, "name"),
                                     arguments_text(json::member(item, "arguments"))};
      } else if (type == "message") {
        const Value* content = json::member(item, "content");
        if (!content || !content->IsArray()) continue;
        for (const Value& part : content->GetArray())
          if (json::string_member(part, "type") == "output_text")
            answer->text += json::string_member(part, "text");
      }
    }
    read_usage_and_model(doc, json::member(doc, "usage"), "input_tokens", "output_tokens", answer);
    return {};
  }
};

class Ollama : public HttpProvider {
 public:
  using HttpProvider::HttpProvider;

 protected:
  std::string path() const override { return "/api/chat"; }
  void add_members(const Request& request, Value* doc, Alloc& a) const override {
    doc->AddMember("messages", chat_messages(request, a), a);
    doc->AddMember("stream", false, a);
    Value options(rapidjson::kObjectType);
    options.AddMember("num_predict", config_.max_tokens, a);
    doc->AddMember("options", options, a);
    if (send_tools(request)) doc->AddMember("tools", function_tools(request, a), a);
  }
  std::string read(const Document& doc, Answer* answer) const override {
    const Value* message = json::member(doc, "message");
    if (!message || !message->IsObject()) return "no message";
    if (std::string error = read_chat_message(*message, answer); !error.empty()) return error;
    read_usage_and_model(doc, &doc, "prompt_eval_count", "eval_count", answer);
    return {};
  }
};

class Anthropic : public HttpProvider {
 public:
  using HttpProvider::HttpProvider;

 protected:
  std::string path() const override { return "/v1/messages"; }
  std::vector<std::pair<std::string, std::string>> headers(const std::string& key) const override {
    std::vector<std::pair<std::string, std::string>> out{{"anthropic-version", "2023-06-01"}};
    if (!key.empty()) out.emplace_back("x-api-key", key);
    return out;
  }
  void add_members(const Request& request, Value* doc, Alloc& a) const override {
    doc->AddMember("max_tokens", config_.max_tokens, a);
    if (!request.system.empty()) doc->AddMember("system", json::string_value(request.system, a), a);
    Value messages(rapidjson::kArrayType);
    push_messages(request, &messages, a);
    doc->AddMember("messages", messages, a);
    if (send_tools(request))
      doc->AddMember("tools", flat_tools(request, false, "input_schema", a), a);
  }
  std::string read(const Document& doc, Answer* answer) const override {
    const Value* content = json::member(doc, "content");
    if (!content || !content->IsArray()) return "no content";
    for (const Value& block : content->GetArray()) {
      const std::string type = json::string_member(block, "type");
      if (type == "text") {
        answer->text += json::string_member(block, "text");
      } else if (type == "tool_use" && !answer->tool_call) {
        answer->tool_call = ToolCall{json::string_member(block, "name"),
                                     arguments_text(json::member(block, "input"))};
      }
    }
    read_usage_and_model(doc, json::member(doc, "usage"), "input_tokens", "output_tokens", answer);
    return {};
  }
};

}  // namespace

std::unique_ptr<Provider> make_provider(const ProviderConfig& config, std::string* error) {
  auto fail = [&](std::string message) -> std::unique_ptr<Provider> {
    if (error) *error = "provider " + config.name + ": " + message;
    return nullptr;
  };
  if (config.name.empty()) return fail("no name");
  if (config.kind == "script") return make_script_provider(config, error);
  if (config.kind != "openai" && config.kind != "openai-responses" && config.kind != "ollama" &&
      config.kind != "anthropic")
    return fail("unknown kind \"" + config.kind +
                "\" (openai, openai-responses, ollama, anthropic, script)");
  if (config.base_url.rfind("http://", 0) != 0 && config.base_url.rfind("https://", 0) != 0)
    return fail("base_url must start with http:// or https:// (got \"" + config.base_url + "\")");
  if (config.model.empty()) return fail("no model");
  if (config.timeout.count() <= 0 || config.connect_timeout.count() <= 0)
    return fail("timeouts must be positive");
  if (config.kind == "openai") return std::make_unique<ChatCompletions>(config);
  if (config.kind == "openai-responses") return std::make_unique<Responses>(config);
  if (config.kind == "ollama") return std::make_unique<Ollama>(config);
  return std::make_unique<Anthropic>(config);
}

}  // namespace warden::reasoning
