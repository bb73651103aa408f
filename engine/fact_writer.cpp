#include "engine/fact_writer.h"

#include <cstring>
#include <stdexcept>

#include "engine/diagnostic.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

#include "engine/fact_writer_inline.h"  // after bindings/clips.h: CLIPS's types

namespace warden {

namespace {
constexpr std::size_t kPinnedMax = 4096;  // distinct short strings kept interned
constexpr std::size_t kPinnedLength = 64;
}  // namespace

int FactWriter::Template::operator[](const char* name) const {
  auto it = slots.find(std::string_view(name));
  if (it == slots.end()) throw std::runtime_error(std::string("slot missing: ") + name);
  return it->second;
}

FactWriter::Template FactWriter::bind_template(const char* name) {
  Template t;
  t.ptr = EnvFindDeftemplate(raw_, name);
  if (!t.ptr) throw std::runtime_error(std::string("template missing: ") + name);
  int i = 0;
  for (auto* slot = static_cast<struct deftemplate*>(t.ptr)->slotList; slot; slot = slot->next, ++i)
    t.slots[ValueToString(slot->slotName)] = i;
  return t;
}

FactWriter::FactWriter(void* env)
    : raw_(env),
      pattern_hit_(bind_template("pattern-hit")),
      pattern_hit_slots_{pattern_hit_["proposal"], pattern_hit_["key"], pattern_hit_["kind"],
                         pattern_hit_["pattern"]} {}

FactWriter::~FactWriter() {
  for (auto& [text, sym] : pinned_) DecrementSymbolCount(raw_, static_cast<SYMBOL_HN*>(sym));
}

void FactWriter::begin(const FactLimits& limits, const PatternIndex& patterns,
                       const std::string& id) {
  failed_ = false;
  limits_ = &limits;
  patterns_ = &patterns;
  asserted_ = 0;
  stop_ = {};
  // Every fact of the proposal names it: interned once, held until its facts hold it.
  id_symbol_ = symbol(id);
  IncrementSymbolCount(id_symbol_);
}

void FactWriter::end() {
  limits_ = nullptr;
  patterns_ = nullptr;
  DecrementSymbolCount(raw_, static_cast<SYMBOL_HN*>(id_symbol_));
  id_symbol_ = nullptr;
}

// Keys, programs, flags and other short strings repeat from one decision to the next:
// keeping them interned spares CLIPS re-creating and collecting them every time.
void* FactWriter::symbol(std::string_view s) {
  if (s.size() > kPinnedLength) return EnvAddSymbol(raw_, std::string(s).c_str());
  auto it = pinned_.find(s);
  if (it != pinned_.end()) return it->second;
  void* sym = EnvAddSymbol(raw_, std::string(s).c_str());
  if (pinned_.size() < kPinnedMax) {
    IncrementSymbolCount(sym);
    pinned_.emplace(std::string(s), sym);
  }
  return sym;
}

void* FactWriter::symbol(const char* s) {
  std::size_t n = std::strlen(s);
  if (n > kPinnedLength) return EnvAddSymbol(raw_, s);
  auto it = pinned_.find(std::string_view(s, n));
  if (it != pinned_.end()) return it->second;
  void* sym = EnvAddSymbol(raw_, s);
  if (pinned_.size() < kPinnedMax) {
    IncrementSymbolCount(sym);
    pinned_.emplace(std::string(s, n), sym);
  }
  return sym;
}

void* FactWriter::symbol(const std::string& s) {
  if (s.size() > kPinnedLength) return EnvAddSymbol(raw_, s.c_str());
  auto it = pinned_.find(std::string_view(s));
  if (it != pinned_.end()) return it->second;
  void* sym = EnvAddSymbol(raw_, s.c_str());
  if (pinned_.size() < kPinnedMax) {
    IncrementSymbolCount(sym);
    pinned_.emplace(s, sym);
  }
  return sym;
}

// What EnvPutFactSlot does for a multislot (a fresh multifield owned by the fact, never on
// CLIPS's garbage list), without the slot lookup by name and the intermediate copy.
void FactWriter::put_strings(void* f, int slot, const std::vector<std::string>& items) {
  auto* mf =
      static_cast<struct multifield*>(CreateMultifield2(raw_, static_cast<long>(items.size())));
  for (std::size_t i = 0; i < items.size(); ++i) {
    mf->theFields[i].type = STRING;
    mf->theFields[i].value = symbol(items[i]);
  }
  put(f, slot, MULTIFIELD, mf);
}

void FactWriter::stop(const char* code, std::string message) {
  if (stop_.code.empty()) stop_ = FactError{code, std::move(message)};
  failed_ = true;
}

bool FactWriter::past_deadline() const {
  return limits_ && limits_->deadline && std::chrono::steady_clock::now() > *limits_->deadline;
}

bool FactWriter::count_fact() {
  if (!failed_ && limits_ && ++asserted_ > limits_->max_facts)
    stop(code::kInputTooLarge, "the proposal needs more than " +
                                   std::to_string(limits_->max_facts) +
                                   " facts, the cap per proposal");
  return !failed_;
}

bool FactWriter::finish(void* f) {
  if (count_fact() && limits_ && (asserted_ & 15) == 0 && past_deadline())
    stop(code::kDeadline, "the decision deadline passed while asserting facts");
  if (failed_) {
    ReturnFact(raw_, static_cast<struct fact*>(f));
    return false;
  }
  EnvAssignFactSlotDefaults(raw_, f);
  EnvAssert(raw_, f);  // NULL for a duplicate fact, which is not an error
  return true;
}

bool FactWriter::assert_hit(std::string_view key, const PatternIndex::Hit& hit) {
  void* f = fact(pattern_hit_);
  if (!f) return false;
  put(f, pattern_hit_slots_.proposal, STRING, id_symbol_);
  put(f, pattern_hit_slots_.key, STRING, symbol(key));
  put(f, pattern_hit_slots_.kind, SYMBOL, symbol(hit.kind));
  put(f, pattern_hit_slots_.pattern, STRING, symbol(hit.pattern));
  return finish(f);
}

bool FactWriter::assert_derived_hits(std::string_view key, std::string_view value,
                                     const PatternIndex& patterns) {
  if (!patterns.uses(key)) return true;
  bool ok = true;
  if (!patterns.match_derived(key, value,
                              [&](const PatternIndex::Hit& hit) { ok &= assert_hit(key, hit); })) {
    stop(code::kFacts, "the pattern matcher failed on " + std::string(key));
    return false;
  }
  return ok;
}

}  // namespace warden
