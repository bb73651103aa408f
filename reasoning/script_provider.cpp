// The script provider: answers from a JSON-lines file, for offline demos and tests. Each line
// is one answer: {"text": …} (a string, or an object sent as its JSON text), {"tool_call":
// {"name": …, "arguments": {…}}} or {"error": …}; optionally "match" (a substring the newest
// message must hold, else the line is skipped), "usage" {input_tokens, output_tokens} and
// "repeat": true (the line answers again and again). One cursor per Request::session.
// Thread-safe (one mutex around the cursors).
#include <fstream>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "reasoning/json_text.h"
#include "reasoning/providers.h"

namespace warden::reasoning {
namespace {

using rapidjson::Value;

struct ScriptLine {
  int line_number = 0;
  std::string match;
  bool repeat = false;
  std::string text;
  std::optional<ToolCall> tool_call;
  std::optional<std::string> error;
  Usage usage;
};

// One line of the file; "" or what is wrong with it.
std::string read_line(const std::string& text, ScriptLine* out) {
  rapidjson::Document doc;
  if (std::string error = json::parse(text, &doc); !error.empty()) return "not JSON: " + error;
  if (!doc.IsObject()) return "not a JSON object";
  int kinds = 0;
  for (const auto& m : doc.GetObject()) {
    const std::string name(m.name.GetString(), m.name.GetStringLength());
    const Value& v = m.value;
    if (name == "text") {
      ++kinds;
      if (v.IsString())
        out->text.assign(v.GetString(), v.GetStringLength());
      else if (v.IsObject())
        out->text = json::write(v);
      else
        return "\"text\" must be a string or an object";
    } else if (name == "tool_call") {
      ++kinds;
      if (!v.IsObject()) return "\"tool_call\" must be an object";
      const Value* tool_name = json::member(v, "name");
      if (!tool_name || !tool_name->IsString() || tool_name->GetStringLength() == 0)
        return "\"tool_call\" needs a \"name\" string";
      const Value* arguments = json::member(v, "arguments");
      if (arguments && !arguments->IsObject())
        return "\"tool_call\".\"arguments\" must be an object";
      out->tool_call = ToolCall{tool_name->GetString(), arguments ? json::write(*arguments) : "{}"};
    } else if (name == "error") {
      ++kinds;
      if (!v.IsString()) return "\"error\" must be a string";
      out->error = std::string(v.GetString(), v.GetStringLength());
    } else if (name == "match") {
      if (!v.IsString()) return "\"match\" must be a string";
      out->match.assign(v.GetString(), v.GetStringLength());
    } else if (name == "repeat") {
      if (!v.IsBool()) return "\"repeat\" must be true or false";
      out->repeat = v.GetBool();
    } else if (name == "usage") {
      if (!v.IsObject()) return "\"usage\" must be an object";
      out->usage.input_tokens = json::int_member(v, "input_tokens");
      out->usage.output_tokens = json::int_member(v, "output_tokens");
    } else {
      return "unknown member \"" + name + "\" (text, tool_call, error, match, usage, repeat)";
    }
  }
  if (kinds != 1) return "needs exactly one of \"text\", \"tool_call\", \"error\"";
  return {};
}

class ScriptProvider : public Provider {
 public:
  ScriptProvider(ProviderConfig config, std::vector<ScriptLine> lines)
      : config_(std::move(config)), lines_(std::move(lines)) {}
  const ProviderConfig& config() const override { return config_; }

  Answer complete(const Request& request) override {
    Answer answer;
    answer.provider = config_.name;
    answer.model = !request.model.empty()   ? request.model
                   : !config_.model.empty() ? config_.model
                                            : "script";
    const std::string newest =
        request.messages.empty() ? std::string() : request.messages.back().content;
    std::lock_guard lock(mutex_);
    std::size_t& cursor = cursors_[request.session];
    std::size_t i = cursor;
    while (i < lines_.size() && !lines_[i].match.empty() &&
           newest.find(lines_[i].match) == std::string::npos)
      ++i;
    if (i >= lines_.size()) {
      cursor = lines_.size();
      answer.error = "script exhausted";
      return answer;
    }
    const ScriptLine& line = lines_[i];
    cursor = line.repeat ? i : i + 1;
    answer.usage = line.usage;
    if (line.error) {
      answer.error = *line.error;
      return answer;
    }
    answer.ok = true;
    answer.text = line.text;
    answer.tool_call = line.tool_call;
    return answer;
  }

 private:
  ProviderConfig config_;
  std::vector<ScriptLine> lines_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::size_t> cursors_;
};

}  // namespace

std::unique_ptr<Provider> make_script_provider(const ProviderConfig& config, std::string* error) {
  auto fail = [&](std::string message) -> std::unique_ptr<Provider> {
    if (error) *error = "provider " + config.name + ": " + message;
    return nullptr;
  };
  if (config.script_path.empty()) return fail("kind script needs a script file");
  std::ifstream in(config.script_path, std::ios::binary);
  if (!in) return fail("cannot read script " + config.script_path);
  std::vector<ScriptLine> lines;
  std::string text;
  int number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines
    ScriptLine line;
    line.line_number = number;
    if (std::string problem = read_line(text, &line); !problem.empty())
      return fail(config.script_path + ":" + std::to_string(number) + ": " + problem);
    lines.push_back(std::move(line));
  }
  if (in.bad()) return fail("cannot read script " + config.script_path);
  if (lines.empty()) return fail("script " + config.script_path + " holds no answer");
  return std::make_unique<ScriptProvider>(config, std::move(lines));
}

}  // namespace warden::reasoning
