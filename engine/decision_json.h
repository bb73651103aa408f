// The members of a Decision's JSON forms, one writer each. The `decide` reply
// (decision_to_json), the audit record (audit/record.h decision_fields), the exec envelope
// (server/exec_wire.h) and the pipeline's events (pipeline/events.h) each choose which members
// they write and in which order; every member is written here, so its name, its escaping and
// its number format are decided once. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/decision.h"

namespace warden::decision_json {

// Where a string value sits in its document: the member `member` of the document
// (/member), of the element `index` of the array `array` (/array/index/member), or that
// element itself when `member` is empty (/array/index). The audit record names a masked
// secret by it.
struct Place {
  std::string_view array;
  std::size_t index = 0;
  std::string_view member;

  static Place of(std::string_view member) { return {{}, 0, member}; }
  static Place in(std::string_view array, std::size_t index, std::string_view member = {}) {
    return {array, index, member};
  }
};

// How a document writes its string values: JSON-escaped (text::append_json_string), or — the
// audit record — masked for secrets first, each mask noted with the value's place.
class Strings {
 public:
  virtual void append(std::string& out, std::string_view value, const Place& place) const;

 protected:
  ~Strings() = default;
};
// JSON-escaped, nothing masked: the strings of the reply, the envelope and the events.
const Strings& plain_strings();

// `"name":`, after a comma unless it opens its object (`out` is empty or ends with '{').
void name(std::string& out, std::string_view name);
// `"name":` and a string, an integer or a boolean.
void string(std::string& out, std::string_view name, std::string_view value, const Strings& s,
            const Place& place);
void number(std::string& out, std::string_view name, std::int64_t value);
void flag(std::string& out, std::string_view name, bool value);

// The members of a Decision, each as `"name":value`.
void decision_id(std::string& out, const Decision& d, const Strings& s);
void outcome(std::string& out, Outcome outcome);  // "outcome":"approval-required"
void reason(std::string& out, const Decision& d, const Strings& s);
void rules_digest(std::string& out, const Decision& d, const Strings& s);
void elapsed_us(std::string& out, const Decision& d);
void defaulted(std::string& out, const Decision& d);
// The error code a failed-closed decision carries: "error_code", or what `member` names (the
// reply's is "error").
void error_code(std::string& out, const Decision& d, const Strings& s,
                std::string_view member = "error_code");
// "action": the proposal as approved, as the engine wrote it; `when_empty` when it has none.
void action(std::string& out, const Decision& d, std::string_view when_empty);
// "approval":{"expires_in_s":N,"approvers":N}: the approval terms the rules set.
void approval(std::string& out, const Decision& d);
// "facts": the derived facts (explain), [] when none.
void facts(std::string& out, const Decision& d);

// The members that rules, rewrites and allows carry only in some documents.
enum Extras : unsigned {
  kOverlay = 1,        // rules, rewrites, allows: what a rule overlay changed (the reply)
  kRewriteValues = 2,  // rewrites: "old" and "new" (the audit record)
  kAllowReason = 4,    // allows: "reason" (not the envelope)
};
// "rules":[{"rule","outcome","reason","mode"[,"overlay":{"at",("disabled"|"was")[,"was_reason"]}]}…]
void rules(std::string& out, const Decision& d, const Strings& s, unsigned extras);
// "rewrites":[{"rule","key"[,"old","new"],"reason","mode","applied"[,"overlay"]}…]
void rewrites(std::string& out, const Decision& d, const Strings& s, unsigned extras);
// "allows":[{"rule","capability"[,"reason"],"mode"[,"overlay"]}…]
void allows(std::string& out, const Decision& d, const Strings& s, unsigned extras);
// "hints":[{"rule","text"}…]
void hints(std::string& out, const Decision& d, const Strings& s);
// "effects":[{"kind","object","target","program","class","in_workspace","subcommand","via",
// "dynamic"}…]
void effects(std::string& out, const Decision& d, const Strings& s);

// An effect's members in their JSON order, each as f(name, member) (a std::string, or a bool
// for "in_workspace" and "dynamic"): the one list its writer above and its readers
// (server/exec_wire.h, audit/reader.h) walk. Stops at the first f that returns false; true
// when none did.
template <class Effect, class F>
bool each_effect_member(Effect& e, F&& f) {
  return f("kind", e.kind) && f("object", e.object) && f("target", e.target) &&
         f("program", e.program) && f("class", e.path_class) && f("in_workspace", e.in_workspace) &&
         f("subcommand", e.subcommand) && f("via", e.via) && f("dynamic", e.dynamic);
}

}  // namespace warden::decision_json
