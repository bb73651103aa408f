#include "bindings/json.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "bindings/text.h"

namespace warden::json {
namespace {

unsigned hex4_at(std::string_view text, std::size_t at) {
  unsigned v = 0;
  for (std::size_t k = at; k < at + 4 && k < text.size(); ++k) {
    const int d = text::hex_value(text[k]);
    v = v * 16 + (d < 0 ? 0u : unsigned(d));
  }
  return v;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The end of the number starting at text[i] ('-' or a digit), and whether RapidJSON 1.1.0
// would misread it. Its full-precision conversion (StrtodFullPrecision) goes wrong in two
// ways:
//   - a zero whose digits and exponent put it outside the fast path (`0e66`, `0.000…0` with
//     over 22 zeros, `0.0e60`): it normalizes a zero significand with __builtin_clzll(0) and
//     returns whatever that gives (2.1e-109 for `0e66` in an optimized build, 1.8e+47 in
//     another). Any zero beyond 10^±22 is refused, which covers those with room to spare.
//   - a number whose first significant digit stands beyond the table of cached powers: the
//     underflow test ignores the zeros after the point and the overflow test the exponent,
//     so `0.` with 330 zeros and `1` reads as -4.3e+301, and with 345 zeros or `1` and 300
//     digits `e100` indexes the table half a gigabyte past its end (a crash). Any nonzero
//     number below 10^-308 (subnormal, or zero once read) or from 10^309 up is refused.
std::size_t number_end(std::string_view text, std::size_t i, bool* misread) {
  const std::size_t n = text.size();
  std::size_t j = i;
  if (j < n && text[j] == '-') ++j;
  bool zero = true;
  // Counts capped at a million: digits before the point from the first nonzero one, zeros
  // after the point before it (integer part zero), digits after the point, the exponent.
  long integer = 0, leading = 0, fraction = 0, exponent = 0;
  for (; j < n && is_digit(text[j]); ++j) {
    zero = zero && text[j] == '0';
    if (!zero && integer < 1000000) ++integer;
  }
  if (j < n && text[j] == '.') {
    for (++j; j < n && is_digit(text[j]); ++j) {
      if (zero && text[j] == '0' && leading < 1000000) ++leading;
      zero = zero && text[j] == '0';
      if (fraction < 1000000) ++fraction;
    }
  }
  if (j < n && (text[j] == 'e' || text[j] == 'E')) {
    ++j;
    bool negative = false;
    if (j < n && (text[j] == '+' || text[j] == '-')) negative = text[j++] == '-';
    for (; j < n && is_digit(text[j]); ++j)
      if (exponent < 1000000) exponent = exponent * 10 + (text[j] - '0');
    if (negative) exponent = -exponent;
  }
  if (zero) {
    const long p = exponent - fraction;
    *misread = p < -22 || p > 22;
  } else {
    // 10^magnitude <= |number| < 10^(magnitude + 1).
    const long magnitude = integer > 0 ? integer - 1 + exponent : exponent - leading - 1;
    *misread = magnitude < -308 || magnitude > 308;
  }
  return j;
}

// Whether the text holds a "0" followed by "." or an exponent, or a digit followed by an
// exponent, anywhere (strings included): without one, no number is one number_end() refuses
// (RapidJSON refuses over 308 digits itself), and the walk for it is skipped.
bool may_hold_zero_fraction_or_exponent(std::string_view text) {
  for (std::size_t at = text.find('0'); at != std::string_view::npos; at = text.find('0', at + 1)) {
    if (at + 1 < text.size() && (text[at + 1] == '.' || text[at + 1] == 'e' || text[at + 1] == 'E'))
      return true;
  }
  for (const char e : {'e', 'E'}) {
    for (std::size_t at = text.find(e, 1); at != std::string_view::npos; at = text.find(e, at + 1))
      if (is_digit(text[at - 1])) return true;
  }
  return false;
}

// scan() with the zero check only when `converts_numbers`.
Error scan_text(std::string_view text, const Limits& limits, bool converts_numbers) {
  const bool numbers = converts_numbers && may_hold_zero_fraction_or_exponent(text);
  const bool any =
      limits.max_depth == std::numeric_limits<std::size_t>::max() && !limits.refuse_lone_surrogates;
  if (!numbers && any) return {};
  std::size_t depth = 0;
  bool in_string = false;
  std::size_t high_end = std::string_view::npos;  // where a high-surrogate escape ended
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '"') {
        in_string = false;
      } else if (c == '\\' && i + 1 < text.size()) {
        if (limits.refuse_lone_surrogates && text[i + 1] == 'u' && i + 5 < text.size()) {
          const unsigned unit = hex4_at(text, i + 2);
          if (unit >= 0xDC00 && unit <= 0xDFFF && high_end != i)
            return {Refusal::kLoneSurrogate, i};
          high_end = unit >= 0xD800 && unit <= 0xDBFF ? i + 6 : std::string_view::npos;
          i += 5;
        } else {
          ++i;
        }
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > limits.max_depth) return {Refusal::kTooDeep, i};
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        if (numbers && (c == '-' || is_digit(c))) {
          bool misread = false;
          const std::size_t end = number_end(text, i, &misread);
          if (misread) return {Refusal::kSyntax, i, rapidjson::kParseErrorNumberTooBig};
          i = end - 1;
        }
        break;
    }
  }
  return {};
}

}  // namespace

