// The decision record's FIELDS: a SAX pass re-serializes (and masks) the proposal, the rest is
// written member by member in the format's fixed order, each Decision member by the writer the
// reply shares (engine/decision_json.h), its strings masked.
#include "audit/record.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <unordered_set>

#include "bindings/json.h"
#include "bindings/secrets.h"
#include "bindings/text.h"
#include "engine/decision_json.h"

namespace warden::audit {
namespace {

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

using decision_json::Place;

// The JSON pointer of `place` in the record: /member, /array/index or /array/index/member
// (built only for a secret).
std::string pointer_to(const Place& place) {
  std::string p;
  if (!place.array.empty()) {
    p += '/';
    p += place.array;
    append_pointer_token(&p, std::to_string(place.index));
  }
  if (!place.member.empty()) append_pointer_token(&p, place.member);
  return p;
}

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// !holds_secret(s), with the strings found clean remembered by the thread across its records:
// a record often holds one string again (the decision's reason is a rule's; a rewrite's old
// value, the action and effects' targets repeat the input's), and rule names and reasons,
// effects' programs and classes, principals and sessions recur record after record.
// holds_secret depends on the string alone, so a remembered answer is its answer. Only clean
// strings are kept, never a secret; a short one costs less to judge than to look up, a long
// one is judged each time; the memo forgets all at once when it is full.
bool judged_clean(std::string_view s) {
  constexpr std::size_t kShortest = 12, kLongest = 4096, kMostBytes = 256 << 10;
  if (s.size() < kShortest || s.size() > kLongest) return !holds_secret(s);
  struct Memo {
    std::unordered_set<std::string, StringHash, std::equal_to<>> clean;
    std::size_t bytes = 0;
  };
  thread_local Memo memo;
  if (memo.clean.find(s) != memo.clean.end()) return true;
  if (holds_secret(s)) return false;
  if (memo.bytes + s.size() > kMostBytes) {
    memo.clean.clear();
    memo.bytes = 0;
  }
  memo.clean.emplace(s);
  memo.bytes += s.size();
  return true;
}

// The record's strings, JSON-escaped and masked, with their pointer, when they hold a secret.
class MaskedStrings final : public decision_json::Strings {
 public:
  MaskedStrings(const Masker* masker, std::vector<Mask>* masks) : masker_(masker), masks_(masks) {}
  void append(std::string& out, std::string_view s, const Place& place) const override {
    if (!must_mask(s)) {
      text::append_json_string(out, s);
      return;
    }
    std::string masked(s);
    masker_->mask_text(&masked, pointer_to(place), masks_);
    text::append_json_string(out, masked);
  }
  // Whether `s` is to be masked: there is a masker and s holds a secret.
  bool must_mask(std::string_view s) const { return masker_ && !judged_clean(s); }
  const Masker* masker() const { return masker_; }
  std::vector<Mask>* masks() const { return masks_; }

 private:
  const Masker* masker_;
  std::vector<Mask>* masks_;
};

// A SAX handler writing the parsed JSON back out compactly, masking strings and member names
// and keeping the JSON pointer of the value in hand (built only when a secret needs it).
class MaskingWriter {
 public:
  MaskingWriter(std::string& out, const MaskedStrings& strings, std::string base)
      : out_(out),
        strings_(strings),
        masker_(strings.masker()),
        base_(std::move(base)),
        masks_(strings.masks()) {
    levels_.push_back({});  // the root
  }

  bool Null() { return raw("null"); }
  bool Bool(bool b) { return raw(b ? "true" : "false"); }
  bool Int(int) { return false; }  // numbers arrive as RawNumber (kParseNumbersAsStringsFlag)
  bool Uint(unsigned) { return false; }
  bool Int64(std::int64_t) { return false; }
  bool Uint64(std::uint64_t) { return false; }
  bool Double(double) { return false; }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) { return raw(std::string_view(s, n)); }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    prefix();
    const std::string_view text(s, n);
    if (!strings_.must_mask(text)) {
      text::append_json_string(out_, text);
    } else {
      std::string copy(text);
      masker_->mask_text(&copy, pointer(), masks_);
      text::append_json_string(out_, copy);
    }
    return true;
  }
  bool StartObject() { return open('{', false); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    prefix();
    Level& level = levels_.back();
    level.key.assign(s, n);
    if (strings_.must_mask(level.key)) {
      // Masked first, so the pointer that names the member never holds the secret.
      const std::size_t first = masks_ ? masks_->size() : 0;
      masker_->mask_text(&level.key, "", masks_);
      if (masks_) {
        const std::string at = pointer();
        for (std::size_t i = first; i < masks_->size(); ++i) (*masks_)[i].field = at;
      }
    }
    text::append_json_string(out_, level.key);
    out_.push_back(':');
    after_key_ = true;
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return close('}'); }
  bool StartArray() { return open('[', true); }
  bool EndArray(rapidjson::SizeType) { return close(']'); }

