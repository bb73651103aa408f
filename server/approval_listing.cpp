// Listing approvals (approval_service.h): `pending` (a page, one by id, or a watch), and an
// approval as the protocol shows it: in full, listed within a size, with its session's
// history, its result event; the cursor of the next page.
#include "server/approval_service.h"

#include <rapidjson/document.h>

#include <climits>

#include "engine/session_memory.h"
#include "protocol/frame.h"
#include "protocol/json_text.h"
#include "server/approval_text.h"
#include "server/errors.h"
#include "server/submit.h"

namespace warden::server {

namespace {

using approvals::Approval;
using approvals::Status;

constexpr std::size_t kShownHistory = 20;  // history entries shown with a pending approval
// A listed action's preview, in bytes.
constexpr std::size_t kPreviewBytes = 512;

// At most `max` bytes of `text`, not cutting a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

// `text` when it is a JSON object, else null: the store is shared, and what the protocol
// embeds must be one JSON value whatever a row holds. Read with RapidJSON's default flags,
// not bindings/json.h: the text is written back, and full precision would write some numbers
// (123456789012345678901234567890.5) otherwise than replies always have.
void append_object_or_null(std::string& out, std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  if (d.HasParseError() || !d.IsObject()) {
    out += "null";
    return;
  }
  out += to_json_text(d);
}

// ,"result":{…}|null: what happened on approval, once there is something.
void append_result(std::string& out, const Approval& a) {
  out += ",\"result\":";
  if (a.result_json.empty()) {
    out += "null";
  } else {
    append_object_or_null(out, a.result_json);
  }
}

}  // namespace

std::optional<Reply> ApprovalService::pending(const Request& request, const Identity&,
                                              std::shared_ptr<const std::atomic<bool>> closed,
                                              ReplyFn later) {
  const rapidjson::Value& payload = request.payload();
  approvals::Filter filter;
  std::string error;
  std::int64_t min_age_s = 0;
  std::int64_t limit = kDefaultPageLimit;
  bool watch = false;
  std::string only_id, after;
  if (!string_field(payload, "id", approval_text::kMaxToken, &only_id, &error) ||
      !string_field(payload, "agent", approval_text::kMaxFilter, &filter.agent, &error) ||
      !string_field(payload, "session", approval_text::kMaxFilter, &filter.session, &error) ||
      !string_field(payload, "rule", approval_text::kMaxFilter, &filter.rule, &error) ||
      !int_field(payload, "min_age_s", 0, 366LL * 86400, &min_age_s, &error) ||
      !int_field(payload, "limit", 1, kMaxPageLimit, &limit, &error) ||
      !string_field(payload, "after", approval_text::kMaxFilter, &after, &error)) {
    return fail(request.id_json, "pending", err::kBadRequest, error);
  }
  if (const rapidjson::Value* w = find_member(payload, "watch")) {
    if (!w->IsBool()) {
      return fail(request.id_json, "pending", err::kBadRequest,
                  "\"payload.watch\" must be a boolean");
    }
    watch = w->GetBool();
  }
  if (!only_id.empty() && watch) {
    return fail(request.id_json, "pending", err::kBadRequest,
                "\"payload.id\" shows one approval; it cannot be watched");
  }
  if (!after.empty()) {
    filter.after = parse_cursor(after);
    if (!filter.after) {
      return fail(request.id_json, "pending", err::kBadRequest,
                  "\"payload.after\" must be the \"next\" of an earlier pending reply");
    }
  }
  filter.min_age_ms = min_age_s * 1000;
  // One more than the page: whether there is more.
  filter.limit = static_cast<std::size_t>(limit) + 1;
  auto send = std::make_shared<ReplyFn>(std::move(later));
  const bool queued = post([this, id = request.id_json, filter, limit, only_id, watch, send,
                            closed] {
    approvals::Filter f = filter;
    f.now_ms = approval_text::now_ms();
    std::vector<Approval> list;
    try {
      if (only_id.empty()) {
        list = store_->list(f);
      } else if (std::optional<Approval> one = store_->get(only_id)) {
        // One approval by its id, whatever its state, in full: what `warden approve ID` shows.
        std::string reply =
            ok_response(id, "pending", "\"approvals\":[" + shown_json(*one) + "],\"more\":false");
        if (reply.size() > kMaxEncodableFrame) {
          (*send)(fail(id, "pending", err::kResponseTooLarge,
                       "approval " + only_id + " does not fit in one frame"));
          return;
        }
        (*send)(Reply{std::move(reply)});
        return;
      } else {
        (*send)(fail(id, "pending", err::kApprovalNotFound, "no approval has the id " + only_id));
        return;
      }
    } catch (const std::exception& e) {
      (*send)(fail(id, "pending", err::kApprovalStore, e.what()));
      return;
    }
    // The page: at most `limit` approvals, within kListBudget bytes (each listed within
    // kMaxListedBytes, so every page holds at least one).
    bool more = list.size() > static_cast<std::size_t>(limit);
    std::string items = "[";
    std::size_t shown = 0;
    for (std::size_t i = 0; i < list.size() && i < static_cast<std::size_t>(limit); ++i) {
      std::string item = listed_json(list[i]);
      if (shown > 0 && items.size() + item.size() + 512 > kListBudget) {
        more = true;
        break;
      }
      if (shown++) items += ',';
      items += item;
    }
    items += ']';
    std::string paging = ",\"more\":";
    paging += more ? "true" : "false";
    if (more && shown > 0) paging += ",\"next\":" + json_string(cursor_text(list[shown - 1]));
    if (!watch) {
      (*send)(Reply{ok_response(id, "pending", "\"approvals\":" + items + paging)});
      return;
    }
    // Watching: the first page now, then every approval that arrives or closes (no response;
    // the request ends with the connection).
    (*send)(
        Reply{event_message(id, "{\"event\":\"approvals\",\"approvals\":" + items + paging + "}"),
              false, true});
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < shown; ++i) {
      announced_.emplace(list[i].id, Announced{list[i].status, Clock::now()});
    }
    watchers_.push_back(Watcher{closed, [send](Reply r) { (*send)(std::move(r)); }, id});
  });
  if (!queued)
    return fail(request.id_json, "pending", err::kShuttingDown, "the daemon is shutting down");
  return std::nullopt;
}

