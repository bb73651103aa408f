// Data files: TOML with toml++, JSON with rapidjson's SAX reader over a stream that counts
// lines (so every value has its line). Both formats go through one FileReader, which checks
// names, strings and limits and hands the file's sets over only when all of it was right.
#include "engine/data_files.h"

// reader.h first: it includes internal/stack.h by the path the fuzz build's sanitizer
// ignore list names (fuzz/sanitizer_ignore.txt); error/en.h first would reach it as
// error/../internal/stack.h.
// clang-format off
#include <rapidjson/reader.h>
// clang-format on

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/json.h"
#include "bindings/text.h"
#include "engine/toml_document.h"

namespace warden {
namespace {

constexpr std::string_view kTomlSuffix = ".data.toml";
constexpr std::string_view kJsonSuffix = ".data.json";
// A file this wrong is not worth reading on: its first errors are shown, then one note.
constexpr std::size_t kMaxErrorsPerFile = 100;

bool ends_with_stem(std::string_view path, std::string_view suffix) {
  if (path.size() <= suffix.size() || path.substr(path.size() - suffix.size()) != suffix)
    return false;
  const char before = path[path.size() - suffix.size() - 1];
  return before != '/';
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxDataSetName || name[0] < 'a' || name[0] > 'z') return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return false;
  return true;
}

// A name or value as a message shows it: its first 80 bytes, a NUL as \0 and a byte that is
// not UTF-8 as \xNN (the terminal escapes control characters when it prints).
std::string shown(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size() && i < 80) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c == 0 ? 0 : text::utf8_sequence_length(s, i);
    if (c == 0) {
      out += "\\0";
    } else if (n == 0) {
      out += "\\x";
      text::append_hex(out, c);
    } else {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    ++i;
  }
  return i < s.size() ? out + "…" : out;
}

// One file's sets, checked as they are read.
class FileReader {
 public:
  FileReader(const RuleSource& source, const DataSets& sets, Diagnostics* diagnostics)
      : source_(source), diagnostics_(diagnostics) {
    for (const auto& [name, set] : sets.sets()) entries_ += set.size();
  }

  bool stopped() const { return errors_ > kMaxErrorsPerFile; }
  // The file failed with an error reported elsewhere (its TOML syntax).
  void mark_failed() { failed_ = true; }

  void error(const char* code, long line, std::string message) {
    failed_ = true;
    ++errors_;
    if (errors_ <= kMaxErrorsPerFile) {
      diagnostics_->push_back({code, Severity::Error, source_.path, line, "", std::move(message)});
    } else if (errors_ == kMaxErrorsPerFile + 1) {
      diagnostics_->push_back({code::kData, Severity::Error, source_.path, line, "",
                               "more than " + std::to_string(kMaxErrorsPerFile) +
                                   " errors in this data file; stopped reading it"});
    }
  }

  // Starts the set `name` (a list or a map) defined at `line`; false, with an error, when the
  // name is not one a set may have or this file defines it already.
  bool begin_set(std::string_view name, DataSets::Kind kind, long line) {
    current_ = nullptr;
    if (!valid_name(name)) {
      error(code::kData, line,
            "\"" + shown(name) +
                "\" is not a data set name: lower-case letters, digits, '-' and '_', "
                "starting with a letter, at most " +
                std::to_string(kMaxDataSetName) + " bytes");
      return false;
    }
    for (const auto& other : sets_) {
      if (other.name == name) {
        error(code::kData, line,
              "data set \"" + std::string(name) + "\" is already defined at " + other.set.at);
        return false;
      }
    }
    sets_.push_back({std::string(name), line, {}});
    current_ = &sets_.back();
    current_->set.kind = kind;
    current_->set.at = source_.path + ":" + std::to_string(line);
    return true;
  }

  void add_member(std::string_view value, long line) {
    if (!current_ || !check_string(value, line, "a value of list \"" + current_->name + "\"") ||
        !count(line))
      return;
    current_->set.members.emplace(value);
  }

  void add_entry(std::string_view key, std::string_view value, long line) {
    if (!current_) return;
    const std::string where = "map \"" + current_->name + "\"";
    const bool key_ok = check_string(key, line, "a key of " + where);
    const bool value_ok =
        check_string(value, line, "the value of \"" + shown(key) + "\" in " + where);
    if (!key_ok || !value_ok || !count(line)) return;
    if (!current_->set.map.emplace(key, value).second)
      error(code::kData, line, "key \"" + shown(key) + "\" is given twice in " + where);
  }

  // What a set holds must be strings: the error for anything else.
  void wrong_type(long line, std::string_view what) {
    if (!current_) return;
    const bool list = current_->set.kind == DataSets::Kind::List;
    error(code::kData, line,
          std::string(list ? "list \"" : "map \"") + current_->name +
              "\": every value must be a string, not " + std::string(what));
  }

