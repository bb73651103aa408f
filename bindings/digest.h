// SHA-256 of bytes held whole (OpenSSL 3 EVP underneath): the audit chain's line hashes,
// approval and token hashes, digests of commands and certificates. The algorithm is fetched
// once and each thread reuses one context: the audit log hashes every line it writes and
// reads. Thread-safe.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace warden::digest {

using Sha256 = std::array<unsigned char, 32>;

// SHA-256(bytes). Throws std::runtime_error when OpenSSL fails ("OpenSSL has no SHA256",
// "SHA-256 failed (OpenSSL)").
Sha256 sha256(std::string_view bytes);
// The same as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace warden::digest
