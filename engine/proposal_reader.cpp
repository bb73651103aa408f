#include "engine/proposal_reader.h"

#include <rapidjson/error/en.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <limits>

#include "bindings/json.h"
#include "bindings/text.h"

namespace warden {
namespace {

Diagnostic input_error(const char* code, std::string message) {
  return Diagnostic{code, Severity::Error, "", 0, "", std::move(message)};
}

// Names that become CLIPS symbols: letters, digits and _ . : - ; lowercased.
bool normalize_name(rapidjson::Value& v, rapidjson::Document::AllocatorType& alloc,
                    std::string* out, bool* renamed) {
  if (!v.IsString()) return false;
  std::string s(v.GetString(), v.GetStringLength());
  if (s.empty() || s.size() > 64 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char& c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '_' && c != '-' && c != '.' && c != ':') return false;
    c = static_cast<char>(std::tolower(u));
  }
  if (std::string_view(v.GetString(), v.GetStringLength()) != s) {
    v.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), alloc);
    *renamed = true;
  }
  *out = std::move(s);
  return true;
}

// A key (or dotted key path) as quoted in an error message: at most 64 bytes of it, cut at
// a UTF-8 character boundary.
std::string quoted_key(std::string_view name) {
  if (name.size() <= 64) return "\"" + std::string(name) + "\"";
  std::size_t n = 64;
  while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;
  return "\"" + std::string(name.substr(0, n)) + "…\"";
}

// A key two readers could take for different fields: one holding a `.` (it would read like
// a path: "payload.command" beside payload.command), or NUL; and two sibling keys equal up
// to ASCII case (parsers disagree on which of two equal keys wins; HTTP headers and
// case-insensitive consumers merge `Command` and `command`). Returns why, or empty.
std::string ambiguous_key(const rapidjson::Value& obj) {
  json::MemberNames names({.fold_case = true});
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    std::string_view name(it->name.GetString(), it->name.GetStringLength());
    if (name.find('\0') != std::string_view::npos) return "NUL character in a key";
    if (name.find('.') != std::string_view::npos)
      return "key " + quoted_key(name) + " contains a '.'";
    if (names.add(name))
      return "duplicate key " + quoted_key(name) + " (keys must differ by more than ASCII case)";
  }
  return {};
}

// Lowercases the ASCII letters of every member name of payload.headers (an object); true
// when one changed.
bool lowercase_header_names(rapidjson::Value& payload, rapidjson::Document::AllocatorType& alloc) {
  auto headers = payload.FindMember("headers");
  if (headers == payload.MemberEnd() || !headers->value.IsObject()) return false;
  bool changed = false;
  for (auto it = headers->value.MemberBegin(); it != headers->value.MemberEnd(); ++it) {
    std::string name(it->name.GetString(), it->name.GetStringLength());
    bool upper = false;
    for (char& c : name) {
      if (c >= 'A' && c <= 'Z') {
        c = static_cast<char>(c - 'A' + 'a');
        upper = true;
      }
    }
    if (!upper) continue;
    it->name.SetString(name.data(), static_cast<rapidjson::SizeType>(name.size()), alloc);
    changed = true;
  }
  return changed;
}

// Strict UTF-8 (text::valid_utf8), with ASCII runs skipped eight bytes at a time.
bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    if (word & 0x8080808080808080ULL) break;
  }
  while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80) ++i;
  return text::valid_utf8(s.substr(i));
}

// HTTP methods, lowercased: an `action` naming one must agree with `payload.method`.
bool is_http_method(std::string_view s) {
  static constexpr std::string_view kMethods[] = {"get",     "head",    "post",  "put",  "delete",
                                                  "connect", "options", "trace", "patch"};
  for (auto m : kMethods)
    if (s == m) return true;
  return false;
}

// `parent.name`, built in one allocation.
std::string child_key(const std::string& parent, std::string_view name) {
  std::string key;
  key.reserve(parent.size() + 1 + name.size());
  key.append(parent);
  key.push_back('.');
  key.append(name);
  return key;
}

// The decimal text of an array index, in `buffer`.
std::string_view index_text(rapidjson::SizeType i, char (&buffer)[16]) {
  char* end = buffer + sizeof buffer;
  char* p = end;
  do {
    *--p = static_cast<char>('0' + i % 10);
    i /= 10;
  } while (i);
  return {p, static_cast<std::size_t>(end - p)};
}