// ---- JSON ----

std::string ApprovalService::approval_json(const Approval& a) {
  std::string out = "{\"id\":";
  append_json_string(out, a.id);
  approval_text::member(out, "status", approvals::status_name(a.status));
  approval_text::member(out, "principal", a.principal);
  approval_text::member(out, "session", a.session);
  approval_text::member(out, "agent", a.agent);
  approval_text::member(out, "origin", a.origin);
  out += ",\"action\":";
  append_object_or_null(out, a.action_json);
  approval_text::member(out, "action_hash", a.action_hash);
  approval_text::member(out, "digest", a.digest);
  // What approving grants, written exactly as the digest covers it.
  out += ",\"grants\":" + approvals::grants_json(a.grants);
  out += ",\"rules\":";
  approval_text::append_strings(out, a.rules);
  approval_text::member(out, "reason", a.reason);
  approval_text::member(out, "decision_id", a.decision_id);
  approval_text::member(out, "daemon_id", a.daemon_id);
  approval_text::member(out, "requester_token_id", a.requester_token_id);
  out += ",\"created_ms\":" + std::to_string(a.created_ms);
  out += ",\"expires_ms\":" + std::to_string(a.expires_ms);
  out += ",\"approvers_needed\":" + std::to_string(a.approvers_needed);
  out += ",\"votes\":[";
  for (std::size_t i = 0; i < a.votes.size(); ++i) {
    if (i) out += ',';
    out += "{\"approver\":";
    append_json_string(out, a.votes[i].approver);
    approval_text::member(out, "note", a.votes[i].note);
    out += ",\"at_ms\":" + std::to_string(a.votes[i].at_ms) + "}";
  }
  out += ']';
  approval_text::member(out, "closed_by", a.closed_by);
  approval_text::member(out, "close_note", a.close_note);
  out += ",\"closed_ms\":" + std::to_string(a.closed_ms);
  append_result(out, a);
  out += '}';
  return out;
}