 private:
  struct Level {
    bool array = false;
    bool first = true;
    std::size_t index = 0;  // arrays: the current element's index
    std::string key;        // objects: the current member's (masked) name
  };

  // The comma before a value or member name, and the array index of a value.
  void prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    Level& level = levels_.back();
    if (!level.first) {
      out_.push_back(',');
      if (level.array) ++level.index;
    }
    level.first = false;
  }
  bool raw(std::string_view text) {
    prefix();
    out_.append(text);
    return true;
  }
  bool open(char c, bool array) {
    prefix();
    out_.push_back(c);
    levels_.push_back({});
    levels_.back().array = array;
    return true;
  }
  bool close(char c) {
    levels_.pop_back();
    out_.push_back(c);
    return true;
  }
  std::string pointer() const {
    std::string p = base_;
    for (std::size_t i = 1; i < levels_.size(); ++i) {
      const Level& level = levels_[i];
      if (level.array) {
        append_pointer_token(&p, std::to_string(level.index));
      } else {
        append_pointer_token(&p, level.key);
      }
    }
    return p;
  }

  std::string& out_;
  const MaskedStrings& strings_;
  const Masker* masker_;
  std::string base_;
  std::vector<Mask>* masks_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

// Appends the JSON text `json`, the record's member `member`, re-serialized and masked; when it
// does not parse, its text as a JSON string (masked) instead.
void append_json_value(std::string& out, std::string_view json, const MaskedStrings& strings,
                       std::string_view member) {
  const std::size_t start = out.size();
  std::vector<Mask>& masks = *strings.masks();
  const std::size_t masks_start = masks.size();
  // SAX, for speed: each record re-serializes the proposal and the action. Read as the
  // daemon's own text (kStoredFlags: append_json_string writes invalid bytes as U+FFFD), any
  // depth (the engine read the proposal against the configured one), numbers kept as written.
  constexpr unsigned kFlags = json::kStoredFlags | rapidjson::kParseNumbersAsStringsFlag;
  MaskingWriter writer(out, strings, pointer_to(Place::of(member)));
  if (!json::read<kFlags>(json, writer, json::Limits::any_depth())) return;
  out.resize(start);
  masks.resize(masks_start);
  strings.append(out, json, Place::of(member));
}

void append_masks(std::string& out, const std::vector<Mask>& masks) {
  out += ",\"masks\":[";
  for (std::size_t i = 0; i < masks.size(); ++i) {
    const Mask& m = masks[i];
    if (i) out += ',';
    out += "{\"field\":";
    text::append_json_string(out, m.field);
    out += ",\"offset\":";
    append_int(out, static_cast<std::int64_t>(m.offset));
    out += ",\"length\":";
    append_int(out, static_cast<std::int64_t>(m.length));
    out += ",\"kind\":";
    text::append_json_string(out, m.kind);
    out += '}';
  }
  out += ']';
}

}  // namespace

std::string decision_fields(const DecisionInput& in, const Decision& d, const Masker* masker) {
  namespace dj = decision_json;
  std::vector<Mask> masks;
  // Every string of the record is masked, with its JSON pointer, when it holds a secret —
  // whether or not it came from the proposal (a rule may copy proposal text into any STRING
  // slot). Only "masks" (pointers already masked, kinds) is not.
  const MaskedStrings s(masker, &masks);
  std::string out;
  out.reserve(512 + in.proposal_json.size() * 2 + d.action_json.size() + d.reason.size() +
              d.rules.size() * 96 + d.effects.size() * 160);
  dj::decision_id(out, d, s);
  dj::rules_digest(out, d, s);
  dj::string(out, "principal", in.principal, s, Place::of("principal"));
  dj::name(out, "groups");
  out += '[';
  for (std::size_t i = 0; i < in.groups.size(); ++i) {
    if (i) out += ',';
    s.append(out, in.groups[i], Place::in("groups", i));
  }
  out += ']';
  dj::string(out, "session", in.session, s, Place::of("session"));
  dj::name(out, "input");
  append_json_value(out, in.proposal_json, s, "input");
  dj::outcome(out, d.outcome);
  dj::reason(out, d, s);
  dj::defaulted(out, d);
  dj::error_code(out, d, s);
  dj::rules(out, d, s, 0);
  dj::rewrites(out, d, s, dj::kRewriteValues);
  if (!d.allows.empty()) dj::allows(out, d, s, dj::kAllowReason);
  if (d.approval_set) dj::approval(out, d);
  // The action only when a rewrite changed the proposal: else "input" holds it.
  const bool applied =
      std::any_of(d.rewrites.begin(), d.rewrites.end(), [](const Rewrite& w) { return w.applied; });
  if (applied && !d.action_json.empty()) {
    dj::name(out, "action");
    append_json_value(out, d.action_json, s, "action");
  }
  dj::effects(out, d, s);
  dj::elapsed_us(out, d);
  append_masks(out, masks);
  return out;
}

