// ProposalReader: parses and validates one proposal (SPEC §3) from JSON text, with limits,
// and lists its leaves. Strict: invalid UTF-8, NUL characters, oversize or over-deep input,
// and wrong shapes are input errors. Pure; one call per proposal; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string_view>
#include <vector>

#include "engine/diagnostic.h"
#include "engine/fact_codec.h"

namespace warden {

struct ReadLimits {
  std::size_t max_bytes = 1 << 20;
  unsigned max_depth = 64;
  std::size_t max_leaves = 10000;
};

// On success fills *doc (owns the values), *fields (id and depth are the caller's) and
// *leaves (pointers into *doc). `target`, `action` and `source` are lowercased in *doc too,
// so the action carried on is the one the rules saw.
std::optional<Diagnostic> read_proposal(std::string_view json, const ReadLimits& limits,
                                        rapidjson::Document* doc, ProposalFields* fields,
                                        std::vector<Leaf>* leaves);

}  // namespace warden
