// The Ed25519 key that signs the audit log's checkpoints (OpenSSL 3 EVP), and the public key
// that verifies them. Keys are PEM files: private PKCS#8 (mode 0600), public SubjectPublicKeyInfo.
// key_id = "ed25519:" + the first 32 hex digits of SHA-256 of the raw 32-byte public key.
// Loaded keys are immutable: sign_hex/verify_hex are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

typedef struct evp_pkey_st EVP_PKEY;

namespace warden::audit {

struct PkeyFree {
  void operator()(EVP_PKEY* k) const;
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

class SigningKey {
 public:
  // Refuses a key file readable or writable by group or others (the mode is in the error), or
  // owned by someone other than this user or root, or that is not an Ed25519 private key.
  static std::unique_ptr<SigningKey> load(const std::string& pem_path, std::string* error);
  // From PEM text already read (tests, keygen); no file checks.
  static std::unique_ptr<SigningKey> from_pem(std::string_view pem, std::string* error);

  // 128 lowercase hex digits: the Ed25519 signature of `message`.
  std::string sign_hex(std::string_view message) const;
  const std::string& key_id() const { return key_id_; }
  std::string public_pem() const;
  std::string private_pem() const;

  explicit SigningKey(PkeyPtr key);

 private:
  PkeyPtr key_;
  std::string key_id_;
};

class VerifyKey {
 public:
  // A public PEM, or a private one (its public half is used).
  static std::unique_ptr<VerifyKey> load(const std::string& pem_path, std::string* error);
  static std::unique_ptr<VerifyKey> from_pem(std::string_view pem, std::string* error);

  // False for a malformed signature as for a wrong one.
  bool verify_hex(std::string_view message, std::string_view sig_hex) const;
  const std::string& key_id() const { return key_id_; }

  explicit VerifyKey(PkeyPtr key);

 private:
  PkeyPtr key_;
  std::string key_id_;
};

// "ed25519:<32 hex>" of an Ed25519 key (public or private); "" when it is not one.
std::string key_id_of(EVP_PKEY* key);

// Writes a new Ed25519 key: private PEM (PKCS#8, mode 0600, O_EXCL: never overwrites) and
// public PEM (0644, O_EXCL). On failure nothing half-written is left behind.
bool generate_key(const std::string& private_path, const std::string& public_path,
                  std::string* error);

}  // namespace warden::audit
