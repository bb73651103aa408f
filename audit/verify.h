// Verification of an audit log (docs/AUDIT.md): the SHA-256 chain across all its files, the
// checkpoint signatures, and the checkpoint cadence, with every problem named by seq, file and
// line. Lines are hashed on several threads, then linked in order on one. verify_log is
// thread-safe (it reads the LogSet and the key only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "audit/reader.h"
#include "audit/signing.h"

namespace warden::audit {

enum class FindingKind {
  Edited,             // a record's bytes no longer match its hash, or the next record's prev, or
                      // its daemon id differs from the record before without a `start`
  Deleted,            // seqs are missing (named in the message)
  Reordered,          // seq not increasing
  Truncated,          // a file lost its tail: a rotated file without its rotation checkpoint, a log
                      // whose last file ends with one (the next file is not given), or, with
                      // require_closed, a log that ends at an interval checkpoint
  Torn,               // a last line without '\n' (an interrupted write)
  BadSignature,       // a checkpoint's signature is invalid or made with another key
  MissingCheckpoint,  // more records or more time between checkpoints than the signed bounds
                      // (or the verifier's max_unsigned where nothing signed gives one)
  Malformed,          // a line that is not a record of the v1 format
  Unreadable,         // a file that cannot be opened or read
};
// "edited", "deleted", "reordered", "truncated", "torn", "bad-signature", "missing-checkpoint",
// "malformed", "unreadable"
std::string_view finding_kind_name(FindingKind kind);

struct Finding {
  FindingKind kind = FindingKind::Malformed;
  std::uint64_t seq = 0;   // the record concerned (0 when the line has no readable seq)
  std::string file;        // path as given
  std::uint64_t line = 0;  // 1-based line in that file (0: the whole file)
  std::string message;
};

// The writer's default checkpoint_records (1000) plus slack.
inline constexpr std::uint64_t kDefaultMaxUnsigned = 1100;

struct VerifyOptions {
  const VerifyKey* key = nullptr;  // null: chain only, signatures are not checked
  // Further public keys a checkpoint may be signed with (the daemon's key was replaced): each
  // checkpoint is checked with the key its key_id names, among `key` and these.
  std::vector<const VerifyKey*> other_keys;
  unsigned threads = 0;              // hashing threads; 0 = the machine's cores
  bool require_signed_tail = false;  // records after the last checkpoint are a failure
  // The log may begin after seq 1 (older files removed) and may end with a rotation
  // checkpoint (the newer files are not given): a slice verified on purpose.
  bool partial = false;
  // The daemon has stopped: the log must end with its `stop` checkpoint. Records after the last
  // checkpoint are missing-checkpoint (as require_signed_tail); a log ending at an interval (or,
  // with partial, a rotation) checkpoint is truncated.
  bool require_closed = false;
  // The verifier's own ceiling on records after the last signed checkpoint when nothing signed
  // bounds them (no valid checkpoint yet, or its every_records is 0). Unsigned records never
  // raise or disable a bound; they may only lower it.
  std::uint64_t max_unsigned = kDefaultMaxUnsigned;
  std::size_t max_findings = 100;  // findings kept in the report (all are counted)
};

struct VerifyReport {
  bool ok = false;                   // everything verifies
  std::vector<Finding> findings;     // in log order, at most max_findings
  std::uint64_t findings_total = 0;  // all findings, including those not kept
  std::uint64_t files = 0, bytes = 0, records = 0, checkpoints = 0;
  std::uint64_t first_seq = 0, last_seq = 0;
  std::uint64_t signed_through = 0;  // the seq of the last checkpoint whose signature verified
  std::uint64_t unsigned_tail = 0;   // records after the last checkpoint
  std::string key_id;                // the key the checkpoints were checked with ("" chain only)
  bool chain_only = false;
  const Finding* first_bad() const { return findings.empty() ? nullptr : &findings.front(); }
};

// Verifies the files of one log (LogSet orders them by seq).
VerifyReport verify_log(const LogSet& set, const VerifyOptions& options);

// Opens `paths` (each expanded with its rotated siblings, see expand_log_paths) and verifies
// them; a file that cannot be opened is an `unreadable` finding.
VerifyReport verify_paths(const std::vector<std::string>& paths, const VerifyOptions& options);

// The report as one JSON object: {"ok","files","bytes","records","checkpoints","first_seq",
// "last_seq","signed_through","unsigned_tail","key_id","chain_only","findings_total",
// "first_bad":{…}|null,"findings":[{"kind","seq","file","line","message"}]}.
std::string report_to_json(const VerifyReport& report);

}  // namespace warden::audit
