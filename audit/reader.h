// Reading an audit log (docs/AUDIT.md): the files of one log (the live file and its rotated
// siblings) mapped read-only and ordered by their first record's seq, their lines, and the
// decision records parsed for query and replay. A LogSet is immutable once open and may be
// read from several threads; parse_decision is pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/decision.h"

namespace warden::audit {

// The rotated siblings of the live file `live_path` (`<stem>.<first 12 digits>-<last 12
// digits><ext>` in its directory), sorted by name, then `live_path` itself (listed even when
// it does not exist, so opening it names the cause).
std::vector<std::string> log_files(const std::string& live_path);

// log_files() of each path, in order, without duplicates (a rotated file named explicitly
// and again as a sibling of the live file is read once).
std::vector<std::string> expand_log_paths(const std::vector<std::string>& paths);

// One line of a log file: its bytes without the '\n', the index of its file in
// LogSet::files(), its 1-based line number in that file, and whether it ended with '\n'
// (only a file's last line can lack it: a torn write).
struct LogLine {
  std::string_view text;
  std::size_t file = 0;
  std::uint64_t line = 0;
  bool terminated = true;
};

// The leading `{"seq":S,"prev":"…","kind":"K"` of a line, read without a JSON parser; false
// when the line does not start that way.
bool peek_seq_kind(std::string_view line, std::uint64_t* seq, std::string_view* kind);

class LogSet {
 public:
  LogSet() = default;
  LogSet(LogSet&&) noexcept;
  LogSet& operator=(LogSet&&) noexcept;
  LogSet(const LogSet&) = delete;
  LogSet& operator=(const LogSet&) = delete;
  ~LogSet();

  // Maps each file read-only and orders them by the seq of their first line (stable; files
  // whose first line has no seq, and empty files, go last). False with the cause (the path
  // and the errno text) when a file cannot be opened or mapped.
  static bool open(const std::vector<std::string>& paths, LogSet* out, std::string* error);

  // The paths in seq order; file(i) is the i-th one's bytes (valid while the LogSet lives).
  const std::vector<std::string>& files() const { return paths_; }
  std::string_view file(std::size_t index) const { return {maps_[index].data, maps_[index].size}; }
  std::uint64_t total_bytes() const;

  // f(const LogLine&) for every line of every file in order; f may return void, or bool
  // (false stops the iteration).
  template <class F>
  void for_each_line(F&& f) const {
    for (std::size_t i = 0; i < maps_.size(); ++i) {
      std::string_view rest = file(i);
      std::uint64_t number = 0;
      while (!rest.empty()) {
        std::size_t nl = rest.find('\n');
        LogLine line{rest.substr(0, nl), i, ++number, nl != std::string_view::npos};
        rest = line.terminated ? rest.substr(nl + 1) : std::string_view();
        if constexpr (std::is_same_v<decltype(f(line)), bool>) {
          if (!f(line)) return;
        } else {
          f(line);
        }
      }
    }
  }
  // Every line, in order (for callers that split the work across threads).
  std::vector<LogLine> lines() const;

 private:
  struct Map {
    const char* data = nullptr;
    std::size_t size = 0;
  };
  void release();
  std::vector<std::string> paths_;
  std::vector<Map> maps_;
};

// A `decision` record, as query and replay need it.
struct DecisionRecord {
  std::uint64_t seq = 0;
  std::int64_t time_us = 0;  // the decision's clock (µs since the epoch)
  std::string daemon, decision_id, rules_digest, principal, session;
  std::string proposal_json;  // the "input" object, re-serialized (compact); when the client
                              // sent no JSON, the text it sent (a JSON string in the record)
  std::string action_json;    // the "action" object when a rewrite was applied, else ""
  std::string reason, error_code;
  std::vector<std::string> groups;
  Outcome outcome = Outcome::Reject;
  bool defaulted = false;
  std::vector<FiredRule> rules;
  std::vector<EffectRecord> effects;
  std::int64_t elapsed_us = 0;
  bool masked = false;  // "masks" is not empty: secrets in the input were replaced
};

// Parses one decision line (without its '\n'). False with the cause when the line is not
// JSON, not a decision record, or lacks a member of the decision shape. Does not check the
// hash (that is verify's job).
// Lines of kMaxParsedLine bytes or more (4 GiB) are refused unread.
inline constexpr std::uint64_t kMaxParsedLine = std::uint64_t{1} << 32;
bool parse_decision(std::string_view line, DecisionRecord* out, std::string* error);

// What replay needs of a decision record, read without building a DOM: the members' spans
// by one structural pass, the input object's bytes as they are (the daemon's own compact
// serialization), and the effects parsed only when the session will remember them. False
// when the record has an unusual shape (an escaped string, a missing member): the caller
// then reads it with parse_decision, which names any problem. rules and reason are left
// empty (a changed record is read again in full).
// A record it reads, parse_decision reads alike: the same members (the input as the daemon
// wrote it, not re-serialized; the effects only when replay needs them).
bool read_decision_lean(std::string_view line, DecisionRecord* out);

}  // namespace warden::audit