std::string ApprovalService::listed_json(const Approval& a) const {
  if (a.action_json.size() <= kListedActionBytes) {
    std::string whole = shown_json(a);
    if (whole.size() <= kMaxListedBytes) return whole;
  }
  // The action too large to list: a preview of its JSON text instead. The digest stays the
  // whole action's; `pending {"id"}` shows it in full.
  Approval cut = a;
  cut.action_json.clear();
  std::string out = shown_json(cut);
  std::string extra =
      ",\"truncated\":true,\"action_bytes\":" + std::to_string(a.action_json.size());
  extra += ",\"action_preview\":" + json_string(utf8_prefix(a.action_json, kPreviewBytes));
  out.insert(out.size() - 1, extra);
  if (out.size() <= kMaxListedBytes) return out;
  // Still too large (a huge reason, notes or history): only what names it.
  out = "{\"id\":";
  append_json_string(out, a.id);
  approval_text::member(out, "status", approvals::status_name(a.status));
  approval_text::member(out, "principal", utf8_prefix(a.principal, 256));
  approval_text::member(out, "action_hash", a.action_hash);
  out += ",\"created_ms\":" + std::to_string(a.created_ms);
  out += ",\"expires_ms\":" + std::to_string(a.expires_ms);
  out += ",\"approvers_needed\":" + std::to_string(a.approvers_needed);
  out += ",\"truncated\":true,\"action_bytes\":" + std::to_string(a.action_json.size()) + "}";
  return out;
}

std::string ApprovalService::cursor_text(const Approval& a) {
  return std::to_string(a.created_ms) + ":" + a.id;
}

std::optional<approvals::Cursor> ApprovalService::parse_cursor(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 19) return std::nullopt;
  approvals::Cursor c;
  for (char ch : text.substr(0, colon)) {
    if (ch < '0' || ch > '9') return std::nullopt;
    if (c.created_ms > (INT64_MAX - (ch - '0')) / 10) return std::nullopt;
    c.created_ms = c.created_ms * 10 + (ch - '0');
  }
  c.id = std::string(text.substr(colon + 1));
  if (!approval_text::is_approval_id(c.id)) return std::nullopt;
  return c;
}

std::string ApprovalService::shown_json(const Approval& a) const {
  std::string out = approval_json(a);
  // The requester session's recent history, as the session memory holds it (the effects of
  // its latest approved decisions; the fleet's, with [session] store = "postgres"): what the
  // agent did before asking.
  std::vector<HistoryEntry> history;
  if (context_.sessions && !a.session.empty()) {
    try {
      history = context_.sessions->snapshot(a.principal, a.session, approval_text::now_ms() / 1000);
    } catch (const SessionHistoryError& e) {
      // The approver is told the history is unknown, not shown an empty one.
      std::string note = ",\"history_error\":";
      append_json_string(note, e.what());
      out.insert(out.size() - 1, note);
    }
  }
  out.insert(out.size() - 1, ",\"history\":[");
  {
    const std::size_t from = history.size() > kShownHistory ? history.size() - kShownHistory : 0;
    std::string items;
    for (std::size_t i = from; i < history.size(); ++i) {
      const HistoryEntry& h = history[i];
      if (!items.empty()) items += ',';
      items += "{\"decision_id\":";
      append_json_string(items, h.decision_id);
      items += ",\"time\":" + std::to_string(h.time);
      approval_text::member(items, "kind", h.effect.kind);
      approval_text::member(items, "object", h.effect.object);
      approval_text::member(items, "target", h.effect.target);
      approval_text::member(items, "program", h.effect.program);
      items += '}';
    }
    out.insert(out.size() - 1, items);
  }
  out.insert(out.size() - 1, "]");
  return out;
}

std::string ApprovalService::result_event(const Approval& a) {
  std::string out = "{\"event\":\"approval-result\",\"approval_id\":";
  append_json_string(out, a.id);
  approval_text::member(out, "status", approvals::status_name(a.status));
  std::string by = a.closed_by;
  std::string note = a.close_note;
  if (by.empty() && !a.votes.empty()) {
    by = a.votes.back().approver;
    note = a.votes.back().note;
  }
  approval_text::member(out, "by", by);
  approval_text::member(out, "note", note);
  append_result(out, a);
  out += '}';
  return out;
}

}  // namespace warden::server
