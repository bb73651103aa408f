#include "audit/replay_read.h"

#include <rapidjson/document.h>

#include <filesystem>

#include "audit/line_scan.h"
#include "bindings/json.h"

namespace warden::audit::replay {
namespace {

std::uint64_t fnv1a(std::string_view a, std::string_view b) {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : a) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  h = (h ^ 0xff) * 1099511628211ull;  // separator: ("ab","c") and ("a","bc") differ
  for (char c : b) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h ^ (h >> 29);
}

// "session":{"ttl_seconds","max_entries","max_sessions","max_bytes"}; false when absent or
// of another shape.
bool read_session_settings(const rapidjson::Value& doc, SessionMemoryOptions* out) {
  auto it = doc.FindMember("session");
  if (it == doc.MemberEnd() || !it->value.IsObject()) return false;
  auto num = [&](const char* name, std::uint64_t* v) {
    auto m = it->value.FindMember(name);
    if (m == it->value.MemberEnd() || !m->value.IsUint64()) return false;
    *v = m->value.GetUint64();
    return true;
  };
  std::uint64_t ttl = 0, entries = 0, sessions = 0, bytes = 0;
  if (!num("ttl_seconds", &ttl) || !num("max_entries", &entries) ||
      !num("max_sessions", &sessions) || !num("max_bytes", &bytes) ||
      ttl > (std::uint64_t(1) << 62))
    return false;
  out->ttl_seconds = static_cast<std::int64_t>(ttl);
  out->max_entries = entries;
  out->max_sessions = sessions;
  out->max_bytes = bytes;
  return true;
}

bool read_start(std::string_view line, StartSettings* out) {
  rapidjson::Document doc;
  if (warden::json::parse(line, &doc, warden::json::Limits::any_depth()) || !doc.IsObject())
    return false;
  auto get = [&](const char* name, std::string* v) {
    const rapidjson::Value* m = warden::json::member(doc, name);
    if (!m || !m->IsString()) return false;
    v->assign(m->GetString(), m->GetStringLength());
    return true;
  };
  SessionMemoryOptions session;
  if (read_session_settings(doc, &session)) out->session = session;
  return get("workspace_root", &out->workspace_root) && get("home", &out->home) &&
         get("default_outcome", &out->default_outcome) &&
         parse_outcome(out->default_outcome).has_value();
}

// Two names of one file (as expand_log_paths tells them apart).
bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  std::error_code ea, eb;
  const std::filesystem::path ca = std::filesystem::weakly_canonical(a, ea);
  const std::filesystem::path cb = std::filesystem::weakly_canonical(b, eb);
  return !ea && !eb && ca == cb;
}

}  // namespace

bool read_logs(const ReplayOptions& options, const LogSet& logs, unsigned threads,
               ReplayReport* report, LogRead* out, std::string* error) {
  ReplayReport& rep = *report;
  // One pass on this thread: line boundaries, seq and kind, and each decision's owner.
  std::vector<std::vector<Item>>& work = out->work;
  work.assign(threads, {});
  std::optional<StartSettings>& start = out->start;
  std::uint64_t& start_seq = out->start_seq;
  std::uint64_t round_robin = 0;
  bool& starts_differ = out->starts_differ;
  // One segment per daemon run: a start record begins one (the daemon's session memory
  // starts empty there, with that run's [session] settings). The flags override each run's.
  auto with_flags = [&](SessionMemoryOptions m) {
    if (options.session_ttl_seconds) m.ttl_seconds = *options.session_ttl_seconds;
    if (options.session_max_entries) m.max_entries = *options.session_max_entries;
    if (options.session_max_sessions) m.max_sessions = *options.session_max_sessions;
    if (options.session_max_bytes) m.max_bytes = *options.session_max_bytes;
    return m;
  };
  std::vector<Segment>& segments = out->segments;
  segments = {{with_flags(SessionMemoryOptions{}), 0}};
  std::vector<std::uint64_t>& unrecorded_session = out->unrecorded_session;
  // Per file: lines, and lines that are records (seq, prev and kind where a record has them).
  std::vector<std::uint64_t> file_lines(rep.files.size()), file_records(rep.files.size());
  logs.for_each_line([&](const LogLine& line) {
    if (line.text.empty() && !line.terminated) return;  // nothing after the last '\n'
    ++rep.records;
    ++file_lines[line.file];
    std::uint64_t seq = 0;
    std::string_view kind;
    if (!peek_seq_kind(line.text, &seq, &kind)) {
      ++rep.parse_errors;
      if (rep.problems.size() < 20)
        rep.problems.push_back({line.file, line.line, 0,
                                "not a record: the line does not start with seq, prev and kind"});
      return;
    }
    ++file_records[line.file];
    if (kind == "decision") {
      ++rep.decisions;
      std::size_t from = 0;
      std::string_view principal = scan::raw_string_member(line.text, ",\"principal\":\"", &from);
      std::string_view session = scan::raw_string_member(line.text, ",\"session\":\"", &from);
      std::size_t owner =
          session.empty() ? (round_robin++ % threads) : fnv1a(principal, session) % threads;
      work[owner].push_back({line.text, static_cast<std::uint32_t>(line.file), line.line,
                             static_cast<std::uint32_t>(segments.size() - 1)});
      return;
    }
    if (kind == "approval") {
      ++rep.approvals;
      return;
    }
    ++rep.skipped_kinds[std::string(kind)];
    if (kind == "start") {
      StartSettings s;
      const bool complete = read_start(line.text, &s);
      if (!s.session) unrecorded_session.push_back(seq);
      segments.push_back({with_flags(s.session.value_or(SessionMemoryOptions{})), seq});
      if (!complete) {
        rep.warnings.push_back("start record seq " + std::to_string(seq) +
                               " lacks workspace_root, home or default_outcome");
      } else if (!start) {
        start = s;
        start_seq = seq;
      } else if (s.workspace_root != start->workspace_root || s.home != start->home ||
                 s.default_outcome != start->default_outcome) {
        starts_differ = true;
      }
    }
  });

  // A log given that holds no record (with its rotated siblings) is not a log replayed
  // without change: a CI gate pointed at the wrong path, an empty file, a file of something
  // else. It fails the replay, naming the log.
  for (const std::string& given : options.logs) {
    std::uint64_t lines = 0, records = 0;
    std::size_t files = 0;
    for (const std::string& f : log_files(given)) {
      for (std::size_t i = 0; i < rep.files.size(); ++i) {
        if (!same_file(rep.files[i], f)) continue;
        ++files;
        lines += file_lines[i];
        records += file_records[i];
      }
    }
    if (records == 0) {
      *error = given + ": no audit record read (" + std::to_string(lines) + " line(s) in " +
               std::to_string(files) +
               " file(s), none of them a record): not an audit log, or an empty one";
      return false;
    }
  }
  return true;
}

