// The replay report as text and as JSON (report_text, report_json in audit/replay.h).
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>
#include <ctime>

#include "audit/replay.h"
#include "audit/replay_history.h"

namespace warden::audit {

namespace {

using replay::describe;

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// UTC "YYYY-MM-DDTHH:MM:SS.ffffffZ", as the log writes it.
std::string format_time_text(std::int64_t us) {
  std::int64_t secs = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
  std::int64_t frac = us - secs * 1000000;
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

std::string rule_line(const FiredRule& r) {
  std::string s = r.rule + " → " + std::string(outcome_name(r.outcome));
  if (r.monitor) s += " (monitor)";
  if (!r.reason.empty()) s += ": " + r.reason;
  return s;
}

}  // namespace

std::string report_text(const ReplayReport& rep, std::size_t limit,
                        const std::function<std::string(std::string_view)>& esc) {
  auto e = [&](std::string_view s) { return esc ? esc(s) : std::string(s); };
  std::string out;
  out += "replay of " + std::to_string(rep.files.size()) + " file(s), " +
         std::to_string(rep.bytes) + " bytes, under " + e(rep.rules_digest) + "\n";
  out += "  records " + std::to_string(rep.records) + ", decisions " +
         std::to_string(rep.decisions) + ", replayed " + std::to_string(rep.replayed) +
         ", unreadable " + std::to_string(rep.parse_errors);
  if (rep.approvals)
    out += ", approval records " + std::to_string(rep.approvals) +
           " (a person decided: not re-decided)";
  std::string skipped;
  for (const auto& [kind, n] : rep.skipped_kinds)
    skipped += (skipped.empty() ? "" : ", ") + e(kind) + " " + std::to_string(n);
  out += skipped.empty() ? "\n" : "; skipped: " + skipped + "\n";
  out += "  engine: workspace " + e(rep.workspace_root) + ", home " + e(rep.home) +
         ", default outcome " + std::string(outcome_name(rep.default_outcome)) + " (from " +
         rep.options_from + ")\n";
  out += "  session memory: " + describe(rep.session) + " (from " + rep.session_from + ")\n";
  out += "  the rules see: the clock " + std::string(rep.inputs.uses_clock ? "yes" : "no") +
         ", context.session " + (rep.inputs.uses_session ? "yes" : "no") + ", context.agent " +
         (rep.inputs.uses_agent ? "yes" : "no") + ", session history " +
         std::string(rep.inputs.uses_history ? "yes" : "no");
  if (rep.inputs.uses_history)
    out += std::string(" (age ") + (rep.inputs.uses_history_age ? "yes" : "no") + ", decision id " +
           (rep.inputs.uses_history_decision ? "yes" : "no") + ")";
  if (rep.inputs.all_history)
    out += "; every history fact counts: " + e(rep.inputs.why_all_history);
  out += "\n";
  out += "  " + std::to_string(rep.threads) + " thread(s), " + fixed(rep.seconds, 2) + " s, " +
         fixed(rep.seconds > 0 ? static_cast<double>(rep.replayed) / rep.seconds : 0, 0) +
         " records/s";
  if (rep.cache) {
    const std::uint64_t n = rep.cache_hits + rep.cache_misses;
    out += ", cache hits " + std::to_string(rep.cache_hits) + " (" +
           fixed(n ? 100.0 * static_cast<double>(rep.cache_hits) / static_cast<double>(n) : 0, 1) +
           "%), " + std::to_string(rep.cache_new_proposals) + " distinct proposals";
  } else {
    out += ", no cache";
  }
  out += "\n";
  if (rep.masked)
    out += "  " + std::to_string(rep.masked) +
           " replayed record(s) had secrets masked in their input\n";
  for (const auto& w : rep.warnings) out += "warning: " + e(w) + "\n";
  for (const auto& p : rep.problems)
    out += "unreadable: " + e(rep.files[p.file]) + ":" + std::to_string(p.line) +
           (p.seq ? " seq " + std::to_string(p.seq) : std::string()) + ": " + e(p.message) + "\n";

  out += "\noutcomes (rows: recorded, columns: replayed)\n";
  const char* names[3] = {"approve", "approval-required", "reject"};
  out += pad("", 19);
  for (const char* n : names) out += pad(n, 19);
  out += "\n";
  for (int a = 0; a < 3; ++a) {
    out += pad(names[a], 19);
    for (int b = 0; b < 3; ++b) out += pad(std::to_string(rep.matrix[a][b]), 19);
    out += "\n";
  }
  out += "\n" + std::to_string(rep.changed) + " changed, " + std::to_string(rep.widenings) +
         " widening\n";

  std::size_t shown = 0;
  for (const auto& c : rep.changes) {
    if (limit && shown == limit) {
      out += "… " + std::to_string(rep.changes.size() - shown) +
             " more change(s) not shown (--limit-changes)\n";
      break;
    }
    ++shown;
    out += "\n";
    out += c.widening ? "WIDENING " : "narrowing ";
    out += "seq " + std::to_string(c.seq) + " " + e(rep.files[c.file]) + ":" +
           std::to_string(c.line) + " " + e(format_time_text(c.time_us)) + " principal " +
           e(c.principal) + " session " + e(c.session) + (c.masked ? " [input masked]" : "") + "\n";
    out += "  " + e(c.summary) + "\n";
    out += "  before: " + std::string(outcome_name(c.old_outcome)) +
           (c.old_error.empty() ? "" : " (" + e(c.old_error) + ")") + ": " + e(c.old_reason) + "\n";
    for (const auto& r : c.old_rules) out += "    " + e(rule_line(r)) + "\n";
    out += "  now:    " + std::string(outcome_name(c.new_outcome)) +
           (c.new_error.empty() ? "" : " (" + e(c.new_error) + ")") + ": " + e(c.new_reason) + "\n";
    for (const auto& r : c.new_rules) out += "    " + e(rule_line(r)) + "\n";
  }
  return out;
}

std::string report_json(const ReplayReport& rep, std::size_t limit) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto str = [&](std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  auto rules = [&](const std::vector<FiredRule>& list) {
    w.StartArray();
    for (const auto& r : list) {
      w.StartObject();
      w.Key("rule");
      str(r.rule);
      w.Key("outcome");
      str(outcome_name(r.outcome));
      w.Key("reason");
      str(r.reason);
      w.Key("mode");
      str(r.monitor ? "monitor" : "enforce");
      w.EndObject();
    }
    w.EndArray();
  };
  w.StartObject();
  w.Key("files");
  w.StartArray();
  for (const auto& f : rep.files) str(f);
  w.EndArray();
  w.Key("rules_digest");
  str(rep.rules_digest);
  w.Key("engine");
  w.StartObject();
  w.Key("workspace_root");
  str(rep.workspace_root);
  w.Key("home");
  str(rep.home);
  w.Key("default_outcome");
  str(outcome_name(rep.default_outcome));
  w.Key("from");
  str(rep.options_from);
  w.Key("session");
  w.StartObject();
  w.Key("ttl_seconds");
  w.Int64(rep.session.ttl_seconds);
  w.Key("max_entries");
  w.Uint64(rep.session.max_entries);
  w.Key("max_sessions");
  w.Uint64(rep.session.max_sessions);
  w.Key("max_bytes");
  w.Uint64(rep.session.max_bytes);
  w.Key("from");
  str(rep.session_from);
  w.EndObject();
  w.EndObject();
  w.Key("rules_see");
  w.StartObject();
  w.Key("clock");
  w.Bool(rep.inputs.uses_clock);
  w.Key("history");
  w.Bool(rep.inputs.uses_history);
  w.Key("history_age");
  w.Bool(rep.inputs.uses_history_age);
  w.Key("history_decision");
  w.Bool(rep.inputs.uses_history_decision);
  w.EndObject();
  w.Key("totals");
  w.StartObject();
  w.Key("bytes");
  w.Uint64(rep.bytes);
  w.Key("records");
  w.Uint64(rep.records);
  w.Key("decisions");
  w.Uint64(rep.decisions);
  w.Key("replayed");
  w.Uint64(rep.replayed);
  w.Key("unreadable");
  w.Uint64(rep.parse_errors);
  w.Key("approvals");
  w.Uint64(rep.approvals);
  w.Key("skipped");
  w.StartObject();
  for (const auto& [kind, n] : rep.skipped_kinds) {
    w.Key(kind.c_str(), static_cast<rapidjson::SizeType>(kind.size()));
    w.Uint64(n);
  }
  w.EndObject();
  w.Key("masked");
  w.Uint64(rep.masked);
  w.Key("changed");
  w.Uint64(rep.changed);
  w.Key("widening");
  w.Uint64(rep.widenings);
  w.Key("threads");
  w.Uint(rep.threads);
  w.Key("seconds");
  w.Double(rep.seconds);
  w.Key("cache");
  w.Bool(rep.cache);
  w.Key("cache_hits");
  w.Uint64(rep.cache_hits);
  w.Key("cache_misses");
  w.Uint64(rep.cache_misses);
  w.Key("distinct_proposals");
  w.Uint64(rep.cache_new_proposals);
  w.EndObject();
  w.Key("matrix");
  w.StartObject();
  const char* names[3] = {"approve", "approval-required", "reject"};
  for (int a = 0; a < 3; ++a) {
    w.Key(names[a]);
    w.StartObject();
    for (int b = 0; b < 3; ++b) {
      w.Key(names[b]);
      w.Uint64(rep.matrix[a][b]);
    }
    w.EndObject();
  }
  w.EndObject();
  w.Key("warnings");
  w.StartArray();
  for (const auto& s : rep.warnings) str(s);
  w.EndArray();
  w.Key("unreadable_records");
  w.StartArray();
  for (const auto& p : rep.problems) {
    w.StartObject();
    w.Key("file");
    str(rep.files[p.file]);
    w.Key("line");
    w.Uint64(p.line);
    w.Key("seq");
    w.Uint64(p.seq);
    w.Key("error");
    str(p.message);
    w.EndObject();
  }
  w.EndArray();
  w.Key("changes");
  w.StartArray();
  std::size_t shown = 0;
  for (const auto& c : rep.changes) {
    if (limit && shown++ == limit) break;
    w.StartObject();
    w.Key("seq");
    w.Uint64(c.seq);
    w.Key("time");
    str(format_time_text(c.time_us));
    w.Key("file");
    str(rep.files[c.file]);
    w.Key("line");
    w.Uint64(c.line);
    w.Key("principal");
    str(c.principal);
    w.Key("session");
    str(c.session);
    w.Key("decision_id");
    str(c.decision_id);
    w.Key("summary");
    str(c.summary);
    w.Key("masked");
    w.Bool(c.masked);
    w.Key("widening");
    w.Bool(c.widening);
    w.Key("before");
    w.StartObject();
    w.Key("outcome");
    str(outcome_name(c.old_outcome));
    w.Key("reason");
    str(c.old_reason);
    w.Key("error_code");
    str(c.old_error);
    w.Key("rules");
    rules(c.old_rules);
    w.EndObject();
    w.Key("after");
    w.StartObject();
    w.Key("outcome");
    str(outcome_name(c.new_outcome));
    w.Key("reason");
    str(c.new_reason);
    w.Key("error_code");
    str(c.new_error);
    w.Key("rules");
    rules(c.new_rules);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace warden::audit
