// The real arguments of a Codex shell call, from Codex's rollout (agents/codex_call.h).
#include "agents/codex_call.h"

#include <fcntl.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "agents/hook_shell.h"
#include "agents/json_strict.h"
#include "bindings/json.h"
#include "protocol/message.h"

namespace warden::agents {

namespace {

using rapidjson::Value;

bool codex_call_failed(HookError* error, const char* code, std::string message) {
  *error = {code, std::move(message)};
  return false;
}

std::string_view text_of(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

// The last `tail_bytes` of a regular file; false with the cause otherwise.
bool read_tail(const std::string& path, std::size_t tail_bytes, std::string* out, bool* cut,
               HookError* error) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    return codex_call_failed(
        error, kCodexTranscript,
        "cannot open Codex's transcript " + path + ": " + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return codex_call_failed(
        error, kCodexTranscript,
        "cannot stat Codex's transcript " + path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return codex_call_failed(error, kCodexTranscript,
                             "Codex's transcript " + path + " is not a regular file");
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  const std::size_t start = size > tail_bytes ? size - tail_bytes : 0;
  *cut = start > 0;
  out->resize(size - start);
  std::size_t have = 0;
  while (have < out->size()) {
    ssize_t n =
        ::pread(fd, out->data() + have, out->size() - have, static_cast<off_t>(start + have));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return codex_call_failed(
          error, kCodexTranscript,
          "cannot read Codex's transcript " + path + ": " + std::strerror(errno));
    }
    if (n == 0) break;  // the file shrank meanwhile: what was read is what there is
    have += static_cast<std::size_t>(n);
  }
  out->resize(have);
  return true;
}

// payload of a rollout line {"type":"response_item","payload":{"type":"function_call",…}}
// when its call_id is `call_id`; null otherwise.
const Value* function_call_item(const rapidjson::Document& line, std::string_view call_id) {
  if (!line.IsObject()) return nullptr;
  auto type = line.FindMember("type");
  auto payload = line.FindMember("payload");
  if (type == line.MemberEnd() || !type->value.IsString() ||
      text_of(type->value) != "response_item" || payload == line.MemberEnd() ||
      !payload->value.IsObject()) {
    return nullptr;
  }
  const Value& p = payload->value;
  auto ptype = p.FindMember("type");
  auto id = p.FindMember("call_id");
  if (ptype == p.MemberEnd() || !ptype->value.IsString() ||
      text_of(ptype->value) != "function_call" || id == p.MemberEnd() || !id->value.IsString() ||
      text_of(id->value) != call_id) {
    return nullptr;
  }
  return &p;
}

bool string_field(const Value& v, const char* key, std::optional<std::string>* out,
                  HookError* error) {
  if (!v.IsString())
    return codex_call_failed(error, kCodexCallArguments,
                             std::string("exec_command argument ") + key + " is not a string");
  *out = std::string(text_of(v));
  return true;
}

bool bool_field(const Value& v, const char* key, std::optional<bool>* out, HookError* error) {
  if (!v.IsBool())
    return codex_call_failed(error, kCodexCallArguments,
                             std::string("exec_command argument ") + key + " is not a boolean");
  *out = v.GetBool();
  return true;
}

// exec_command's arguments (the JSON text of the function_call) into *out.
bool parse_exec_command(std::string_view arguments, CodexShellCall* out, HookError* error) {
  rapidjson::Document args;
  // The depth is json_unambiguous's to refuse (kMaxJsonDepth), after an iterative parse.
  if (json::parse(arguments, &args, json::Limits::any_depth()) || !args.IsObject()) {
    return codex_call_failed(error, kCodexCallArguments,
                             "exec_command arguments in Codex's transcript are not a JSON object");
  }
  // The model wrote this text: a duplicate name ("cmd" twice) is read last-wins here and may
  // be read otherwise by Codex, so it is refused, as is any other ambiguity.
  if (std::string problem; !json_unambiguous(args, &problem)) {
    return codex_call_failed(
        error, kCodexCallArguments,
        "exec_command arguments in Codex's transcript are ambiguous: " + problem);
  }
  bool have_cmd = false;
  for (const auto& m : args.GetObject()) {
    const std::string_view k = text_of(m.name);
    const Value& v = m.value;
    bool ok = true;
    if (k == "cmd") {
      if (!v.IsString())
        return codex_call_failed(error, kCodexCallArguments,
                                 "exec_command argument cmd is not a string");
      out->cmd.assign(text_of(v));
      have_cmd = true;
    } else if (k == "workdir") {
      ok = string_field(v, "workdir", &out->workdir, error);
    } else if (k == "shell") {
      ok = string_field(v, "shell", &out->shell, error);
    } else if (k == "sandbox_permissions") {
      ok = string_field(v, "sandbox_permissions", &out->sandbox_permissions, error);
    } else if (k == "justification") {
      ok = string_field(v, "justification", &out->justification, error);
    } else if (k == "login") {
      ok = bool_field(v, "login", &out->login, error);
    } else if (k == "tty") {
      ok = bool_field(v, "tty", &out->tty, error);
    } else if (k == "max_output_tokens" || k == "yield_time_ms" || k == "prefix_rule") {
      // Output size, polling time and an approval-cache prefix: they do not change what runs.
    } else {
      // A field Warden does not know might change what runs (a new Codex version): refuse.
      return codex_call_failed(error, kCodexCallArguments,
                               "exec_command argument '" + std::string(k) +
                                   "' is unknown to Warden; it may change what runs");
    }
    if (!ok) return false;
  }
  if (!have_cmd)
    return codex_call_failed(error, kCodexCallArguments, "exec_command arguments have no cmd");
  return true;
}

}  // namespace

bool read_codex_shell_call(const std::string& transcript_path, std::string_view call_id,
                           std::size_t tail_bytes, CodexShellCall* out, HookError* error) {
  if (transcript_path.empty()) {
    return codex_call_failed(
        error, kCodexTranscript,
        "the hook input has no transcript_path (Codex keeps no rollout, e.g. codex exec "
        "--ephemeral): Warden cannot see the shell call's workdir, shell and tty");
  }
  if (call_id.empty()) {
    return codex_call_failed(
        error, kCodexCallMissing,
        "the hook input has no tool_use_id: Warden cannot find the shell call");
  }
  std::string text;
  bool cut = false;
  if (!read_tail(transcript_path, tail_bytes, &text, &cut, error)) return false;

  std::string_view rest(text);
  if (cut) {  // the first line is a fragment
    const std::size_t nl = rest.find('\n');
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
  // Lines that do not contain the id are not parsed (speed: a 4 MiB tail costs ~40 ms to parse
  // whole). Only for ids of plain characters, which Codex never writes escaped; any other id
  // parses every line. Skipping a line can only lose a match, i.e. deny.
  const bool plain_id = std::all_of(call_id.begin(), call_id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
  std::string found;  // the matching payload, serialized: two matches must be the same call
  std::string name, arguments;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (plain_id && line.find(call_id) == std::string_view::npos) continue;
    rapidjson::Document doc;
    // A malformed or half-written line is not the call.
    if (json::parse(line, &doc, json::Limits::any_depth())) continue;
    const Value* item = function_call_item(doc, call_id);
    if (!item) continue;
    const Value* args = json::member(*item, "arguments");
    const std::string this_name = json::string_member(*item, "name");
    const std::string this_args = json::string_member(*item, "arguments");
    if (!found.empty() && (this_name != name || this_args != arguments)) {
      return codex_call_failed(
          error, kCodexCallMismatch,
          "Codex's transcript holds two different calls with id " + std::string(call_id));
    }
    found = protocol::to_json_text(*item);
    name = this_name;
    arguments = this_args;
    if (!args || !args->IsString()) {
      return codex_call_failed(
          error, kCodexCallArguments,
          "the function_call " + std::string(call_id) + " has no arguments string");
    }
  }
  if (found.empty()) {
    return codex_call_failed(error, kCodexCallMissing,
                             "no function_call with id " + std::string(call_id) + " in the last " +
                                 std::to_string(tail_bytes) + " bytes of Codex's transcript " +
                                 transcript_path);
  }
  if (name != "exec_command") {
    return codex_call_failed(error, kCodexCallArguments,
                             "the call " + std::string(call_id) + " is Codex's '" + name +
                                 "', not exec_command: Warden does not know what it runs");
  }
  *out = CodexShellCall{};
  out->tool = name;
  return parse_exec_command(arguments, out, error);
}

bool apply_codex_shell_call(const HookCall& call, const CodexShellCall& real,
                            std::string* proposal_json, HookError* error) {
  auto hook_cmd = call.tool_input.FindMember("command");
  if (hook_cmd == call.tool_input.MemberEnd() || !hook_cmd->value.IsString()) {
    return codex_call_failed(error, kHookInputShape, "Bash tool_input.command must be a string");
  }
  if (text_of(hook_cmd->value) != real.cmd) {
    return codex_call_failed(error, kCodexCallMismatch,
                             "the hook's command differs from the cmd in Codex's transcript: two "
                             "interpretations of one call");
  }
  if (std::string why;
      !codex_shell_is_bash(real.shell, call.cwd, ShellEnvironment::current(), &why)) {
    return codex_call_failed(
        error, kCodexShell,
        why +
            "; Warden reads command lines as bash does, and another shell reads them "
            "otherwise (call again with shell \"bash\", or without shell where the "
            "user's shell is bash)");
  }
  if (real.tty && *real.tty) {
    return codex_call_failed(
        error, kCodexTty,
        "exec_command with tty: true lets later input (write_stdin) reach the program "
        "without passing Warden; call again without tty");
  }
  std::string cwd = call.cwd;
  if (real.workdir && !real.workdir->empty()) {
    std::filesystem::path w(*real.workdir);
    if (w.is_relative()) {
      if (call.cwd.empty()) {
        return codex_call_failed(error, kCodexCallArguments,
                                 "exec_command workdir '" + *real.workdir +
                                     "' is relative and the hook input has no cwd");
      }
      w = std::filesystem::path(call.cwd) / w;
    }
    cwd = w.lexically_normal().string();
    if (cwd.size() > 1 && cwd.back() == '/') cwd.pop_back();
  }

  rapidjson::Document doc;
  // The proposal built above: this process's own text.
  if (json::parse_stored(*proposal_json, &doc) || !doc.IsObject() || !doc.HasMember("payload") ||
      !doc["payload"].IsObject()) {
    return codex_call_failed(error, code::kInternal, "the Bash proposal has no payload");
  }
  auto& alloc = doc.GetAllocator();
  Value& payload = doc["payload"];
  auto put = [&](const char* key, Value v) {
    if (payload.HasMember(key)) payload.RemoveMember(key);
    payload.AddMember(Value(key, alloc), std::move(v), alloc);
  };
  auto str = [&](const std::string& s) {
    return Value(s.data() ? s.data() : "", static_cast<rapidjson::SizeType>(s.size()), alloc);
  };
  put("cwd", str(cwd));
  if (real.workdir) put("workdir", str(*real.workdir));
  if (real.shell) put("shell", str(*real.shell));
  if (real.login) put("login", Value(*real.login));
  if (real.tty) put("tty", Value(*real.tty));
  if (real.sandbox_permissions) put("sandbox_permissions", str(*real.sandbox_permissions));
  if (real.justification && !real.justification->empty()) {
    auto e = doc.FindMember("explanation");
    if (e != doc.MemberEnd() && e->value.IsString() && e->value.GetStringLength() == 0) {
      e->value = str(*real.justification);
    }
  }
  *proposal_json = protocol::to_json_text(doc);
  return true;
}

std::string codex_exec_command_line(std::string_view call_id, std::string_view cmd) {
  rapidjson::StringBuffer args;
  {
    rapidjson::Writer<rapidjson::StringBuffer> w(args);
    w.StartObject();
    w.Key("cmd");
    w.String(cmd.data() ? cmd.data() : "", static_cast<rapidjson::SizeType>(cmd.size()));
    w.EndObject();
  }
  rapidjson::StringBuffer line;
  rapidjson::Writer<rapidjson::StringBuffer> w(line);
  w.StartObject();
  w.Key("type");
  w.String("response_item");
  w.Key("payload");
  w.StartObject();
  w.Key("type");
  w.String("function_call");
  w.Key("name");
  w.String("exec_command");
  w.Key("arguments");
  w.String(args.GetString(), static_cast<rapidjson::SizeType>(args.GetSize()));
  w.Key("call_id");
  w.String(call_id.data() ? call_id.data() : "", static_cast<rapidjson::SizeType>(call_id.size()));
  w.EndObject();
  w.EndObject();
  return std::string(line.GetString(), line.GetSize()) + "\n";
}

bool complete_codex_bash_proposal(const HookCall& call, std::string* proposal_json,
                                  HookError* error) {
  CodexShellCall real;
  if (!read_codex_shell_call(call.transcript_path, call.tool_use_id, kCodexTranscriptTailBytes,
                             &real, error)) {
    return false;
  }
  return apply_codex_shell_call(call, real, proposal_json, error);
}

}  // namespace warden::agents
