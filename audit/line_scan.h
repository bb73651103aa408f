// Reading audit lines without a JSON parser: the structural scanner the readers share (the
// decision record read for replay, the members a line is routed by, the proposal's parts
// rules cannot see). It walks the daemon's own compact serialization; keys and strings are
// raw (escapes kept), so a caller refuses whatever it cannot read plainly and falls back to
// parse_decision (audit/reader.h), which reads any JSON. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace warden::audit::scan {

inline std::size_t skip_ws(std::string_view j, std::size_t i) {
  while (i < j.size() && (j[i] == ' ' || j[i] == '\t' || j[i] == '\n' || j[i] == '\r')) ++i;
  return i;
}

// The end of the string starting at j[i] == '"' (one past its closing quote), npos if none.
inline std::size_t skip_string(std::string_view j, std::size_t i) {
  for (++i; i < j.size(); ++i) {
    if (j[i] == '\\')
      ++i;
    else if (j[i] == '"')
      return i + 1;
  }
  return std::string_view::npos;
}

// One past the JSON value at j[i], npos if it is cut short.
inline std::size_t skip_value(std::string_view j, std::size_t i) {
  if (i >= j.size()) return std::string_view::npos;
  if (j[i] == '"') return skip_string(j, i);
  if (j[i] == '{' || j[i] == '[') {
    int depth = 0;
    while (i < j.size()) {
      char c = j[i];
      if (c == '"') {
        i = skip_string(j, i);
        if (i == std::string_view::npos) return i;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return std::string_view::npos;
  }
  while (i < j.size() && j[i] != ',' && j[i] != '}' && j[i] != ']' && j[i] != ' ') ++i;
  return i;
}

// Calls f(key, value_begin, value_end) for each member of the object at j[i] == '{'; the key
// is raw (escapes kept). False when the text is not an object of that shape.
template <class F>
bool for_each_member(std::string_view j, std::size_t i, F&& f) {
  i = skip_ws(j, i);
  if (i >= j.size() || j[i] != '{') return false;
  i = skip_ws(j, i + 1);
  if (i < j.size() && j[i] == '}') return true;
  while (i < j.size()) {
    if (j[i] != '"') return false;
    std::size_t key_end = skip_string(j, i);
    if (key_end == std::string_view::npos) return false;
    std::string_view key = j.substr(i + 1, key_end - i - 2);
    i = skip_ws(j, key_end);
    if (i >= j.size() || j[i] != ':') return false;
    i = skip_ws(j, i + 1);
    std::size_t end = skip_value(j, i);
    if (end == std::string_view::npos) return false;
    f(key, i, end);
    i = skip_ws(j, end);
    if (i < j.size() && j[i] == ',') {
      i = skip_ws(j, i + 1);
      continue;
    }
    return i < j.size() && j[i] == '}';
  }
  return false;
}

// The raw bytes (escapes kept) of the first `,"<name>":"…"` string member at or after `from`;
// npos when absent. A `"` inside a JSON string is always escaped, so the first raw match of
// `,"name":"` in a record is the member itself as long as no earlier member is an object
// holding one: in a decision record principal and session come before input.
inline std::string_view raw_string_member(std::string_view line, std::string_view marker,
                                          std::size_t* from) {
  std::size_t at = line.find(marker, *from);
  if (at == std::string_view::npos) return {};
  std::size_t start = at + marker.size(), i = start;
  while (i < line.size() && line[i] != '"') i += line[i] == '\\' ? 2 : 1;
  if (i > line.size()) i = line.size();
  *from = i;
  return line.substr(start, i - start);
}

// A string member's value without its quotes, when it holds no escape; false otherwise.
inline bool plain_string(std::string_view j, std::size_t b, std::size_t e, std::string_view* out) {
  if (e - b < 2 || j[b] != '"' || j[e - 1] != '"') return false;
  std::string_view v = j.substr(b + 1, e - b - 2);
  if (v.find('\\') != std::string_view::npos) return false;
  *out = v;
  return true;
}

}  // namespace warden::audit::scan