// Checks every key and value of the document and lists its leaves, depth-first in document
// order, with an explicit stack (no recursion on input). Keys join with `.` (no key holds one).
std::optional<Diagnostic> collect_leaves(rapidjson::Value& doc, const ReadLimits& limits,
                                         bool check_escapes, std::vector<Leaf>* leaves) {
  struct Frame {
    rapidjson::Value* value;
    std::string key;
    unsigned depth;
  };
  std::vector<Frame> stack;
  stack.reserve(32);
  leaves->clear();
  leaves->reserve(32);
  if (std::string why = ambiguous_key(doc); !why.empty())
    return input_error(code::kInputShape, why + " in the proposal");
  for (auto it = doc.MemberEnd(); it != doc.MemberBegin();) {
    --it;
    if (check_escapes && !text::valid_utf8({it->name.GetString(), it->name.GetStringLength()}))
      return input_error(code::kInputJson, "invalid Unicode escape in a key");
    stack.push_back({&it->value, std::string(it->name.GetString(), it->name.GetStringLength()), 1});
  }
  while (!stack.empty()) {
    Frame frame = std::move(stack.back());
    stack.pop_back();
    if (frame.depth > limits.max_depth)
      return input_error(code::kInputTooLarge,
                         "proposal nests deeper than " + std::to_string(limits.max_depth));
    rapidjson::Value& v = *frame.value;
    if (v.IsObject()) {
      if (std::string why = ambiguous_key(v); !why.empty())
        return input_error(code::kInputShape, why + " in " + quoted_key(frame.key));
      for (auto it = v.MemberEnd(); it != v.MemberBegin();) {
        --it;
        if (check_escapes && !text::valid_utf8({it->name.GetString(), it->name.GetStringLength()}))
          return input_error(code::kInputJson, "invalid Unicode escape in a key");
        stack.push_back({&it->value,
                         child_key(frame.key, {it->name.GetString(), it->name.GetStringLength()}),
                         frame.depth + 1});
      }
    } else if (v.IsArray()) {
      char digits[16];
      for (rapidjson::SizeType i = v.Size(); i > 0; --i)
        stack.push_back(
            {&v[i - 1], child_key(frame.key, index_text(i - 1, digits)), frame.depth + 1});
    } else {
      if (v.IsString() && std::memchr(v.GetString(), '\0', v.GetStringLength()))
        return input_error(code::kInputShape,
                           "NUL character in the value of " + quoted_key(frame.key));
      if (check_escapes && v.IsString() && !text::valid_utf8({v.GetString(), v.GetStringLength()}))
        return input_error(code::kInputJson,
                           "invalid Unicode escape in the value of " + quoted_key(frame.key));
      if (leaves->size() >= limits.max_leaves)
        return input_error(code::kInputTooLarge, "proposal has more than " +
                                                     std::to_string(limits.max_leaves) + " values");
      leaves->push_back({std::move(frame.key), &v});
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Diagnostic> read_proposal(std::string_view json, const ReadLimits& limits,
                                        rapidjson::Document* doc, ProposalFields* fields,
                                        std::vector<Leaf>* leaves, std::string* buffer) {
  if (json.size() > limits.max_bytes)
    return input_error(code::kInputTooLarge, "proposal is " + std::to_string(json.size()) +
                                                 " bytes, over the limit of " +
                                                 std::to_string(limits.max_bytes));
  // The shared flags (bindings/json.h); valid UTF-8 skips the check that cannot fail.
  constexpr unsigned kFlags = warden::json::kParseFlags;
  // RapidJSON takes a NUL byte as the end of input, so `{…}\0anything` would parse as `{…}`
  // while the text handed on holds more. JSON text never contains a raw NUL.
  if (std::size_t nul = json.find('\0'); nul != std::string_view::npos)
    return input_error(code::kInputJson,
                       "invalid JSON at byte " + std::to_string(nul) + ": NUL byte");
  // A zero RapidJSON would misread (bindings/json.h) is refused, at its byte; depth is
  // checked below against the proposal's own limit.
  if (const warden::json::Error e = warden::json::scan(json, warden::json::Limits::any_depth()))
    return input_error(code::kInputJson, std::string("invalid JSON at byte ") +
                                             std::to_string(e.offset) + ": " + e.syntax());
  // Valid UTF-8 text (nearly every proposal) is parsed without RapidJSON's per-character
  // check, which can then not fail; anything else goes through the checking parse, which
  // reports the error and its offset.
  // With a buffer, such text is copied there and parsed in place (strings are not copied
  // again); text starting with a byte order mark, which only the stream parser skips, is not.
  const bool valid = is_valid_utf8(json);
  if (valid && buffer && !json.starts_with("\xEF\xBB\xBF")) {
    buffer->assign(json);  // NUL-terminated, and json holds no NUL: the end of input
    doc->ParseInsitu<kFlags & ~rapidjson::kParseValidateEncodingFlag>(buffer->data());
  } else if (valid) {
    doc->Parse<kFlags & ~rapidjson::kParseValidateEncodingFlag>(json.data(), json.size());
  } else {
    doc->Parse<kFlags>(json.data(), json.size());
  }
  if (doc->HasParseError())
    return input_error(code::kInputJson, std::string("invalid JSON at byte ") +
                                             std::to_string(doc->GetErrorOffset()) + ": " +
                                             rapidjson::GetParseError_En(doc->GetParseError()));
  if (!doc->IsObject()) return input_error(code::kInputShape, "a proposal must be a JSON object");
  // RapidJSON validates raw bytes but lets a lone surrogate escape ("\udc3a") through as
  // invalid UTF-8; strings are re-checked whenever the text holds a \u escape.
  const bool check_escapes = json.find("\\u") != std::string_view::npos;
  auto& alloc = doc->GetAllocator();

  if (auto error = collect_leaves(*doc, limits, check_escapes, leaves)) return error;

  auto target = doc->FindMember("target");
  if (target == doc->MemberEnd())
    return input_error(code::kInputShape, "proposal has no \"target\"");
  if (!normalize_name(target->value, alloc, &fields->target, &fields->renamed))
    return input_error(code::kInputShape, "\"target\" must be a name (letters, digits, _ . : -)");
  auto action = doc->FindMember("action");
  if (action != doc->MemberEnd() && !action->value.IsNull() &&
      !normalize_name(action->value, alloc, &fields->action, &fields->renamed))
    return input_error(code::kInputShape, "\"action\" must be a name (letters, digits, _ . : -)");
  auto payload = doc->FindMember("payload");
  if (payload != doc->MemberEnd() && !payload->value.IsObject())
    return input_error(code::kInputShape, "\"payload\" must be an object");
  // One verb per proposal: `payload.action` (the file actuator's field) and `action` must
  // agree; given alone, `payload.action` is the verb.
  if (payload != doc->MemberEnd()) {
    auto verb = payload->value.FindMember("action");
    if (verb != payload->value.MemberEnd() && !verb->value.IsNull()) {
      std::string payload_action;
      if (!normalize_name(verb->value, alloc, &payload_action, &fields->renamed))
        return input_error(code::kInputShape,
                           "\"payload.action\" must be a name (letters, digits, _ . : -)");
      if (fields->action.empty()) {
        fields->action = payload_action;
        rapidjson::Value name(payload_action.c_str(),
                              static_cast<rapidjson::SizeType>(payload_action.size()), alloc);
        auto existing = doc->FindMember("action");  // present but null
        if (existing != doc->MemberEnd())
          existing->value = name;
        else
          doc->AddMember("action", name, alloc);
        fields->renamed = true;
        payload = doc->FindMember("payload");  // AddMember may have moved the members
        // The added member may have moved the others: list the leaves again.
        if (auto error = collect_leaves(*doc, limits, check_escapes, leaves)) return error;
      } else if (payload_action != fields->action) {
        return input_error(code::kInputShape, "\"action\" is \"" + fields->action +
                                                  "\" but \"payload.action\" is \"" +
                                                  payload_action + "\": one verb per proposal");
      }
    }
    // The HTTP method is `payload.method` (absent: GET); an `action` naming a method must agree.
    if (fields->target == "http") {
      std::string method = "get";
      auto m = payload->value.FindMember("method");
      if (m != payload->value.MemberEnd() && !m->value.IsNull()) {
        if (!m->value.IsString() || m->value.GetStringLength() == 0 ||
            m->value.GetStringLength() > 32)
          return input_error(code::kInputShape, "\"payload.method\" must be an HTTP method name");
        method.assign(m->value.GetString(), m->value.GetStringLength());
        for (char& c : method) {
          if (!std::isalpha(static_cast<unsigned char>(c)))
            return input_error(code::kInputShape, "\"payload.method\" must be an HTTP method name");
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
      }
      if (is_http_method(fields->action) && fields->action != method)
        return input_error(code::kInputShape, "\"action\" is \"" + fields->action +
                                                  "\" but the HTTP method is \"" + method +
                                                  "\": one verb per proposal");
      // Header names are case-insensitive (RFC 9110): each is lowercased in the document, so
      // the rules' `payload.headers.cookie` is every spelling of it and the request sends
      // what they saw. (Two names equal up to case were refused above.)
      if (lowercase_header_names(payload->value, alloc)) {
        fields->renamed = true;
        if (auto error = collect_leaves(*doc, limits, check_escapes, leaves)) return error;
      }
    }
  } else if (fields->target == "http" && is_http_method(fields->action) &&
             fields->action != "get") {
    return input_error(code::kInputShape,
                       "\"action\" is \"" + fields->action +
                           "\" but the HTTP method is \"get\": one verb per proposal");
  }
  auto explanation = doc->FindMember("explanation");
  if (explanation != doc->MemberEnd() && !explanation->value.IsString() &&
      !explanation->value.IsNull())
    return input_error(code::kInputShape, "\"explanation\" must be a string");
  fields->explanation = warden::json::string_member(*doc, "explanation");
  auto context = doc->FindMember("context");
  if (context != doc->MemberEnd()) {
    if (!context->value.IsObject())
      return input_error(code::kInputShape, "\"context\" must be an object");
    rapidjson::Value& ctx = context->value;
    fields->agent = warden::json::string_member(ctx, "agent");
    fields->session = warden::json::string_member(ctx, "session");
    fields->principal = warden::json::string_member(ctx, "principal");
    auto source = ctx.FindMember("source");
    if (source != ctx.MemberEnd() && !source->value.IsNull() &&
        !normalize_name(source->value, alloc, &fields->source, &fields->renamed))
      return input_error(code::kInputShape, "\"context.source\" must be a name");
  }
  return std::nullopt;
}

void override_principal(const std::string& principal, rapidjson::Document* doc,
                        ProposalFields* fields, std::vector<Leaf>* leaves) {
  auto& alloc = doc->GetAllocator();
  fields->principal = principal;
  if (const rapidjson::Value* claimed = value_at(*doc, {"context", "principal"});
      claimed && claimed->IsString() &&
      std::string_view(claimed->GetString(), claimed->GetStringLength()) == principal) {
    return;  // already exactly this (no `Principal` can sit beside it: read_proposal)
  }
  fields->renamed = true;  // the action JSON is written again, with the new value
  rapidjson::Value value(principal.c_str(), static_cast<rapidjson::SizeType>(principal.size()),
                         alloc);
  auto context = doc->FindMember("context");
  if (context == doc->MemberEnd()) {
    rapidjson::Value ctx(rapidjson::kObjectType);
    ctx.AddMember("principal", value, alloc);
    doc->AddMember("context", ctx, alloc);
  } else if (!context->value.IsObject()) {
    return;  // read_proposal refused this document already
  } else {
    // Any spelling of the key goes (`Principal` alone passed read_proposal), so no reader,
    // case-insensitive or not, finds the claim beside the authenticated value.
    rapidjson::Value& ctx = context->value;
    for (auto it = ctx.MemberBegin(); it != ctx.MemberEnd();) {
      std::string name(it->name.GetString(), it->name.GetStringLength());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (name == "principal")
        it = ctx.EraseMember(it);
      else
        ++it;
    }
    ctx.AddMember("principal", value, alloc);
  }
  // The added member may have moved the others: list the leaves again. read_proposal checked
  // this document already, so with its limits lifted the walk cannot fail.
  ReadLimits unlimited;
  unlimited.max_depth = std::numeric_limits<unsigned>::max();
  unlimited.max_leaves = std::numeric_limits<std::size_t>::max();
  collect_leaves(*doc, unlimited, false, leaves);
}

const rapidjson::Value* value_at(const rapidjson::Value& doc,
                                 std::initializer_list<std::string_view> path) {
  const rapidjson::Value* v = &doc;
  for (std::string_view name : path) {
    if (!v->IsObject()) return nullptr;
    auto it = v->FindMember(rapidjson::Value(
        rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size()))));
    if (it == v->MemberEnd()) return nullptr;
    v = &it->value;
  }
  return v;
}

const char* payload_string(const rapidjson::Value& doc, std::string_view name) {
  const rapidjson::Value* v = value_at(doc, {"payload", name});
  return v && v->IsString() ? v->GetString() : nullptr;
}

}  // namespace warden
