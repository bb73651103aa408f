// Ed25519 checkpoint signing with OpenSSL 3 EVP: key files (PEM), key ids, sign and verify.
#include "audit/signing.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "bindings/digest.h"
#include "bindings/text.h"

namespace warden::audit {

void PkeyFree::operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// The most recent OpenSSL error as text (and the queue cleared), or `fallback`.
std::string openssl_error(const char* fallback) {
  unsigned long code = ERR_get_error();
  std::string out = fallback;
  if (code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    out += " (";
    out += buf;
    out += ")";
  }
  ERR_clear_error();
  return out;
}

std::string signing_mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The whole file; with `private_key`, refuses a file others may read or that someone else owns.
bool read_key_file(const std::string& path, bool private_key, std::string* text,
                   std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = "cannot open the key file " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *error = "cannot stat the key file " + path + ": " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "the key file " + path + " is not a regular file";
    ::close(fd);
    return false;
  }
  if (private_key) {
    if ((st.st_mode & 077) != 0) {
      *error = "the signing key " + path + " has mode " + signing_mode_text(st.st_mode) +
               ": group or others may access it (chmod 600 " + path + ")";
      ::close(fd);
      return false;
    }
    if (st.st_uid != ::geteuid() && st.st_uid != 0) {
      *error = "the signing key " + path + " is owned by uid " + std::to_string(st.st_uid) +
               ", not by this user (uid " + std::to_string(::geteuid()) + ") or root";
      ::close(fd);
      return false;
    }
  }
  if (st.st_size > (1 << 20)) {
    *error = "the key file " + path + " is larger than 1 MiB: not a key";
    ::close(fd);
    return false;
  }
  text->clear();
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = "cannot read the key file " + path + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    text->append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return true;
}

PkeyPtr read_pem(std::string_view pem, bool want_private) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  EVP_PKEY* k = want_private ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)
                             : PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
  return PkeyPtr(k);
}

std::string pem_text(EVP_PKEY* key, bool private_key) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (!bio) throw std::bad_alloc();
  const int ok =
      private_key ? PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr)
                  : PEM_write_bio_PUBKEY(bio.get(), key);
  if (!ok) throw std::runtime_error(openssl_error("cannot write the key as PEM"));
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

// Writes `text` to a new file (O_EXCL) with exactly `mode`, fsynced.
bool write_new_file(const std::string& path, const std::string& text, mode_t mode,
                    std::string* error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) {
    *error = "cannot create " + path + ": " + std::strerror(errno) +
             (errno == EEXIST ? " (an existing key is never overwritten)" : "");
    return false;
  }
  bool ok = ::fchmod(fd, mode) == 0;  // exactly `mode`, whatever the umask
  std::size_t done = 0;
  while (ok && done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ok = false;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (ok && ::fsync(fd) != 0) ok = false;
  if (!ok) *error = "cannot write " + path + ": " + std::strerror(errno);
  if (::close(fd) != 0 && ok) {
    *error = "cannot write " + path + ": " + std::strerror(errno);
    ok = false;
  }
  if (!ok) ::unlink(path.c_str());
  return ok;
}

}  // namespace

std::string key_id_of(EVP_PKEY* key) {
  if (!key || EVP_PKEY_get_base_id(key) != EVP_PKEY_ED25519) return "";
  unsigned char raw[32];
  std::size_t n = sizeof raw;
  if (!EVP_PKEY_get_raw_public_key(key, raw, &n) || n != 32) {
    ERR_clear_error();
    return "";
  }
  return "ed25519:" +
         digest::sha256_hex(std::string_view(reinterpret_cast<const char*>(raw), n)).substr(0, 32);
}

SigningKey::SigningKey(PkeyPtr key) : key_(std::move(key)), key_id_(key_id_of(key_.get())) {
  if (key_id_.empty()) throw std::invalid_argument("not an Ed25519 key");
}

std::unique_ptr<SigningKey> SigningKey::from_pem(std::string_view pem, std::string* error) {
  PkeyPtr key = read_pem(pem, true);
  if (!key) {
    *error = openssl_error("not a PEM private key");
    return nullptr;
  }
  if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_ED25519) {
    *error = "the private key is not an Ed25519 key";
    return nullptr;
  }
  return std::make_unique<SigningKey>(std::move(key));
}

std::unique_ptr<SigningKey> SigningKey::load(const std::string& pem_path, std::string* error) {
  std::string text;
  if (!read_key_file(pem_path, true, &text, error)) return nullptr;
  auto key = from_pem(text, error);
  if (!key) *error = "the signing key " + pem_path + ": " + *error;
  return key;
}

std::string SigningKey::sign_hex(std::string_view message) const {
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  unsigned char sig[64];
  std::size_t n = sizeof sig;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1 ||
      EVP_DigestSign(ctx.get(), sig, &n, reinterpret_cast<const unsigned char*>(message.data()),
                     message.size()) != 1 ||
      n != 64) {
    throw std::runtime_error(openssl_error("Ed25519 signing failed"));
  }
  return text::hex(sig, n);
}

std::string SigningKey::public_pem() const { return pem_text(key_.get(), false); }
std::string SigningKey::private_pem() const { return pem_text(key_.get(), true); }

VerifyKey::VerifyKey(PkeyPtr key) : key_(std::move(key)), key_id_(key_id_of(key_.get())) {
  if (key_id_.empty()) throw std::invalid_argument("not an Ed25519 key");
}

std::unique_ptr<VerifyKey> VerifyKey::from_pem(std::string_view pem, std::string* error) {
  PkeyPtr key = read_pem(pem, false);
  if (!key) {
    ERR_clear_error();
    key = read_pem(pem, true);
  }
  if (!key) {
    *error = openssl_error("not a PEM public or private key");
    return nullptr;
  }
  if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_ED25519) {
    *error = "the key is not an Ed25519 key";
    return nullptr;
  }
  return std::make_unique<VerifyKey>(std::move(key));
}

std::unique_ptr<VerifyKey> VerifyKey::load(const std::string& pem_path, std::string* error) {
  std::string text;
  if (!read_key_file(pem_path, false, &text, error)) return nullptr;
  auto key = from_pem(text, error);
  if (!key) *error = "the verification key " + pem_path + ": " + *error;
  return key;
}

bool VerifyKey::verify_hex(std::string_view message, std::string_view sig_hex) const {
  if (sig_hex.size() != 128) return false;
  unsigned char sig[64];
  if (!text::unhex(sig_hex, sig)) return false;
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1) {
    ERR_clear_error();
    return false;
  }
  const int r =
      EVP_DigestVerify(ctx.get(), sig, sizeof sig,
                       reinterpret_cast<const unsigned char*>(message.data()), message.size());
  ERR_clear_error();
  return r == 1;
}

bool generate_key(const std::string& private_path, const std::string& public_path,
                  std::string* error) {
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  if (!key) {
    *error = openssl_error("cannot generate an Ed25519 key");
    return false;
  }
  std::string priv, pub;
  try {
    priv = pem_text(key.get(), true);
    pub = pem_text(key.get(), false);
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
  if (!write_new_file(private_path, priv, 0600, error)) return false;
  if (!write_new_file(public_path, pub, 0644, error)) {
    ::unlink(private_path.c_str());
    return false;
  }
  return true;
}

}  // namespace warden::audit
