#include "bindings/digest.h"

#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

#include "bindings/text.h"

namespace warden::digest {
namespace {

const EVP_MD* sha256_md() {
  // Fetched once: an implicit fetch per digest costs more than hashing a short line.
  static const EVP_MD* md = [] {
    EVP_MD* m = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (!m) throw std::runtime_error("OpenSSL has no SHA256");
    return m;
  }();
  return md;
}

struct CtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

}  // namespace

Sha256 sha256(std::string_view bytes) {
  thread_local std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
  Sha256 out;
  unsigned int n = 0;
  if (!ctx || !EVP_DigestInit_ex2(ctx.get(), sha256_md(), nullptr) ||
      !EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) ||
      !EVP_DigestFinal_ex(ctx.get(), out.data(), &n) || n != out.size()) {
    throw std::runtime_error("SHA-256 failed (OpenSSL)");
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  const Sha256 md = sha256(bytes);
  std::string out;
  out.reserve(2 * md.size());
  text::append_hex(out, md.data(), md.size());
  return out;
}

}  // namespace warden::digest
