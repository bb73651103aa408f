#include "server/tokens.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace warden::server {

namespace {

constexpr std::size_t kMaxTokenBytes = 4096;
constexpr std::size_t kMaxPrincipalBytes = 256;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

}  // namespace

TokenHash hash_token(std::string_view token) {
  TokenHash hash{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), hash.data());
  return hash;
}

std::string token_hash_text(std::string_view token) {
  static constexpr char kHex[] = "0123456789abcdef";
  TokenHash hash = hash_token(token);
  std::string out = "sha256:";
  for (unsigned char b : hash) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

std::string generate_token() {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    throw std::runtime_error("OpenSSL RAND_bytes failed");
  }
  // base64url without padding: 32 bytes -> 43 characters.
  std::string out = "wdn_";
  unsigned bits = 0;
  int nbits = 0;
  for (unsigned char b : bytes) {
    bits = (bits << 8) | b;
    nbits += 8;
    while (nbits >= 6) {
      nbits -= 6;
      out.push_back(kAlphabet[(bits >> nbits) & 0x3F]);
    }
  }
  if (nbits > 0) out.push_back(kAlphabet[(bits << (6 - nbits)) & 0x3F]);
  OPENSSL_cleanse(bytes, sizeof bytes);
  return out;
}

bool TokenStore::parse(std::string_view text, std::string_view source, TokenStore* store,
                       std::vector<std::string>* errors) {
  std::vector<Entry> entries;
  std::size_t before = errors->size();
  auto fail = [&](long line, const std::string& message) {
    errors->push_back(std::string(source) + ":" + std::to_string(line) + ": " + message);
  };
  long line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (std::size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    auto words = split_words(line);
    if (words.empty()) {
      if (end == text.size()) break;
      continue;
    }
    if (words.size() != 3) {
      fail(line_no, "expected `ROLE PRINCIPAL sha256:HEX`");
    } else {
      Entry entry;
      auto role = parse_role(words[0]);
      bool ok = true;
      if (!role) {
        fail(line_no,
             "unknown role '" + std::string(words[0]) + "' (expected agent, approver or admin)");
        ok = false;
      } else {
        entry.role = *role;
      }
      if (words[1].size() > kMaxPrincipalBytes) {
        fail(line_no, "principal is longer than 256 bytes");
        ok = false;
      }
      entry.principal = std::string(words[1]);
      std::string_view digest = words[2];
      if (digest.substr(0, 7) != "sha256:" || digest.size() != 7 + 64) {
        fail(line_no, "token hash must be sha256: followed by 64 hex digits");
        ok = false;
      } else {
        for (std::size_t i = 0; i < 32 && ok; ++i) {
          int hi = hex_value(digest[7 + 2 * i]);
          int lo = hex_value(digest[8 + 2 * i]);
          if (hi < 0 || lo < 0) {
            fail(line_no, "token hash must be sha256: followed by 64 hex digits");
            ok = false;
          } else {
            entry.hash[i] = static_cast<unsigned char>(hi << 4 | lo);
          }
        }
      }
      if (ok) {
        for (const Entry& other : entries) {
          if (other.hash == entry.hash) {
            fail(line_no, "the same token hash appears twice");
            ok = false;
            break;
          }
        }
      }
      if (ok) entries.push_back(std::move(entry));
    }
    if (end == text.size()) break;
  }
  if (errors->size() != before) {
    *store = TokenStore{};
    return false;
  }
  store->entries_ = std::move(entries);
  return true;
}

bool TokenStore::load(const std::string& path, TokenStore* store,
                      std::vector<std::string>* errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    errors->push_back(path + ": cannot read the token file");
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path, store, errors);
}

std::optional<Identity> TokenStore::authenticate(std::string_view token) const {
  if (token.empty() || token.size() > kMaxTokenBytes) return std::nullopt;
  return identify(hash_token(token));
}

std::optional<Identity> TokenStore::identify(const TokenHash& presented) const {
  const Entry* match = nullptr;
  for (const Entry& entry : entries_) {
    // Every entry is compared in full, whatever matched before.
    bool equal = CRYPTO_memcmp(presented.data(), entry.hash.data(), presented.size()) == 0;
    if (equal) match = &entry;
  }
  if (!match) return std::nullopt;
  return Identity{match->principal, match->role};
}

}  // namespace warden::server