std::string approval_fields(const ApprovalEvent& e, const Masker* masker) {
  std::vector<Mask> masks;
  std::string out;
  out.reserve(384 + e.action_json.size() + e.result_json.size() + e.note.size() + e.reason.size());
  const MaskedStrings strings(masker, &masks);
  auto str = [&](std::string_view s, std::string_view member) {
    strings.append(out, s, Place::of(member));
  };
  auto json_or_null = [&](std::string_view json, std::string_view member) {
    if (json.empty()) {
      out += "null";
    } else {
      append_json_value(out, json, strings, member);
    }
  };
  out += "\"event\":";
  str(e.event, "event");
  out += ",\"approval_id\":";
  str(e.approval_id, "approval_id");
  out += ",\"action_hash\":";
  str(e.action_hash, "action_hash");
  out += ",\"decision_id\":";
  str(e.decision_id, "decision_id");
  out += ",\"by\":";
  str(e.by, "by");
  out += ",\"note\":";
  str(e.note, "note");
  out += ",\"requester\":";
  str(e.requester, "requester");
  out += ",\"session\":";
  str(e.session, "session");
  out += ",\"agent\":";
  str(e.agent, "agent");
  out += ",\"origin\":";
  str(e.origin, "origin");
  out += ",\"action\":";
  json_or_null(e.action_json, "action");
  out += ",\"rules\":[";
  for (std::size_t i = 0; i < e.rules.size(); ++i) {
    if (i) out += ',';
    strings.append(out, e.rules[i], Place::in("rules", i));
  }
  out += "],\"reason\":";
  str(e.reason, "reason");
  out += ",\"approvers_needed\":";
  append_int(out, e.approvers_needed);
  out += ",\"votes\":";
  append_int(out, e.votes);
  out += ",\"expires_ms\":";
  append_int(out, e.expires_ms);
  out += ",\"result\":";
  json_or_null(e.result_json, "result");
  if (!e.grants_json.empty() && e.grants_json != "[]") {
    out += ",\"grants\":";
    append_json_value(out, e.grants_json, strings, "grants");
    out += ",\"digest\":";
    str(e.digest, "digest");
  }
  if (!e.requester_token_id.empty()) {
    out += ",\"requester_token_id\":";
    str(e.requester_token_id, "requester_token_id");
  }
  append_masks(out, masks);
  return out;
}

std::string start_fields(const StartInfo& s) {
  std::string out;
  out.reserve(256 + s.workspace_root.size() + s.home.size());
  out += "\"version\":";
  text::append_json_string(out, s.version);
  out += ",\"pid\":";
  append_int(out, s.pid);
  out += ",\"rules_digest\":";
  text::append_json_string(out, s.rules_digest);
  out += ",\"workspace_root\":";
  text::append_json_string(out, s.workspace_root);
  out += ",\"home\":";
  text::append_json_string(out, s.home);
  out += ",\"default_outcome\":";
  text::append_json_string(out, s.default_outcome);
  out += ",\"key_id\":";
  text::append_json_string(out, s.key_id);
  out += ",\"every_records\":";
  append_int(out, static_cast<std::int64_t>(s.every_records));
  out += ",\"every_seconds\":";
  append_int(out, static_cast<std::int64_t>(s.every_seconds));
  out += ",\"session\":{\"ttl_seconds\":";
  append_int(out, static_cast<std::int64_t>(s.session.ttl_seconds));
  out += ",\"max_entries\":";
  append_int(out, static_cast<std::int64_t>(s.session.max_entries));
  out += ",\"max_sessions\":";
  append_int(out, static_cast<std::int64_t>(s.session.max_sessions));
  out += ",\"max_bytes\":";
  append_int(out, static_cast<std::int64_t>(s.session.max_bytes));
  out += '}';
  return out;
}

std::string reload_fields(std::string_view rules_digest, std::string_view previous_digest,
                          std::string_view by) {
  std::string out;
  out += "\"rules_digest\":";
  text::append_json_string(out, rules_digest);
  out += ",\"previous_digest\":";
  text::append_json_string(out, previous_digest);
  out += ",\"by\":";
  text::append_json_string(out, by);
  return out;
}

}  // namespace warden::audit
