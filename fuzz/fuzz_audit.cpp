// The audit log's readers on hostile lines: an auditor verifies, queries and replays files
// anyone with write access to the log directory may have edited. The envelope parser, the
// checkpoint signature splitter, the decision reader, the proposal summary and the time
// parsers must reject or read any bytes without crashing; a line the envelope parser
// accepts re-seals to itself (one line, one interpretation of its envelope), and a decision
// line replay's lean reader accepts reads the same through parse_decision (one record, one
// reading).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "audit/chain.h"
#include "audit/query.h"
#include "audit/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  std::string error;
  warden::audit::Head head;
  if (warden::audit::parse_head(line, &head, &error)) {
    if (warden::audit::hash_matches(head)) {
      // An accepted, self-consistent line is exactly what seal() writes for its envelope.
      std::int64_t time_us = 0;
      if (!warden::audit::parse_time(head.time, &time_us)) __builtin_trap();
      warden::audit::Envelope e{head.seq, std::string(head.prev), std::string(head.kind), time_us,
                                std::string(head.daemon)};
      std::string hash;
      std::string sealed = warden::audit::seal(e, head.fields, &hash);
      if (sealed != std::string(line) + "\n" || hash != head.hash) __builtin_trap();
    }
  }
  std::string_view signed_bytes, sig;
  (void)warden::audit::split_signature(line, &signed_bytes, &sig);
  std::uint64_t seq = 0;
  std::string_view kind;
  (void)warden::audit::peek_seq_kind(line, &seq, &kind);
  warden::audit::DecisionRecord record, lean;
  const bool parsed = warden::audit::parse_decision(line, &record, &error);
  if (parsed) (void)warden::audit::proposal_summary(record.proposal_json);
  if (warden::audit::read_decision_lean(line, &lean) && parsed) {
    if (lean.seq != record.seq || lean.time_us != record.time_us || lean.daemon != record.daemon ||
        lean.decision_id != record.decision_id || lean.rules_digest != record.rules_digest ||
        lean.principal != record.principal || lean.session != record.session ||
        lean.groups != record.groups || lean.outcome != record.outcome ||
        lean.error_code != record.error_code || lean.masked != record.masked)
      __builtin_trap();
    if (!lean.effects.empty() && lean.effects.size() != record.effects.size()) __builtin_trap();
  }
  (void)warden::audit::proposal_summary(line);
  std::int64_t t = 0;
  (void)warden::audit::parse_time(line, &t);
  (void)warden::audit::parse_time_arg(line, 1'800'000'000'000'000, &t, &error);
  return 0;
}
