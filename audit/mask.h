// Format-preserving masking of secrets in audit records, with warden::secrets::find (the
// detector the rules use). A masked secret keeps its length, its kind's known prefix (ghp_,
// AKIA, sk-ant-, xoxb-, eyJ, the -----BEGIN/END … PRIVATE KEY----- lines) and every
// punctuation byte; every other letter or digit becomes one of the same class drawn from
// HMAC-SHA256(mask key, secret). So the same secret always masks the same way (records can be
// correlated), the detector still finds a secret of the same kind at the same place (replay
// decides as the daemon did), and the secret cannot be recovered without breaking HMAC.
// Masker is immutable after construction: thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bindings/secrets.h"

namespace warden::audit {

// Every secret the masker masks in `text`, by offset: secrets::find's findings, and the secret
// parts of the formats the shipped rules find besides (secrets-other-format-p in
// rules/secrets_outbound.clp): the password of a URL's userinfo (`scheme://user:PASS@host`,
// kind "url-password"), Stripe sk_/rk_live_ keys, GitLab glpat-, npm_, PyPI pypi-AgE, Hugging
// Face hf_, DigitalOcean dop_v1_, SendGrid SG. and Google AIza keys (kind "other-format";
// the part after the format's prefix). Findings may overlap.
// (bindings/secrets should own the second detector so rules and masker share one; until it
// does, audit/mask.cpp implements the rule's regex by hand and the mask tests check them
// against each other.)
std::vector<secrets::Finding> find_secrets(std::string_view text);
// !find_secrets(text).empty(), cheaper.
bool holds_secret(std::string_view text);

// One masked secret: where (a JSON pointer into the record, e.g. /input/payload/command),
// which bytes of that string (byte offset and length, UTF-8), and the detector's kind.
struct Mask {
  std::string field;
  std::size_t offset = 0, length = 0;
  std::string kind;
};

class Masker {
 public:
  // Reads the 32-byte key, or creates it (32 random bytes, mode 0600, O_EXCL) when the file
  // does not exist. Refuses a key file group or others may access, or of another size.
  static std::unique_ptr<Masker> load_or_create(const std::string& key_path, std::string* error);
  explicit Masker(std::string key);

  // Replaces each secret (find_secrets) in *text in place (same length) and appends one Mask
  // per finding.
  void mask_text(std::string* text, std::string_view field_pointer, std::vector<Mask>* masks) const;
  // The masked form of one secret (`kind` as the detector named it): what mask_text puts in
  // its place.
  std::string mask_secret(std::string_view secret, std::string_view kind) const;
  // Every string (and member name) in a RapidJSON value, pointers built from `pointer`.
  void mask_value(rapidjson::Value& value, rapidjson::Document::AllocatorType& a,
                  const std::string& pointer, std::vector<Mask>* masks) const;

 private:
  std::string key_;
};

// `token` escaped for a JSON pointer segment ("~" → "~0", "/" → "~1"), appended to *out.
void append_pointer_token(std::string* out, std::string_view token);

}  // namespace warden::audit