  // Adds the file's sets to `sets` when nothing was wrong: a set defined by an earlier file
  // is an error here, and then none of this file's sets is added.
  bool commit(DataSets* sets) {
    if (failed_) return false;
    for (const auto& s : sets_)
      if (const DataSets::Set* first = sets->find(s.name))
        error(code::kData, s.line,
              "data set \"" + s.name + "\" is already defined at " + first->at);
    if (failed_) return false;
    for (auto& s : sets_) sets->add(std::move(s.name), std::move(s.set));
    return true;
  }

 private:
  // A string rules can hold: no NUL byte (CLIPS strings end at one), valid UTF-8 (what every
  // proposal string is), at most kMaxDataStringBytes.
  bool check_string(std::string_view s, long line, const std::string& what) {
    if (s.find('\0') != std::string_view::npos) {
      error(code::kDataValue, line,
            what + " holds a NUL byte (\"" + shown(s) + "\"): rules cannot see one");
      return false;
    }
    if (!text::valid_utf8(s)) {
      error(code::kDataValue, line, what + " is not valid UTF-8 (\"" + shown(s) + "\")");
      return false;
    }
    if (s.size() > kMaxDataStringBytes) {
      error(code::kDataLimit, line,
            what + " is " + std::to_string(s.size()) + " bytes, over the limit of " +
                std::to_string(kMaxDataStringBytes) + " (\"" + shown(s) + "\")");
      return false;
    }
    return true;
  }

  bool count(long line) {
    if (++entries_ <= kMaxDataEntries) return true;
    if (!limit_reported_)
      error(code::kDataLimit, line,
            "the data files of this rule set hold more than " + std::to_string(kMaxDataEntries) +
                " entries (list values and map keys)");
    limit_reported_ = true;
    return false;
  }

  const RuleSource& source_;
  Diagnostics* diagnostics_;
  struct Named {
    std::string name;
    long line;
    DataSets::Set set;
  };
  std::vector<Named> sets_;  // in file order; current_ is the last one
  Named* current_ = nullptr;
  std::size_t entries_ = 0;  // of every data file so far, this one included
  std::size_t errors_ = 0;
  bool failed_ = false;
  bool limit_reported_ = false;
};

long line_at(std::string_view text, std::size_t offset) {
  long line = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

// Both formats must be UTF-8 text without NUL bytes: the first offending byte is the error.
bool check_text(const RuleSource& source, FileReader* reader) {
  const std::string_view s = source.text;
  long line = 1;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n') ++line;
    if (c == 0) {
      reader->error(code::kDataValue, line, "NUL byte in a data file");
      return false;
    }
    if (c < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = text::utf8_sequence_length(s, i);
    if (n == 0) {
      reader->error(code::kDataValue, line, "invalid UTF-8 in a data file");
      return false;
    }
    i += n;
  }
  return true;
}

// ---------------------------------------------------------------- TOML

const char* toml_type(const toml::node& n) {
  if (n.is_string()) return "a string";
  if (n.is_integer()) return "an integer";
  if (n.is_floating_point()) return "a float";
  if (n.is_boolean()) return "a boolean";
  if (n.is_array()) return "a list";
  if (n.is_table()) return "a table";
  return "a date or time";
}

long toml_line(const toml::node& n) { return static_cast<long>(n.source().begin.line); }

void read_toml(const RuleSource& source, FileReader* reader, Diagnostics* diagnostics) {
  std::optional<toml::table> root = parse_toml(source, code::kData, "TOML: ", diagnostics);
  if (!root) {
    reader->mark_failed();
    return;
  }
  for (auto&& [key, node] : *root) {
    if (reader->stopped()) return;
    const std::string_view name = key.str();
    const long line =
        key.source().begin.line != 0 ? static_cast<long>(key.source().begin.line) : toml_line(node);
    if (const toml::array* list = node.as_array()) {
      if (!reader->begin_set(name, DataSets::Kind::List, line)) continue;
      for (const toml::node& item : *list) {
        if (const auto* s = item.as_string())
          reader->add_member(s->get(), toml_line(item));
        else
          reader->wrong_type(toml_line(item), toml_type(item));
      }
    } else if (const toml::table* map = node.as_table()) {
      if (!reader->begin_set(name, DataSets::Kind::Map, line)) continue;
      for (auto&& [k, v] : *map) {
        if (const auto* s = v.as_string())
          reader->add_entry(k.str(), s->get(), toml_line(v));
        else
          reader->wrong_type(toml_line(v), toml_type(v));
      }
    } else {
      reader->error(code::kData, line,
                    "\"" + shown(name) + "\" must be a list of strings (" + shown(name) +
                        " = [\"a\", \"b\"]) or a table of strings ([" + shown(name) + "]), not " +
                        toml_type(node));
    }
  }
}

// ---------------------------------------------------------------- JSON

// rapidjson's string stream, counting the lines it has read.
struct LineStream {
  using Ch = char;
  explicit LineStream(const char* text) : stream(text) {}
  Ch Peek() const { return stream.Peek(); }
  Ch Take() {
    const Ch c = stream.Take();
    if (c == '\n') ++line;
    return c;
  }
  std::size_t Tell() const { return stream.Tell(); }
  Ch* PutBegin() { return nullptr; }  // never parsed in place
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch*) { return 0; }

  rapidjson::StringStream stream;
  long line = 1;
};

