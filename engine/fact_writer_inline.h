// FactWriter's slot setters, inline: they fill a CLIPS fact's fields in place and run for
// every slot of every fact. For the files that fill facts, after bindings/clips.h.
#pragma once

#include "engine/fact_writer.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

namespace warden {

inline void* FactWriter::fact(const Template& tmpl) {
  void* f = EnvCreateFact(raw_, tmpl.ptr);
  if (!f) failed_ = true;
  return f;
}

// What EnvPutFactSlot does for a single-field slot, without looking the slot up by name.
inline void FactWriter::put(void* f, int slot, unsigned short type, void* value) {
  auto* theFact = static_cast<struct fact*>(f);
  theFact->theProposition.theFields[slot].type = type;
  theFact->theProposition.theFields[slot].value = value;
}

inline void FactWriter::put_string(void* f, int slot, const char* s) {
  put(f, slot, STRING, symbol(s));
}
inline void FactWriter::put_symbol(void* f, int slot, const char* s) {
  put(f, slot, SYMBOL, symbol(s));
}
inline void FactWriter::put_string(void* f, int slot, const std::string& s) {
  put(f, slot, STRING, symbol(s));
}
inline void FactWriter::put_symbol(void* f, int slot, const std::string& s) {
  put(f, slot, SYMBOL, symbol(s));
}

inline void FactWriter::put_integer(void* f, int slot, long long n) {
  put(f, slot, INTEGER, EnvAddLong(raw_, n));
}

}  // namespace warden