const char* Error::reason() const {
  switch (refusal) {
    case Refusal::kNone:
      return "";
    case Refusal::kTooLarge:
      return "text too large";
    case Refusal::kTooDeep:
      return "nested too deep";
    case Refusal::kLoneSurrogate:
      return "lone surrogate escape";
    case Refusal::kNulByte:
      return "NUL byte";
    case Refusal::kSyntax:
      break;
  }
  return syntax();
}

Error scan(std::string_view text, const Limits& limits) { return scan_text(text, limits, true); }

Error precheck(std::string_view text, const Limits& limits, bool converts_numbers) {
  if (text.size() > limits.max_bytes) return {Refusal::kTooLarge, limits.max_bytes};
  if (Error e = scan_text(text, limits, converts_numbers)) return e;
  if (std::size_t nul = text.find('\0'); nul != std::string_view::npos)
    return {Refusal::kNulByte, nul};
  return {};
}

namespace {

template <unsigned kFlags>
Error parse_with(std::string_view text, rapidjson::Document* doc, const Limits& limits) {
  doc->SetNull();
  if (Error e = precheck(text, limits)) return e;
  doc->Parse<kFlags>(text.data(), text.size());
  if (doc->HasParseError()) return {Refusal::kSyntax, doc->GetErrorOffset(), doc->GetParseError()};
  return {};
}

}  // namespace

Error parse(std::string_view text, rapidjson::Document* doc, const Limits& limits) {
  return parse_with<kParseFlags>(text, doc, limits);
}

Error parse_stored(std::string_view text, rapidjson::Document* doc) {
  return parse_with<kStoredFlags>(text, doc, Limits::any_depth());
}

const rapidjson::Value* member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string string_member(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* v = member(object, name);
  return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : std::string();
}

std::string to_text(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string to_pretty_text(const rapidjson::Value& value, unsigned indent) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', indent);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

KeyClash MemberNames::add_many(std::string_view name) {
  auto key = [this](std::string_view n) {
    std::string k(n);
    if (rules_.fold_case)
      for (char& c : k) c = fold(c);
    return k;
  };
  if (!many_) many_ = std::make_unique<std::unordered_map<std::string, std::string_view>>();
  if (many_->empty())
    for (const Seen& n : few_)
      many_->emplace(key({n.data, n.size}), std::string_view(n.data, n.size));
  auto [it, inserted] = many_->emplace(key(name), name);
  if (!inserted) return {KeyFault::kRepeated, name, it->second};
  return {};
}

KeyClash ambiguous_keys(const rapidjson::Value& root, KeyRules rules, KeyPath* path) {
  // Containers in the order met, each with its parent's index and its step from there; the
  // path is built only for a refusal.
  struct Node {
    const rapidjson::Value* value;
    std::size_t parent;
    std::optional<std::string_view> step;
  };
  constexpr std::size_t kRoot = std::numeric_limits<std::size_t>::max();
  std::vector<Node> nodes{{&root, kRoot, {}}};
  MemberNames names(rules);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const rapidjson::Value& value = *nodes[i].value;
    if (value.IsObject()) {
      names.clear();
      for (const auto& m : value.GetObject()) {
        const std::string_view name(m.name.GetString(), m.name.GetStringLength());
        if (const KeyClash clash = names.add(name)) {
          if (path) {
            path->clear();
            for (std::size_t at = i; nodes[at].parent != kRoot; at = nodes[at].parent)
              path->push_back(nodes[at].step);
            std::reverse(path->begin(), path->end());
          }
          return clash;
        }
        if (m.value.IsObject() || m.value.IsArray()) nodes.push_back({&m.value, i, name});
      }
    } else if (value.IsArray()) {
      for (const auto& e : value.GetArray())
        if (e.IsObject() || e.IsArray()) nodes.push_back({&e, i, std::nullopt});
    }
  }
  return {};
}

}  // namespace warden::json