// The SAX events of one document: {"name": ["value", …], "name": {"key": "value", …}, …}.
// Anything else is an error at its line; a container in the wrong place is skipped whole.
class JsonHandler {
 public:
  JsonHandler(FileReader* reader, const LineStream* stream) : reader_(reader), stream_(stream) {}

  bool StartObject() { return open(DataSets::Kind::Map, "an object"); }
  bool StartArray() { return open(DataSets::Kind::List, "a list"); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool EndArray(rapidjson::SizeType) { return close(); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (skip_ == 0 && !frames_.empty()) {
      if (frames_.back() == Frame::Top) {
        name_.assign(s, n);
        name_line_ = line();
      } else {
        key_.assign(s, n);
      }
    }
    return go_on();
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (skip_ != 0) return true;
    if (!frames_.empty() && frames_.back() == Frame::List)
      reader_->add_member(std::string_view(s, n), line());
    else if (!frames_.empty() && frames_.back() == Frame::Map)
      reader_->add_entry(key_, std::string_view(s, n), line());
    else
      scalar("a string");
    return go_on();
  }
  bool Null() { return scalar("null"); }
  bool Bool(bool) { return scalar("a boolean"); }
  bool Int(int) { return scalar("a number"); }
  bool Uint(unsigned) { return scalar("a number"); }
  bool Int64(std::int64_t) { return scalar("a number"); }
  bool Uint64(std::uint64_t) { return scalar("a number"); }
  bool Double(double) { return scalar("a number"); }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return scalar("a number"); }

 private:
  enum class Frame { Top, List, Map };

  long line() const { return stream_->line; }
  bool go_on() const { return !reader_->stopped(); }

  bool open(DataSets::Kind kind, const char* what) {
    if (skip_ != 0) {
      ++skip_;
    } else if (frames_.empty()) {
      if (kind == DataSets::Kind::Map) {
        frames_.push_back(Frame::Top);
      } else {
        top_level_error(what);
        ++skip_;
      }
    } else if (frames_.back() == Frame::Top) {
      if (reader_->begin_set(name_, kind, name_line_))
        frames_.push_back(kind == DataSets::Kind::List ? Frame::List : Frame::Map);
      else
        ++skip_;
    } else {
      reader_->wrong_type(line(), what);
      ++skip_;
    }
    return go_on();
  }

  bool close() {
    if (skip_ != 0)
      --skip_;
    else if (!frames_.empty())
      frames_.pop_back();
    return go_on();
  }

  bool scalar(const char* what) {
    if (skip_ != 0) return true;
    if (frames_.empty()) {
      top_level_error(what);
    } else if (frames_.back() == Frame::Top) {
      reader_->error(code::kData, line(),
                     "\"" + shown(name_) +
                         "\" must be a list of strings ([\"a\", \"b\"]) or an object of strings "
                         "({\"key\": \"value\"}), not " +
                         std::string(what));
    } else {
      reader_->wrong_type(line(), what);
    }
    return go_on();
  }

  void top_level_error(const char* what) {
    reader_->error(code::kData, line(),
                   std::string("a data file holds one JSON object of named lists and maps "
                               "({\"name\": [\"a\", \"b\"]}), not ") +
                       what);
  }

  FileReader* reader_;
  const LineStream* stream_;
  std::vector<Frame> frames_;
  int skip_ = 0;  // depth inside a container being skipped
  std::string name_, key_;
  long name_line_ = 0;
};

void read_json(const RuleSource& source, FileReader* reader) {
  LineStream stream(source.text.c_str());
  JsonHandler handler(reader, &stream);
  // A user's file: outside text, the shared limits (a lone surrogate escape is left to
  // add_member's UTF-8 check, which names the value).
  const json::Error e = json::read(source.text, stream, handler);
  if (e && !reader->stopped()) {
    const bool value = e.code == rapidjson::kParseErrorStringInvalidEncoding ||
                       e.code == rapidjson::kParseErrorStringUnicodeSurrogateInvalid;
    reader->error(value ? code::kDataValue : code::kData, line_at(source.text, e.offset),
                  std::string("JSON: ") + e.reason());
  }
}

}  // namespace

bool is_data_file(std::string_view path) {
  return ends_with_stem(path, kTomlSuffix) || ends_with_stem(path, kJsonSuffix);
}

bool read_data_file(const RuleSource& source, DataSets* sets, Diagnostics* diagnostics) {
  FileReader reader(source, *sets, diagnostics);
  if (!check_text(source, &reader)) return false;
  if (ends_with_stem(source.path, kJsonSuffix))
    read_json(source, &reader);
  else
    read_toml(source, &reader, diagnostics);
  return reader.commit(sets);
}

}  // namespace warden
