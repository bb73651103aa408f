// Replay's decision cache (audit/replay.h): a decision's key — the SHA-256 of exactly the
// inputs that decide it, each length-prefixed —, the bytes of a proposal rules cannot see
// (left out of the key), and the caches the replay workers (replay_worker.h) share.
// KeyBuilder: one per worker. SharedCache: thread-safe. The rest: pure.
#pragma once

#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "audit/line_scan.h"
#include "engine/decision.h"
#include "engine/rule_inputs.h"

namespace warden::audit::replay {

using Key = std::array<unsigned char, 32>;
struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    std::size_t h;
    std::memcpy(&h, k.data(), sizeof h);
    return h;
  }
};

struct Cached {
  Outcome outcome = Outcome::Reject;
  bool defaulted = false;
  std::string reason, error_code;
  std::vector<FiredRule> rules;
};

class KeyBuilder {
 public:
  KeyBuilder() : ctx_(EVP_MD_CTX_new()) {}
  ~KeyBuilder() { EVP_MD_CTX_free(ctx_); }
  KeyBuilder(const KeyBuilder&) = delete;
  KeyBuilder& operator=(const KeyBuilder&) = delete;
  void begin() { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  // Length-prefixed, so no two sequences of fields hash the same bytes.
  void add(std::string_view s) {
    std::uint64_t n = s.size();
    EVP_DigestUpdate(ctx_, &n, sizeof n);
    EVP_DigestUpdate(ctx_, s.data(), s.size());
  }
  void add(std::int64_t v) { EVP_DigestUpdate(ctx_, &v, sizeof v); }
  Key finish() {
    Key k;
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_, k.data(), &n);
    return k;
  }

 private:
  EVP_MD_CTX* ctx_;
};
// ---- the parts of a proposal rules cannot see ------------------------------------------

// The byte ranges of the string values of context.session and context.agent (those asked
// for): values that reach rules only through the proposal fact's slots of the same names.
// The engine also inspects each of them as it reads the proposal (a NUL, an invalid escape
// refuses the input), so a value is left out of the key only when the engine accepts it:
// accepted(raw value, "session"/"agent") says so. Every accepted value then gives the same
// decision as any other (the checks are per value; its length counts only against the input
// size, which is keyed, and against nothing else once the proposal was read).
template <class Accepted>
void unseen_ranges(std::string_view j, bool session, bool agent, Accepted&& accepted,
                   std::vector<std::pair<std::size_t, std::size_t>>* out) {
  out->clear();
  if (!session && !agent) return;
  scan::for_each_member(j, 0, [&](std::string_view key, std::size_t begin, std::size_t) {
    if (key != "context" || j[begin] != '{') return;
    scan::for_each_member(j, begin, [&](std::string_view k, std::size_t b, std::size_t e) {
      if (j[b] != '"') return;
      if (((session && k == "session") || (agent && k == "agent")) &&
          accepted(j.substr(b, e - b), k))
        out->emplace_back(b, e);
    });
  });
}

// Whether the engine's own reader (engine/proposal_reader.h) accepts `raw`, a JSON string
// as it stands in the text, as the value of context.<name>: the minimal proposal holding it
// there reads without error. The reader's checks of a string value (NUL, Unicode escapes,
// encoding) look at that value alone, so the answer holds in any proposal.
bool engine_accepts_context_value(std::string_view raw, std::string_view name);

// What one proposal (text, principal, groups, and the clock's second when rules read it)
// decides with no history, from an engine whose fact cap leaves room for a full history,
// and which history patterns its effects activate.
struct Probe {
  bool usable = false;  // false: decide every record of this proposal in full, never cached
  RuleInputs::Reach reach;
  Cached result;
};

// The caches every worker shares: one mutex each, held only to look up or insert. Entries
// are never removed (node addresses stay valid); past kMaxEntries nothing more is kept.
class SharedCache {
 public:
  static constexpr std::size_t kMaxEntries = 2000000;
  const Probe* find_probe(const Key& k) {
    std::lock_guard lock(probes_mutex_);
    auto it = probes_.find(k);
    return it == probes_.end() ? nullptr : &it->second;
  }
  // The entry now under k (another worker's, if it got there first); null when full.
  const Probe* add_probe(const Key& k, Probe p) {
    std::lock_guard lock(probes_mutex_);
    if (probes_.size() >= kMaxEntries) return nullptr;
    return &probes_.emplace(k, std::move(p)).first->second;
  }
  const Cached* find(const Key& k) {
    std::lock_guard lock(decisions_mutex_);
    auto it = decisions_.find(k);
    return it == decisions_.end() ? nullptr : &it->second;
  }
  const Cached* add(const Key& k, Cached c) {
    std::lock_guard lock(decisions_mutex_);
    if (decisions_.size() >= kMaxEntries) return nullptr;
    return &decisions_.emplace(k, std::move(c)).first->second;
  }

 private:
  std::mutex probes_mutex_, decisions_mutex_;
  std::unordered_map<Key, Probe, KeyHash> probes_;
  std::unordered_map<Key, Cached, KeyHash> decisions_;
};

}  // namespace warden::audit::replay
