// Token authentication (SPEC §5). The token file holds one line per token,
// `ROLE PRINCIPAL sha256:HEX` (the SHA-256 of the token, never the token), `#` comments.
// A TokenStore is immutable once loaded: share it between threads freely.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/roles.h"

namespace warden::server {

using TokenHash = std::array<unsigned char, 32>;

TokenHash hash_token(std::string_view token);
std::string token_hash_text(std::string_view token);  // "sha256:" + 64 lowercase hex digits

// A fresh token: "wdn_" + base64url of 32 bytes from OpenSSL RAND_bytes.
// Throws std::runtime_error if the random generator fails.
std::string generate_token();

class TokenStore {
 public:
  struct Entry {
    Role role = Role::Agent;
    std::string principal;
    TokenHash hash{};
  };

  // Parses token file text; each problem is "SOURCE:LINE: message" in *errors.
  // Returns false (and an empty store) if there was any error.
  static bool parse(std::string_view text, std::string_view source, TokenStore* store,
                    std::vector<std::string>* errors);
  static bool load(const std::string& path, TokenStore* store, std::vector<std::string>* errors);

  // Hashes the token and compares it with every entry in constant time (no early exit).
  std::optional<Identity> authenticate(std::string_view token) const;
  // The same for a token already hashed (re-checking live sessions after a reload).
  std::optional<Identity> identify(const TokenHash& hash) const;

  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace warden::server
