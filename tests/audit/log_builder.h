// Builds audit logs line by line for the reader, verify and query tests: an implementation of
// the v1 line format (docs/AUDIT.md) of its own, with OpenSSL directly, so the tests check
// the format rather than the writer's reading of it. Tampering is then done on the text.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace warden::audit::testing {

inline std::string hex(const unsigned char* bytes, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(digits[bytes[i] >> 4]);
    out.push_back(digits[bytes[i] & 15]);
  }
  return out;
}

inline std::string sha256(const std::string& bytes) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), md);
  return hex(md, sizeof md);
}

inline const std::string kZeros(64, '0');

// An Ed25519 key pair, written as PEM files on request.
class TestKey {
 public:
  TestKey() {
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr);
    if (!ctx || EVP_PKEY_keygen_init(ctx) <= 0 || EVP_PKEY_keygen(ctx, &key_) <= 0)
      throw std::runtime_error("Ed25519 keygen failed");
    EVP_PKEY_CTX_free(ctx);
    unsigned char raw[32];
    std::size_t n = sizeof raw;
    EVP_PKEY_get_raw_public_key(key_, raw, &n);
    id_ = "ed25519:" + sha256(std::string(reinterpret_cast<char*>(raw), n)).substr(0, 32);
  }
  ~TestKey() { EVP_PKEY_free(key_); }
  TestKey(const TestKey&) = delete;
  TestKey& operator=(const TestKey&) = delete;

  const std::string& id() const { return id_; }
  std::string sign_hex(const std::string& message) const {
    EVP_MD_CTX* md = EVP_MD_CTX_new();
    unsigned char sig[64];
    std::size_t n = sizeof sig;
    if (EVP_DigestSignInit(md, nullptr, nullptr, nullptr, key_) <= 0 ||
        EVP_DigestSign(md, sig, &n, reinterpret_cast<const unsigned char*>(message.data()),
                       message.size()) <= 0)
      throw std::runtime_error("Ed25519 sign failed");
    EVP_MD_CTX_free(md);
    return hex(sig, n);
  }
  void write_public(const std::string& path) const {
    FILE* f = std::fopen(path.c_str(), "w");
    PEM_write_PUBKEY(f, key_);
    std::fclose(f);
  }
  void write_private(const std::string& path) const {
    FILE* f = std::fopen(path.c_str(), "w");
    PEM_write_PrivateKey(f, key_, nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(f);
  }

 private:
  EVP_PKEY* key_ = nullptr;
  std::string id_;
};

inline std::string format_us(std::int64_t us) {
  std::int64_t secs = us / 1000000, frac = us % 1000000;
  std::int64_t days = secs / 86400, rem = secs % 86400;
  // Civil date from days (Howard Hinnant's algorithm).
  days += 719468;
  std::int64_t era = days / 146097, doe = days - era * 146097;
  std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  std::int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1,
               m = mp + (mp < 10 ? 3 : -9);
  y += m <= 2;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%06lldZ", (long long)y,
                (long long)m, (long long)d, (long long)(rem / 3600), (long long)(rem / 60 % 60),
                (long long)(rem % 60), (long long)frac);
  return buf;
}

struct DecisionSpec {
  std::string principal = "alice";
  std::string session = "s1";
  std::string target = "shell";
  std::string command = "ls -la";
  std::string outcome = "approve";
  std::string rule = "shell-safe";
  std::string mask_field;  // non-empty: one mask on that pointer
};

// Appends records to an in-memory list of lines, chained; checkpoint() signs with `key`.
class LogBuilder {
 public:
  explicit LogBuilder(const TestKey& key, std::uint64_t every_records = 1000,
                      std::int64_t every_seconds = 60)
      : key_(key), every_records_(every_records), every_seconds_(every_seconds) {}

  std::int64_t time_us = 1795400000000000;  // 2026-11-22T…
  std::int64_t step_us = 1000;              // advance per record
  std::string daemon = "test-host";

  std::string record(const std::string& kind, const std::string& fields) {
    ++seq_;
    time_us += step_us;
    std::string sealed = "{\"seq\":" + std::to_string(seq_) + ",\"prev\":\"" + prev_ +
                         "\",\"kind\":\"" + kind + "\",\"time\":\"" + format_us(time_us) +
                         "\",\"daemon\":\"" + daemon + "\"";
    if (!fields.empty()) sealed += "," + fields;
    prev_ = sha256(sealed);
    lines.push_back(sealed + ",\"hash\":\"" + prev_ + "\"}\n");
    return lines.back();
  }

