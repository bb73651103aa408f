// A Decision's members as JSON (engine/decision_json.h).
#include "engine/decision_json.h"

#include <charconv>
#include <type_traits>

#include "bindings/text.h"

namespace warden::decision_json {
namespace {

void mode(std::string& out, bool monitor) {
  name(out, "mode");
  out += monitor ? "\"monitor\"" : "\"enforce\"";
}

void outcome_value(std::string& out, Outcome outcome) {
  out += '"';
  out += outcome_name(outcome);  // plain ASCII: nothing to escape
  out += '"';
}

// The '[' of an array member and the ',' or '{' before each of its objects.
void open_array(std::string& out, std::string_view array) {
  name(out, array);
  out += '[';
}
void open_element(std::string& out, std::size_t index) { out += index ? ",{" : "{"; }

class PlainStrings final : public Strings {};

}  // namespace

void Strings::append(std::string& out, std::string_view value, const Place&) const {
  text::append_json_string(out, value);
}

const Strings& plain_strings() {
  static const PlainStrings plain{};
  return plain;
}

void name(std::string& out, std::string_view name) {
  if (!out.empty() && out.back() != '{') out += ',';
  out += '"';
  out += name;  // the format's own names: plain ASCII
  out += "\":";
}

void string(std::string& out, std::string_view member, std::string_view value, const Strings& s,
            const Place& place) {
  name(out, member);
  s.append(out, value, place);
}

void number(std::string& out, std::string_view member, std::int64_t value) {
  name(out, member);
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, r.ptr);
}

void flag(std::string& out, std::string_view member, bool value) {
  name(out, member);
  out += value ? "true" : "false";
}

void decision_id(std::string& out, const Decision& d, const Strings& s) {
  string(out, "decision_id", d.decision_id, s, Place::of("decision_id"));
}

void outcome(std::string& out, Outcome outcome) {
  name(out, "outcome");
  outcome_value(out, outcome);
}

void reason(std::string& out, const Decision& d, const Strings& s) {
  string(out, "reason", d.reason, s, Place::of("reason"));
}

void rules_digest(std::string& out, const Decision& d, const Strings& s) {
  string(out, "rules_digest", d.rules_digest, s, Place::of("rules_digest"));
}

void elapsed_us(std::string& out, const Decision& d) { number(out, "elapsed_us", d.elapsed_us); }

void defaulted(std::string& out, const Decision& d) { flag(out, "defaulted", d.defaulted); }

void error_code(std::string& out, const Decision& d, const Strings& s, std::string_view member) {
  string(out, member, d.error_code, s, Place::of(member));
}

void action(std::string& out, const Decision& d, std::string_view when_empty) {
  name(out, "action");
  out += d.action_json.empty() ? when_empty : std::string_view(d.action_json);
}

void approval(std::string& out, const Decision& d) {
  name(out, "approval");
  out += '{';
  number(out, "expires_in_s", d.approval_expires_s);
  number(out, "approvers", d.approvers_needed);
  out += '}';
}

void facts(std::string& out, const Decision& d) {
  name(out, "facts");
  out += d.facts_json.empty() ? std::string_view("[]") : std::string_view(d.facts_json);
}

void rules(std::string& out, const Decision& d, const Strings& s, unsigned extras) {
  open_array(out, "rules");
  for (std::size_t i = 0; i < d.rules.size(); ++i) {
    const FiredRule& r = d.rules[i];
    open_element(out, i);
    string(out, "rule", r.rule, s, Place::in("rules", i, "rule"));
    outcome(out, r.outcome);
    string(out, "reason", r.reason, s, Place::in("rules", i, "reason"));
    mode(out, r.monitor);
    if ((extras & kOverlay) && !r.overlay.empty()) {
      // What the rule asserted before the overlay entry at "at" changed it.
      const Place place = Place::in("rules", i, "overlay");
      name(out, "overlay");
      out += '{';
      string(out, "at", r.overlay, s, place);
      if (r.disabled) {
        flag(out, "disabled", true);
      } else {
        name(out, "was");
        outcome_value(out, r.asserted);
      }
      if (r.asserted_reason) string(out, "was_reason", *r.asserted_reason, s, place);
      out += '}';
    }
    out += '}';
  }
  out += ']';
}

void rewrites(std::string& out, const Decision& d, const Strings& s, unsigned extras) {
  open_array(out, "rewrites");
  for (std::size_t i = 0; i < d.rewrites.size(); ++i) {
    const Rewrite& w = d.rewrites[i];
    open_element(out, i);
    string(out, "rule", w.rule, s, Place::in("rewrites", i, "rule"));
    string(out, "key", w.key, s, Place::in("rewrites", i, "key"));
    if (extras & kRewriteValues) {
      string(out, "old", w.old_value, s, Place::in("rewrites", i, "old"));
      string(out, "new", w.new_value, s, Place::in("rewrites", i, "new"));
    }
    string(out, "reason", w.reason, s, Place::in("rewrites", i, "reason"));
    mode(out, w.monitor);
    flag(out, "applied", w.applied);
    if ((extras & kOverlay) && !w.overlay.empty()) {
      string(out, "overlay", w.overlay, s, Place::in("rewrites", i, "overlay"));
    }
    out += '}';
  }
  out += ']';
}

void allows(std::string& out, const Decision& d, const Strings& s, unsigned extras) {
  open_array(out, "allows");
  for (std::size_t i = 0; i < d.allows.size(); ++i) {
    const Grant& g = d.allows[i];
    open_element(out, i);
    string(out, "rule", g.rule, s, Place::in("allows", i, "rule"));
    string(out, "capability", g.capability, s, Place::in("allows", i, "capability"));
    if (extras & kAllowReason) string(out, "reason", g.reason, s, Place::in("allows", i, "reason"));
    mode(out, g.monitor);
    if ((extras & kOverlay) && !g.overlay.empty()) {
      string(out, "overlay", g.overlay, s, Place::in("allows", i, "overlay"));
    }
    out += '}';
  }
  out += ']';
}

void hints(std::string& out, const Decision& d, const Strings& s) {
  open_array(out, "hints");
  for (std::size_t i = 0; i < d.hints.size(); ++i) {
    open_element(out, i);
    string(out, "rule", d.hints[i].rule, s, Place::in("hints", i, "rule"));
    string(out, "text", d.hints[i].text, s, Place::in("hints", i, "text"));
    out += '}';
  }
  out += ']';
}

void effects(std::string& out, const Decision& d, const Strings& s) {
  open_array(out, "effects");
  for (std::size_t i = 0; i < d.effects.size(); ++i) {
    const EffectRecord& e = d.effects[i];
    open_element(out, i);
    each_effect_member(e, [&](std::string_view member, const auto& value) {
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, bool>)
        flag(out, member, value);
      else
        string(out, member, value, s, Place::in("effects", i, member));
      return true;
    });
    out += '}';
  }
  out += ']';
}

}  // namespace warden::decision_json