EngineOptions replay_settings(const ReplayOptions& options, const LogRead& read,
                              ReplayReport* report) {
  ReplayReport& rep = *report;
  const std::optional<StartSettings>& start = read.start;
  const std::uint64_t start_seq = read.start_seq;
  const std::vector<Segment>& segments = read.segments;
  const std::vector<std::uint64_t>& unrecorded_session = read.unrecorded_session;
  EngineOptions eo;
  rep.options_from = start ? "start record seq " + std::to_string(start_seq) : "engine defaults";
  if (start) {
    eo.workspace_root = start->workspace_root;
    eo.home = start->home;
    eo.default_outcome = *parse_outcome(start->default_outcome);
  }
  if (options.workspace_root || options.home || options.default_outcome)
    rep.options_from += ", flags";
  if (options.workspace_root) eo.workspace_root = *options.workspace_root;
  if (options.home) eo.home = *options.home;
  if (options.default_outcome) eo.default_outcome = *options.default_outcome;
  if (read.starts_differ)
    rep.warnings.push_back(
        "the log's start records name different workspace, home or default outcome; "
        "every record is replayed with one setting (" +
        rep.options_from + ")");
  {
    bool flags = options.session_ttl_seconds || options.session_max_entries ||
                 options.session_max_sessions || options.session_max_bytes;
    // ttl and max_entries shape each session's history; the caps over all sessions only the
    // warning below.
    if (!unrecorded_session.empty() &&
        !(options.session_ttl_seconds && options.session_max_entries))
      rep.warnings.push_back(
          std::to_string(unrecorded_session.size()) + " start record(s) (the first seq " +
          std::to_string(unrecorded_session.front()) +
          ") do not record the daemon's session memory settings; the defaults (" +
          describe(SessionMemoryOptions{}) + ") are assumed for the records after them");
    // The runs the records are in (segment 0 only holds records before any start record).
    std::size_t first = segments.size() > 1 ? 1 : 0;
    rep.session = segments[first].memory;
    rep.session_from =
        (segments[first].start_seq ? "start record seq " + std::to_string(segments[first].start_seq)
                                   : std::string("defaults")) +
        (flags ? ", flags" : "");
    for (std::size_t i = first + 1; i < segments.size(); ++i) {
      const auto& a = segments[i - 1].memory;
      const auto& b = segments[i].memory;
      if (a.ttl_seconds != b.ttl_seconds || a.max_entries != b.max_entries ||
          a.max_sessions != b.max_sessions || a.max_bytes != b.max_bytes)
        rep.warnings.push_back("session memory from start record seq " +
                               std::to_string(segments[i].start_seq) + " on: " + describe(b));
    }
  }
  eo.deadline = options.deadline;
  rep.workspace_root = eo.workspace_root;
  rep.home = eo.home;
  rep.default_outcome = eo.default_outcome;
  return eo;
}

}  // namespace warden::audit::replay