  void start() {
    record(
        "start",
        "\"version\":\"0.1.0\",\"pid\":42,\"rules_digest\":\"sha256:aa\",\"workspace_root\":\"/w\","
        "\"home\":\"/h\",\"default_outcome\":\"reject\",\"key_id\":\"" +
            key_.id() + "\",\"every_records\":" + std::to_string(every_records_) +
            ",\"every_seconds\":" + std::to_string(every_seconds_));
  }

  void decision(const DecisionSpec& d = {}) {
    std::string payload = d.target == "shell"  ? "{\"command\":\"" + d.command + "\"}"
                          : d.target == "http" ? "{\"url\":\"" + d.command + "\"}"
                                               : "{\"path\":\"" + d.command + "\"}";
    std::string action = d.target == "shell" ? "run" : d.target == "http" ? "get" : "write";
    std::string fields =
        "\"decision_id\":\"d" + std::to_string(seq_ + 1) +
        "\",\"rules_digest\":\"sha256:aa\",\"principal\":\"" + d.principal +
        "\",\"groups\":[\"dev\"],\"session\":\"" + d.session + "\",\"input\":{\"target\":\"" +
        d.target + "\",\"action\":\"" + action + "\",\"payload\":" + payload + "},\"outcome\":\"" +
        d.outcome + "\",\"reason\":\"because " + d.rule +
        "\",\"defaulted\":false,\"error_code\":\"\",\"rules\":[{\"rule\":\"" + d.rule +
        "\",\"outcome\":\"" + d.outcome + "\",\"reason\":\"because " + d.rule +
        "\",\"mode\":\"enforce\"}],\"rewrites\":[],\"effects\":[{\"kind\":\"exec\",\"object\":"
        "\"program\","
        "\"target\":\"ls\",\"program\":\"ls\",\"class\":\"none\",\"in_workspace\":false,"
        "\"subcommand\":\"\","
        "\"via\":\"argv\",\"dynamic\":false}],\"elapsed_us\":12,\"masks\":[" +
        (d.mask_field.empty() ? std::string()
                              : "{\"field\":\"" + d.mask_field +
                                    "\",\"offset\":0,\"length\":4,\"kind\":\"github-token\"}") +
        "]";
    record("decision", fields);
  }

  void checkpoint(const std::string& reason = "interval") {
    ++seq_;
    time_us += step_us;
    std::string sealed =
        "{\"seq\":" + std::to_string(seq_) + ",\"prev\":\"" + prev_ +
        "\",\"kind\":\"checkpoint\",\"time\":\"" + format_us(time_us) + "\",\"daemon\":\"" +
        daemon + "\",\"key_id\":\"" + key_.id() + "\",\"first_seq\":" + std::to_string(first_seq_) +
        ",\"last_seq\":" + std::to_string(seq_ - 1) +
        ",\"every_records\":" + std::to_string(every_records_) +
        ",\"every_seconds\":" + std::to_string(every_seconds_) + ",\"reason\":\"" + reason + "\"";
    sealed += ",\"sig\":\"" + key_.sign_hex(sealed) + "\"";
    prev_ = sha256(sealed);
    lines.push_back(sealed + ",\"hash\":\"" + prev_ + "\"}\n");
    first_seq_ = seq_ + 1;
  }

  void stop() {
    record("stop", "\"reason\":\"shutdown\"");
    checkpoint("stop");
  }
  // The old file's last line is a checkpoint (reason rotate); the new file starts with rotate.
  // Returns the index in `lines` where the new file begins.
  std::size_t rotate(const std::string& previous_file) {
    checkpoint("rotate");
    std::size_t at = lines.size();
    record("rotate", "\"previous_file\":\"" + previous_file + "\",\"reason\":\"size\"");
    return at;
  }

  std::string text(std::size_t from = 0, std::size_t to = std::string::npos) const {
    std::string out;
    for (std::size_t i = from; i < lines.size() && i < to; ++i) out += lines[i];
    return out;
  }
  std::uint64_t seq() const { return seq_; }

  std::vector<std::string> lines;

 private:
  const TestKey& key_;
  std::uint64_t every_records_;
  std::int64_t every_seconds_;
  std::uint64_t seq_ = 0;
  std::uint64_t first_seq_ = 1;
  std::string prev_ = kZeros;
};

}  // namespace warden::audit::testing
