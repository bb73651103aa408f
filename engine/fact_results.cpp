#include "engine/fact_results.h"

#include <cstring>

#include "engine/json_writer.h"
#include "engine/overlay.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

namespace warden {

FactResults::FactResults(FactWriter& writer) : raw_(writer.env()) {
  const FactWriter::Template decision = writer.bind_template("decision"),
                             rewrite = writer.bind_template("rewrite"),
                             allow = writer.bind_template("allow"),
                             hint = writer.bind_template("hint");
  decision_ = decision.ptr;
  rewrite_ = rewrite.ptr;
  allow_ = allow.ptr;
  hint_ = hint.ptr;
  approval_ = writer.bind_template("approval").ptr;
  result_slots_ = {decision["rule"], decision["reason"], decision["outcome"], decision["mode"],
                   rewrite["rule"],  rewrite["key"],     rewrite["value"],    rewrite["reason"],
                   rewrite["mode"],  allow["rule"],      allow["capability"], allow["reason"],
                   allow["mode"],    hint["rule"],       hint["text"]};
}

namespace {

std::string slot_text(void* env, void* f, const char* slot) {
  DATA_OBJECT v;
  if (!EnvGetFactSlot(env, f, slot, &v)) return {};
  if (GetType(v) == STRING || GetType(v) == SYMBOL) return DOToString(v);
  return {};
}

// The same for the slot at `slot` (its position in the template), as EnvGetFactSlot reads it.
std::string slot_text(void* f, int slot) {
  const struct field& v = static_cast<struct fact*>(f)->theProposition.theFields[slot];
  if (v.type == STRING || v.type == SYMBOL) return ValueToString(v.value);
  return {};
}

}  // namespace

void FactResults::read_results(std::vector<FiredRule>* rules, std::vector<Rewrite>* rewrites,
                               std::vector<Grant>* allows, std::vector<Hint>* hints,
                               std::string* error) {
  const auto& k = result_slots_;
  for (void* f = EnvGetNextFactInTemplate(raw_, decision_, nullptr); f;
       f = EnvGetNextFactInTemplate(raw_, decision_, f)) {
    FiredRule r;
    r.rule = slot_text(f, k.decision_rule);
    r.reason = slot_text(f, k.decision_reason);
    std::string outcome = slot_text(f, k.decision_outcome);
    std::string mode = slot_text(f, k.decision_mode);
    auto parsed = parse_outcome(outcome);
    if (!parsed && error->empty())
      *error = "rule '" + r.rule + "' asserted an invalid outcome '" + outcome + "'";
    if (mode != "enforce" && mode != "monitor" && error->empty())
      *error = "rule '" + r.rule + "' asserted an invalid mode '" + mode + "'";
    r.outcome = parsed.value_or(Outcome::Reject);
    r.monitor = mode == "monitor";
    rules->push_back(std::move(r));
  }
  for (void* f = EnvGetNextFactInTemplate(raw_, rewrite_, nullptr); f;
       f = EnvGetNextFactInTemplate(raw_, rewrite_, f)) {
    Rewrite w;
    w.rule = slot_text(f, k.rewrite_rule);
    w.key = slot_text(f, k.rewrite_key);
    w.new_value = slot_text(f, k.rewrite_value);
    w.reason = slot_text(f, k.rewrite_reason);
    std::string mode = slot_text(f, k.rewrite_mode);
    if (mode != "enforce" && mode != "monitor" && error->empty())
      *error = "rule '" + w.rule + "' asserted an invalid mode '" + mode + "'";
    w.monitor = mode == "monitor";
    rewrites->push_back(std::move(w));
  }
  for (void* f = EnvGetNextFactInTemplate(raw_, allow_, nullptr); f;
       f = EnvGetNextFactInTemplate(raw_, allow_, f)) {
    Grant g;
    g.rule = slot_text(f, k.allow_rule);
    g.capability = slot_text(f, k.allow_capability);
    g.reason = slot_text(f, k.allow_reason);
    std::string mode = slot_text(f, k.allow_mode);
    if (mode != "enforce" && mode != "monitor" && error->empty())
      *error = "rule '" + g.rule + "' asserted an invalid mode '" + mode + "'";
    g.monitor = mode == "monitor";
    allows->push_back(std::move(g));
  }
  for (void* f = EnvGetNextFactInTemplate(raw_, hint_, nullptr); f;
       f = EnvGetNextFactInTemplate(raw_, hint_, f)) {
    hints->push_back(Hint{slot_text(f, k.hint_rule), slot_text(f, k.hint_text)});
  }
}

void FactResults::read_approval(Decision* decision, std::string* error,
                                const RuleOverlay* overlay) {
  for (void* f = EnvGetNextFactInTemplate(raw_, approval_, nullptr); f;
       f = EnvGetNextFactInTemplate(raw_, approval_, f)) {
    const std::string rule = slot_text(raw_, f, "rule");
    if (overlay && !overlay->approval_counts(rule)) continue;  // a disabled rule sets no terms
    DATA_OBJECT expires, approvers;
    const bool have_expires =
        EnvGetFactSlot(raw_, f, "expires-in", &expires) && GetType(expires) == INTEGER;
    const bool have_approvers =
        EnvGetFactSlot(raw_, f, "approvers", &approvers) && GetType(approvers) == INTEGER;
    const long long expires_in = have_expires ? DOToLong(expires) : -1;
    const long long needed = have_approvers ? DOToLong(approvers) : 0;
    if (expires_in < 0) {
      if (error->empty())
        *error = "rule '" + rule + "' asserted an approval with expires-in " +
                 std::to_string(expires_in) + "; it must be a positive number of seconds";
      continue;
    }
    if (needed < 1 || needed > 2) {
      if (error->empty())
        *error = "rule '" + rule + "' asserted an approval with approvers " +
                 std::to_string(needed) + "; it must be 1 or 2";
      continue;
    }
    decision->approval_set = true;
    if (expires_in > 0 &&
        (decision->approval_expires_s == 0 || expires_in < decision->approval_expires_s))
      decision->approval_expires_s = expires_in;
    if (needed > decision->approvers_needed) decision->approvers_needed = static_cast<int>(needed);
  }
}

std::string FactResults::facts_json() {
  std::string out = "[";
  std::vector<char> buffer(64 * 1024);
  bool first = true;
  for (void* f = EnvGetNextFact(raw_, nullptr); f; f = EnvGetNextFact(raw_, f)) {
    void* tmpl = EnvFactDeftemplate(raw_, f);
    if (tmpl == decision_ || tmpl == rewrite_ || tmpl == allow_ || tmpl == hint_ ||
        tmpl == approval_)
      continue;
    const char* name = EnvGetDeftemplateName(raw_, tmpl);
    if (name && std::strcmp(name, "initial-fact") == 0) continue;
    EnvGetFactPPForm(raw_, buffer.data(), buffer.size(), f);
    if (!first) out += ',';
    first = false;
    append_json_string(out, buffer.data());
  }
  out += ']';
  return out;
}

}  // namespace warden
