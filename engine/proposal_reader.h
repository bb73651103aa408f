// ProposalReader: parses and validates one proposal (SPEC §3) from JSON text, with limits,
// and lists its leaves. Strict: invalid UTF-8, NUL characters, keys that could be read two
// ways (with a `.`, or differing from a sibling only by ASCII case), conflicting verbs,
// oversize or over-deep input and wrong shapes are input errors. Pure; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string>
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
// so the action carried on is the one the rules saw. A verb given only as `payload.action`
// is copied to `action` in *doc (one verb, in one place).
// `buffer` (optional) may receive a copy of the text that *doc's strings then point into:
// it must outlive *doc and not change while *doc is used.
std::optional<Diagnostic> read_proposal(std::string_view json, const ReadLimits& limits,
                                        rapidjson::Document* doc, ProposalFields* fields,
                                        std::vector<Leaf>* leaves, std::string* buffer = nullptr);

// Sets `context.principal` in *doc to `principal` (creating `context` when absent) and in
// *fields: the authenticated identity replaces whatever the proposal claimed. Lists
// *leaves again (their pointers into *doc may have moved).
void override_principal(const std::string& principal, rapidjson::Document* doc,
                        ProposalFields* fields, std::vector<Leaf>* leaves);

// The value at doc[k1][k2]… following object members only, or null. Fact derivation reads
// the document through this, never through joined key strings.
const rapidjson::Value* value_at(const rapidjson::Value& doc,
                                 std::initializer_list<std::string_view> path);

// The string at doc.payload.NAME, or null when absent or not a string.
const char* payload_string(const rapidjson::Value& doc, std::string_view name);

}  // namespace warden
