// The audit log's line format (v1) and its SHA-256 chain (docs/AUDIT.md):
//
//   {"seq":S,"prev":"P","kind":"K","time":"T","daemon":"D",FIELDS,"hash":"H"}\n
//
// H = SHA-256 of the line's bytes before `,"hash":"` (the sealed prefix); P = the previous
// record's H (kGenesis for seq 1). Checkpoint lines end `,"sig":"<128 hex>","hash":"<64 hex>"}`,
// the Ed25519 signature covering the bytes before `,"sig":"`. Lines are built and read without a
// JSON parser: the envelope has one fixed shape and anything else is refused with its cause.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace warden::audit {

inline constexpr std::string_view kGenesis =
    "0000000000000000000000000000000000000000000000000000000000000000";

// True when `text` is exactly `length` lowercase hex digits.
bool is_lower_hex(std::string_view text, std::size_t length);

// UTC "YYYY-MM-DDTHH:MM:SS.ffffffZ" (always 6 fraction digits), microseconds since the epoch.
std::string format_time(std::int64_t time_us);
// The exact inverse of format_time: any other shape (missing digits, no Z, 31 February, a
// leap second) → false.
bool parse_time(std::string_view text, std::int64_t* time_us);

// daemon ids: [A-Za-z0-9._:-]{1,64}; kinds: [a-z][a-z_-]{0,31}.
bool valid_daemon_id(std::string_view id);
bool valid_kind(std::string_view kind);

struct Envelope {
  std::uint64_t seq = 0;
  std::string prev;  // 64 lowercase hex
  std::string kind;
  std::int64_t time_us = 0;
  std::string daemon;
};

// The whole line including '\n'. `fields` are the kind's members without surrounding commas
// (may be empty). The line's hash goes to *hash_out when not null.
std::string seal(const Envelope& e, std::string_view fields, std::string* hash_out);
// The same line appended to *out (no intermediate strings); the hash's 64 hex digits to
// hash_out when not null.
void seal_append(std::string* out, std::uint64_t seq, std::string_view prev, std::string_view kind,
                 std::int64_t time_us, std::string_view daemon, std::string_view fields,
                 char hash_out[64]);

// The envelope of one line, as views into it.
struct Head {
  std::uint64_t seq = 0;
  std::string_view prev, kind, time, daemon, hash;
  std::string_view sealed;  // the bytes the hash covers
  std::string_view fields;  // FIELDS (between the envelope's `,` and `,"hash"`), may be empty
};

// `line` without its '\n'. Checks the fixed shape only (not the hash): on failure *error says
// which part is off, e.g. `"prev" is not 64 lowercase hex digits`.
bool parse_head(std::string_view line, Head* head, std::string* error);
// SHA-256(head.sealed) == head.hash.
bool hash_matches(const Head& head);

// Checkpoint lines: the signed bytes (everything before `,"sig":"`) and the signature's 128
// hex digits; false when the line does not end with the `,"sig":"…","hash":"…"}` shape.
bool split_signature(std::string_view line, std::string_view* signed_bytes,
                     std::string_view* sig_hex);

}  // namespace warden::audit
