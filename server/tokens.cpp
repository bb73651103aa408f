#include "server/tokens.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "bindings/digest.h"
#include "bindings/text.h"

namespace warden::server {

namespace {

constexpr std::size_t kMaxTokenBytes = 4096;
constexpr std::size_t kMaxPrincipalBytes = 256;
constexpr std::size_t kMaxGroups = 32;
constexpr std::size_t kMaxGroupBytes = 64;

// "groups=a,b" → {a, b} sorted; false with *error set when malformed.
bool parse_groups(std::string_view word, std::vector<std::string>* groups, std::string* error) {
  constexpr std::string_view kPrefix = "groups=";
  if (word.substr(0, kPrefix.size()) != kPrefix) {
    *error = "unexpected '" + std::string(word) + "' (expected groups=NAME,NAME)";
    return false;
  }
  std::string_view list = word.substr(kPrefix.size());
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view name = list.substr(pos, comma - pos);
    if (!valid_group_name(name)) {
      *error =
          "group name '" + std::string(name) + "' must be 1-64 characters of A-Z a-z 0-9 . _ -";
      return false;
    }
    groups->emplace_back(name);
    pos = comma + 1;
  }
  std::sort(groups->begin(), groups->end());
  if (std::adjacent_find(groups->begin(), groups->end()) != groups->end()) {
    *error = "a group is named twice";
    return false;
  }
  if (groups->size() > kMaxGroups) {
    *error = "more than 32 groups";
    return false;
  }
  return true;
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

bool valid_group_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxGroupBytes) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

TokenHash hash_token(std::string_view token) { return digest::sha256(token); }

std::string token_hash_text(std::string_view token) {
  TokenHash hash = hash_token(token);
  return "sha256:" + text::hex(hash.data(), hash.size());
}

std::string token_id(const TokenHash& hash) {
  const std::string line_form = "sha256:" + text::hex(hash.data(), hash.size());
  const digest::Sha256 second = digest::sha256(line_form);
  return text::hex(second.data(), 16);
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
  std::map<std::string, std::pair<std::vector<std::string>, long>>
      groups_of;  // principal → groups, line
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
    if (words.size() != 3 && words.size() != 4) {
      fail(line_no, "expected `ROLE PRINCIPAL sha256:HEX [groups=NAME,NAME]`");
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
      } else if (ok && !text::unhex(digest.substr(7), entry.hash.data())) {
        fail(line_no, "token hash must be sha256: followed by 64 hex digits");
        ok = false;
      }
      if (words.size() == 4) {
        std::string error;
        if (!parse_groups(words[3], &entry.groups, &error)) {
          fail(line_no, error);
          ok = false;
        }
      }
      if (ok) {
        auto [it, fresh] = groups_of.try_emplace(entry.principal, entry.groups, line_no);
        if (!fresh && it->second.first != entry.groups) {
          fail(line_no, "principal '" + entry.principal + "' has other groups on line " +
                            std::to_string(it->second.second) +
                            " (every token of a principal names the same groups)");
          ok = false;
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
      if (ok) {
        entry.id = token_id(entry.hash);
        entries.push_back(std::move(entry));
      }
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

FileModePolicy TokenStore::private_file_modes() {
  FileModePolicy modes;
  modes.private_file = true;
  return modes;
}

bool TokenStore::load(const std::string& path, TokenStore* store, std::vector<std::string>* errors,
                      const FileModePolicy& modes) {
  auto problems = check_file_modes(path, modes);
  if (!problems.empty()) {
    for (const auto& p : problems) errors->push_back(p.to_text());
    *store = TokenStore{};
    return false;
  }
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
  return Identity{match->principal, match->role, match->groups, match->id};
}

std::optional<Identity> TokenStore::find_by_id(std::string_view id) const {
  if (id.empty()) return std::nullopt;
  for (const Entry& entry : entries_) {
    if (entry.id == id) return Identity{entry.principal, entry.role, entry.groups, entry.id};
  }
  return std::nullopt;
}

}  // namespace warden::server
