// The decision record's FIELDS: a SAX pass re-serializes (and masks) the proposal, the rest is
// written member by member in the format's fixed order.
#include "audit/record.h"

#include <charconv>

#include "bindings/json.h"
#include "bindings/secrets.h"
#include "bindings/text.h"
#include "engine/json_writer.h"

namespace warden::audit {
namespace {

// append_json_string's output, faster: runs of plain ASCII are copied whole; only escapes and
// non-ASCII bytes (checked as UTF-8, invalid bytes become U+FFFD) go one by one.
void append_json(std::string& out, std::string_view s) {
  out.push_back('"');
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = i;
    while (j < s.size()) {
      const auto c = static_cast<unsigned char>(s[j]);
      if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
      ++j;
    }
    out.append(s.data() + i, j - i);
    if (j == s.size()) break;
    const auto c = static_cast<unsigned char>(s[j]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default: {
          out += "\\u00";
          text::append_hex(out, c);
        }
      }
      i = j + 1;
      continue;
    }
    const std::size_t n = text::utf8_sequence_length(s, j);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      i = j + 1;
    } else {
      out.append(s.data() + j, n);
      i = j + n;
    }
  }
  out.push_back('"');
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Where a string sits in the record: base, base/index, or base/index/member (built only for
// a secret).
struct Where {
  std::string_view base;
  std::size_t index = 0;
  std::string_view member;
  bool indexed = false;
  std::string pointer() const {
    std::string p(base);
    if (indexed) append_pointer_token(&p, std::to_string(index));
    if (!member.empty()) append_pointer_token(&p, member);
    return p;
  }
};

// Appends `s` as a JSON string, masked (with its pointer) when it holds a secret.
void append_masked(std::string& out, std::string_view s, const Masker* masker, const Where& where,
                   std::vector<Mask>* masks) {
  if (!masker || !holds_secret(s)) {
    append_json(out, s);
    return;
  }
  std::string text(s);
  masker->mask_text(&text, where.pointer(), masks);
  append_json(out, text);
}

// A SAX handler writing the parsed JSON back out compactly, masking strings and member names
// and keeping the JSON pointer of the value in hand (built only when a secret needs it).
class MaskingWriter {
 public:
  MaskingWriter(std::string& out, const Masker* masker, std::string base, std::vector<Mask>* masks)
      : out_(out), masker_(masker), base_(std::move(base)), masks_(masks) {
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
    if (!masker_ || !holds_secret(text)) {
      append_json(out_, text);
    } else {
      std::string copy(text);
      masker_->mask_text(&copy, pointer(), masks_);
      append_json(out_, copy);
    }
    return true;
  }
  bool StartObject() { return open('{', false); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    prefix();
    Level& level = levels_.back();
    level.key.assign(s, n);
    if (masker_ && holds_secret(level.key)) {
      // Masked first, so the pointer that names the member never holds the secret.
      const std::size_t first = masks_ ? masks_->size() : 0;
      masker_->mask_text(&level.key, "", masks_);
      if (masks_) {
        const std::string at = pointer();
        for (std::size_t i = first; i < masks_->size(); ++i) (*masks_)[i].field = at;
      }
    }
    append_json(out_, level.key);
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
  const Masker* masker_;
  std::string base_;
  std::vector<Mask>* masks_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

// Appends the JSON text `json` re-serialized and masked; when it does not parse, its text as a
// JSON string (masked) instead.
void append_json_value(std::string& out, std::string_view json, const Masker* masker,
                       const std::string& pointer, std::vector<Mask>* masks) {
  const std::size_t start = out.size();
  const std::size_t masks_start = masks->size();
  // SAX, for speed: each record re-serializes the proposal and the action. Read as the
  // daemon's own text (kStoredFlags: append_json writes invalid bytes as U+FFFD), any depth
  // (the engine read the proposal against the configured one), numbers kept as written.
  constexpr unsigned kFlags = json::kStoredFlags | rapidjson::kParseNumbersAsStringsFlag;
  MaskingWriter writer(out, masker, pointer, masks);
  if (!json::read<kFlags>(json, writer, json::Limits::any_depth())) return;
  out.resize(start);
  masks->resize(masks_start);
  append_masked(out, json, masker, Where{pointer, 0, {}}, masks);
}

void append_masks(std::string& out, const std::vector<Mask>& masks) {
  out += ",\"masks\":[";
  for (std::size_t i = 0; i < masks.size(); ++i) {
    const Mask& m = masks[i];
    if (i) out += ',';
    out += "{\"field\":";
    append_json(out, m.field);
    out += ",\"offset\":";
    append_int(out, static_cast<std::int64_t>(m.offset));
    out += ",\"length\":";
    append_int(out, static_cast<std::int64_t>(m.length));
    out += ",\"kind\":";
    append_json(out, m.kind);
    out += '}';
  }
  out += ']';
}

const char* mode_name(bool monitor) { return monitor ? "\"monitor\"" : "\"enforce\""; }

}  // namespace

std::string decision_fields(const DecisionInput& in, const Decision& d, const Masker* masker) {
  std::vector<Mask> masks;
  std::string out;
  out.reserve(512 + in.proposal_json.size() * 2 + d.action_json.size() + d.reason.size() +
              d.rules.size() * 96 + d.effects.size() * 160);
  // Every string of the record goes through str(): masked, with its JSON pointer, when it
  // holds a secret — whether or not it came from the proposal (a rule may copy proposal
  // text into any STRING slot). Only "masks" (pointers already masked, kinds) is not.
  auto str = [&](std::string_view s, const Where& where) {
    append_masked(out, s, masker, where, &masks);
  };
  auto at = [](std::string_view base) { return Where{base, 0, {}, false}; };
  auto ptr = [](std::string_view base, std::size_t index, std::string_view member) {
    return Where{base, index, member, true};
  };

  out += "\"decision_id\":";
  str(d.decision_id, at("/decision_id"));
  out += ",\"rules_digest\":";
  str(d.rules_digest, at("/rules_digest"));
  out += ",\"principal\":";
  str(in.principal, at("/principal"));
  out += ",\"groups\":[";
  for (std::size_t i = 0; i < in.groups.size(); ++i) {
    if (i) out += ',';
    str(in.groups[i], ptr("/groups", i, {}));
  }
  out += "],\"session\":";
  str(in.session, at("/session"));
  out += ",\"input\":";
  append_json_value(out, in.proposal_json, masker, "/input", &masks);
  out += ",\"outcome\":\"";
  out += outcome_name(d.outcome);
  out += "\",\"reason\":";
  str(d.reason, at("/reason"));
  out += ",\"defaulted\":";
  out += d.defaulted ? "true" : "false";
  out += ",\"error_code\":";
  str(d.error_code, at("/error_code"));

  out += ",\"rules\":[";
  for (std::size_t i = 0; i < d.rules.size(); ++i) {
    const FiredRule& r = d.rules[i];
    if (i) out += ',';
    out += "{\"rule\":";
    str(r.rule, ptr("/rules", i, "rule"));
    out += ",\"outcome\":\"";
    out += outcome_name(r.outcome);
    out += "\",\"reason\":";
    str(r.reason, ptr("/rules", i, "reason"));
    out += ",\"mode\":";
    out += mode_name(r.monitor);
    out += '}';
  }

  bool applied = false;
  out += "],\"rewrites\":[";
  for (std::size_t i = 0; i < d.rewrites.size(); ++i) {
    const Rewrite& w = d.rewrites[i];
    applied = applied || w.applied;
    if (i) out += ',';
    out += "{\"rule\":";
    str(w.rule, ptr("/rewrites", i, "rule"));
    out += ",\"key\":";
    str(w.key, ptr("/rewrites", i, "key"));
    out += ",\"old\":";
    str(w.old_value, ptr("/rewrites", i, "old"));
    out += ",\"new\":";
    str(w.new_value, ptr("/rewrites", i, "new"));
    out += ",\"reason\":";
    str(w.reason, ptr("/rewrites", i, "reason"));
    out += ",\"mode\":";
    out += mode_name(w.monitor);
    out += ",\"applied\":";
    out += w.applied ? "true" : "false";
    out += '}';
  }
  out += ']';
  if (!d.allows.empty()) {
    out += ",\"allows\":[";
    for (std::size_t i = 0; i < d.allows.size(); ++i) {
      const Grant& g = d.allows[i];
      if (i) out += ',';
      out += "{\"rule\":";
      str(g.rule, ptr("/allows", i, "rule"));
      out += ",\"capability\":";
      str(g.capability, ptr("/allows", i, "capability"));
      out += ",\"reason\":";
      str(g.reason, ptr("/allows", i, "reason"));
      out += ",\"mode\":";
      out += mode_name(g.monitor);
      out += '}';
    }
    out += ']';
  }
  if (d.approval_set) {
    out += ",\"approval\":{\"expires_in_s\":";
    append_int(out, d.approval_expires_s);
    out += ",\"approvers\":";
    append_int(out, d.approvers_needed);
    out += '}';
  }
  if (applied && !d.action_json.empty()) {
    out += ",\"action\":";
    append_json_value(out, d.action_json, masker, "/action", &masks);
  }

  out += ",\"effects\":[";
  for (std::size_t i = 0; i < d.effects.size(); ++i) {
    const EffectRecord& e = d.effects[i];
    if (i) out += ',';
    out += "{\"kind\":";
    str(e.kind, ptr("/effects", i, "kind"));
    out += ",\"object\":";
    str(e.object, ptr("/effects", i, "object"));
    out += ",\"target\":";
    str(e.target, ptr("/effects", i, "target"));
    out += ",\"program\":";
    str(e.program, ptr("/effects", i, "program"));
    out += ",\"class\":";
    str(e.path_class, ptr("/effects", i, "class"));
    out += ",\"in_workspace\":";
    out += e.in_workspace ? "true" : "false";
    out += ",\"subcommand\":";
    str(e.subcommand, ptr("/effects", i, "subcommand"));
    out += ",\"via\":";
    str(e.via, ptr("/effects", i, "via"));
    out += ",\"dynamic\":";
    out += e.dynamic ? "true" : "false";
    out += '}';
  }
  out += "],\"elapsed_us\":";
  append_int(out, d.elapsed_us);

  append_masks(out, masks);
  return out;
}

std::string approval_fields(const ApprovalEvent& e, const Masker* masker) {
  std::vector<Mask> masks;
  std::string out;
  out.reserve(384 + e.action_json.size() + e.result_json.size() + e.note.size() + e.reason.size());
  auto str = [&](std::string_view s, std::string_view pointer) {
    append_masked(out, s, masker, Where{pointer, 0, {}, false}, &masks);
  };
  auto json_or_null = [&](std::string_view json, const char* pointer) {
    if (json.empty()) {
      out += "null";
    } else {
      append_json_value(out, json, masker, pointer, &masks);
    }
  };
  out += "\"event\":";
  str(e.event, "/event");
  out += ",\"approval_id\":";
  str(e.approval_id, "/approval_id");
  out += ",\"action_hash\":";
  str(e.action_hash, "/action_hash");
  out += ",\"decision_id\":";
  str(e.decision_id, "/decision_id");
  out += ",\"by\":";
  str(e.by, "/by");
  out += ",\"note\":";
  str(e.note, "/note");
  out += ",\"requester\":";
  str(e.requester, "/requester");
  out += ",\"session\":";
  str(e.session, "/session");
  out += ",\"agent\":";
  str(e.agent, "/agent");
  out += ",\"origin\":";
  str(e.origin, "/origin");
  out += ",\"action\":";
  json_or_null(e.action_json, "/action");
  out += ",\"rules\":[";
  for (std::size_t i = 0; i < e.rules.size(); ++i) {
    if (i) out += ',';
    append_masked(out, e.rules[i], masker, Where{"/rules", i, {}, true}, &masks);
  }
  out += "],\"reason\":";
  str(e.reason, "/reason");
  out += ",\"approvers_needed\":";
  append_int(out, e.approvers_needed);
  out += ",\"votes\":";
  append_int(out, e.votes);
  out += ",\"expires_ms\":";
  append_int(out, e.expires_ms);
  out += ",\"result\":";
  json_or_null(e.result_json, "/result");
  if (!e.grants_json.empty() && e.grants_json != "[]") {
    out += ",\"grants\":";
    append_json_value(out, e.grants_json, masker, "/grants", &masks);
    out += ",\"digest\":";
    str(e.digest, "/digest");
  }
  if (!e.requester_token_id.empty()) {
    out += ",\"requester_token_id\":";
    str(e.requester_token_id, "/requester_token_id");
  }
  append_masks(out, masks);
  return out;
}

std::string start_fields(const StartInfo& s) {
  std::string out;
  out.reserve(256 + s.workspace_root.size() + s.home.size());
  out += "\"version\":";
  append_json(out, s.version);
  out += ",\"pid\":";
  append_int(out, s.pid);
  out += ",\"rules_digest\":";
  append_json(out, s.rules_digest);
  out += ",\"workspace_root\":";
  append_json(out, s.workspace_root);
  out += ",\"home\":";
  append_json(out, s.home);
  out += ",\"default_outcome\":";
  append_json(out, s.default_outcome);
  out += ",\"key_id\":";
  append_json(out, s.key_id);
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
  append_json(out, rules_digest);
  out += ",\"previous_digest\":";
  append_json(out, previous_digest);
  out += ",\"by\":";
  append_json(out, by);
  return out;
}

}  // namespace warden::audit
