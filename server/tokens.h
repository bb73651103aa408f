// Token authentication (SPEC §5). The token file holds one line per token,
// `ROLE PRINCIPAL sha256:HEX [groups=G1,G2]` (the SHA-256 of the token, never the token;
// the principal's groups, which rules see and clients cannot set), `#` comments.
// Loaded by the daemon at start and reload; immutable once loaded: share between threads.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/file_modes.h"
#include "server/roles.h"

namespace warden::server {

using TokenHash = std::array<unsigned char, 32>;

TokenHash hash_token(std::string_view token);
std::string token_hash_text(std::string_view token);  // "sha256:" + 64 lowercase hex digits
// A token's public id: the first 32 hex digits (lowercase) of the SHA-256 of its token-file hash
// as written there ("sha256:" + 64 lowercase hex digits). It names a token in records
// (which token asked for an approval) without being the token or its stored hash, and
// without revealing either; an operator computes it from a token file line with
// `printf %s sha256:HEX | sha256sum | cut -c1-32`.
std::string token_id(const TokenHash& hash);

// A group name a token line may carry: 1-64 characters of A-Z a-z 0-9 . _ -
bool valid_group_name(std::string_view name);

// A fresh token: "wdn_" + base64url of 32 bytes from OpenSSL RAND_bytes.
// Throws std::runtime_error if the random generator fails.
std::string generate_token();

class TokenStore {
 public:
  struct Entry {
    Role role = Role::Agent;
    std::string principal;
    TokenHash hash{};
    std::vector<std::string> groups;  // sorted
    std::string id;                   // token_id(hash)
  };

  // Parses token file text; each problem is "SOURCE:LINE: message" in *errors.
  // Returns false (and an empty store) if there was any error. Group names are 1-64 of
  // [A-Za-z0-9._-], at most 32 per line; every line of one principal names the same groups.
  static bool parse(std::string_view text, std::string_view source, TokenStore* store,
                    std::vector<std::string>* errors);
  // Reads the file after checking its modes (file_modes.h): it and every directory above it
  // must be owned by root or the daemon's user and not group/world-writable, and the file
  // must not be group/world-readable (mode 0600 or 0400). Any problem fails the load.
  static bool load(const std::string& path, TokenStore* store, std::vector<std::string>* errors,
                   const FileModePolicy& modes = private_file_modes());
  static FileModePolicy private_file_modes();

  // Hashes the token and compares it with every entry in constant time (no early exit).
  std::optional<Identity> authenticate(std::string_view token) const;
  // The same for a token already hashed (re-checking live sessions after a reload).
  std::optional<Identity> identify(const TokenHash& hash) const;
  // The identity of the token whose token_id() is `id`, nullopt when this set has none.
  std::optional<Identity> find_by_id(std::string_view id) const;

  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace warden::server
