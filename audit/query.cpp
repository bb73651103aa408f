#include "audit/query.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <charconv>

#include "audit/chain.h"
#include "bindings/json.h"

namespace warden::audit {

namespace {

bool digits(std::string_view s, std::size_t at, std::size_t n, int* out) {
  if (at + n > s.size()) return false;
  *out = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    *out = *out * 10 + (s[i] - '0');
  }
  return true;
}

// RFC 3339 (and a bare date) → µs since the epoch, through the log's own time format.
bool parse_rfc3339(std::string_view text, std::int64_t* out) {
  int y, mo, d, h = 0, mi = 0, s = 0;
  if (!digits(text, 0, 4, &y) || text.size() < 10 || text[4] != '-' || !digits(text, 5, 2, &mo) ||
      text[7] != '-' || !digits(text, 8, 2, &d))
    return false;
  std::size_t at = 10;
  std::string fraction = "000000";
  std::int64_t offset_s = 0;
  if (text.size() > at) {
    if (text[at] != 'T' && text[at] != 't' && text[at] != ' ') return false;
    if (!digits(text, at + 1, 2, &h) || text.size() < at + 9 || text[at + 3] != ':' ||
        !digits(text, at + 4, 2, &mi) || text[at + 6] != ':' || !digits(text, at + 7, 2, &s))
      return false;
    at += 9;
    if (at < text.size() && text[at] == '.') {
      std::size_t end = ++at;
      while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
      if (end == at) return false;
      std::string_view f = text.substr(at, std::min<std::size_t>(end - at, 6));
      fraction.replace(0, f.size(), f);
      at = end;
    }
    if (at >= text.size()) return false;  // a time needs its zone
    if (text[at] == 'Z' || text[at] == 'z') {
      ++at;
    } else if (text[at] == '+' || text[at] == '-') {
      int oh, om;
      if (!digits(text, at + 1, 2, &oh) || text.size() < at + 6 || text[at + 3] != ':' ||
          !digits(text, at + 4, 2, &om))
        return false;
      offset_s = (text[at] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
      at += 6;
    } else {
      return false;
    }
    if (at != text.size()) return false;
  }
  char canonical[40];
  std::snprintf(canonical, sizeof canonical, "%04d-%02d-%02dT%02d:%02d:%02d.%sZ", y, mo, d, h, mi,
                s, fraction.c_str());
  std::int64_t t = 0;
  if (!parse_time(canonical, &t)) return false;
  *out = t - offset_s * 1000000;
  return true;
}

// Filters only decisions can match; only decisions and approval records; only approvals.
bool has_decision_filter(const QueryFilter& f) { return f.outcome.has_value(); }
bool has_shared_filter(const QueryFilter& f) {
  return !f.rule.empty() || !f.principal.empty() || !f.session.empty() || !f.target.empty();
}
bool has_approval_filter(const QueryFilter& f) {
  return !f.approval_id.empty() || !f.event.empty();
}

// An approval record's row; false when it does not match the filter (or is not readable:
// *unreadable set).
bool approval_row(std::string_view fields, const QueryFilter& filter, QueryRow* r,
                  bool* unreadable) {
  rapidjson::Document doc;
  const std::string text = "{" + std::string(fields) + "}";
  // Audit lines are the daemon's own (one edited on disk with a NUL or a misread zero is
  // unreadable).
  if (warden::json::parse_stored(text, &doc) || !doc.IsObject()) {
    *unreadable = true;
    return false;
  }
  const std::string id = warden::json::string_member(doc, "approval_id"),
                    event = warden::json::string_member(doc, "event");
  if (!filter.approval_id.empty() && id != filter.approval_id) return false;
  if (!filter.event.empty() && event != filter.event) return false;
  r->principal = warden::json::string_member(doc, "requester");
  r->session = warden::json::string_member(doc, "session");
  if (!filter.principal.empty() && r->principal != filter.principal) return false;
  if (!filter.session.empty() && r->session != filter.session) return false;
  auto rules = doc.FindMember("rules");
  if (rules != doc.MemberEnd() && rules->value.IsArray()) {
    for (const auto& rule : rules->value.GetArray())
      if (rule.IsString()) r->rules.emplace_back(rule.GetString(), rule.GetStringLength());
  }
  if (!filter.rule.empty() &&
      std::find(r->rules.begin(), r->rules.end(), filter.rule) == r->rules.end())
    return false;
  std::string action;
  auto a = doc.FindMember("action");
  if (a != doc.MemberEnd() && a->value.IsObject()) {
    if (!filter.target.empty() && warden::json::string_member(a->value, "target") != filter.target)
      return false;
    action = proposal_summary(warden::json::to_text(a->value));
  } else if (!filter.target.empty()) {
    return false;
  }
  const std::string by = warden::json::string_member(doc, "by");
  r->outcome = event;
  r->summary =
      id + " " + event + (by.empty() ? "" : " by " + by) + (action.empty() ? "" : ": " + action);
  auto masks = doc.FindMember("masks");
  r->masked = masks != doc.MemberEnd() && masks->value.IsArray() && !masks->value.Empty();
  return true;
}

}  // namespace

bool parse_time_arg(std::string_view text, std::int64_t now_us, std::int64_t* out,
                    std::string* error) {
  if (text.size() >= 2) {
    const char unit = text.back();
    std::int64_t scale = unit == 's'   ? 1
                         : unit == 'm' ? 60
                         : unit == 'h' ? 3600
                         : unit == 'd' ? 86400
                         : unit == 'w' ? 7 * 86400
                                       : 0;
    std::uint64_t n = 0;
    std::string_view number = text.substr(0, text.size() - 1);
    auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
    if (scale && ec == std::errc() && p == number.data() + number.size() && n <= 100000ull * 365) {
      *out = now_us - static_cast<std::int64_t>(n) * scale * 1000000;
      return true;
    }
  }
  if (parse_rfc3339(text, out)) return true;
  *error = "\"" + std::string(text) +
           "\" is not a time: use RFC 3339 (2026-11-22T10:00:00Z, 2026-11-22) or a duration before "
           "now (90s, 30m, "
           "24h, 7d, 2w)";
  return false;
}

std::string proposal_summary(std::string_view proposal_json) {
  rapidjson::Document doc;  // a record's input, read as approval_row reads a record
  if (warden::json::parse_stored(proposal_json, &doc) || !doc.IsObject())
    return std::string(proposal_json);
  std::string head = warden::json::string_member(doc, "target");
  const std::string action = warden::json::string_member(doc, "action");
  if (!action.empty()) head += (head.empty() ? "" : " ") + action;
  auto payload = doc.FindMember("payload");
  if (payload != doc.MemberEnd() && payload->value.IsObject()) {
    for (const char* key : {"command", "path", "url", "tool", "name", "text"}) {
      std::string value = warden::json::string_member(payload->value, key);
      if (!value.empty()) return head + ": " + value;
    }
    return head + ": " + warden::json::to_text(payload->value);
  }
  return head;
}

QueryStats run_query(const LogSet& set, const QueryFilter& filter,
                     const std::function<void(const QueryRow&)>& row) {
  QueryStats stats;
  const bool any_kind = filter.kind == "all";
  const bool decision_filter = has_decision_filter(filter);
  const bool shared_filter = has_shared_filter(filter);
  const bool approval_filter = has_approval_filter(filter);
  set.for_each_line([&](const LogLine& line) {
    ++stats.lines;
    std::uint64_t seq = 0;
    std::string_view kind;
    if (!line.terminated || !peek_seq_kind(line.text, &seq, &kind)) {
      ++stats.unreadable;
      return true;
    }
    if (!any_kind && kind != filter.kind) return true;
    if (filter.seq && seq != *filter.seq) return true;
    if (decision_filter && kind != "decision") return true;
    if (shared_filter && kind != "decision" && kind != "approval") return true;
    if (approval_filter && kind != "approval") return true;
    Head head;
    std::string error;
    std::int64_t time_us = 0;
    if (!parse_head(line.text, &head, &error) || !parse_time(head.time, &time_us)) {
      ++stats.unreadable;
      return true;
    }
    if (filter.since_us && time_us < *filter.since_us) return true;
    if (filter.until_us && time_us >= *filter.until_us) return true;
    QueryRow r;
    r.seq = seq;
    r.time_us = time_us;
    r.kind = std::string(kind);
    r.line = line.text;
    if (kind == "decision") {
      DecisionRecord d;
      if (!parse_decision(line.text, &d, &error)) {
        ++stats.unreadable;
        return true;
      }
      if (filter.outcome && d.outcome != *filter.outcome) return true;
      if (!filter.principal.empty() && d.principal != filter.principal) return true;
      if (!filter.session.empty() && d.session != filter.session) return true;
      if (!filter.rule.empty()) {
        bool fired = false;
        for (const auto& f : d.rules) fired = fired || f.rule == filter.rule;
        if (!fired) return true;
      }
      if (!filter.target.empty()) {
        rapidjson::Document input;
        warden::json::parse_stored(d.proposal_json, &input);
        if (warden::json::string_member(input, "target") != filter.target) return true;
      }
      r.principal = d.principal;
      r.session = d.session;
      r.summary = proposal_summary(d.proposal_json);
      r.outcome = std::string(outcome_name(d.outcome));
      for (const auto& f : d.rules) r.rules.push_back((f.monitor ? "[monitor] " : "") + f.rule);
      r.masked = d.masked;
    } else if (kind == "approval") {
      bool unreadable = false;
      if (!approval_row(head.fields, filter, &r, &unreadable)) {
        if (unreadable) ++stats.unreadable;
        return true;
      }
    } else {
      r.summary = std::string(head.fields);
    }
    ++stats.matched;
    row(r);
    return !(filter.limit && stats.matched >= filter.limit);
  });
  return stats;
}

}  // namespace warden::audit
