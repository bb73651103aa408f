// Checkpoint signing: generated key files (modes, never overwritten), key ids, sign/verify,
// wrong key, tampered message, and a private key file others may read refused with its mode.
#include "audit/signing.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "audit/chain.h"
#include "tests/support/temp_dir.h"

using namespace warden::audit;
using warden::server::testing::TempDir;

namespace {

unsigned file_mode(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("generate_key writes a 0600 private and a 0644 public PEM, never overwriting",
          "[signing]") {
  TempDir dir;
  const std::string priv = dir.str() + "/k.pem", pub = dir.str() + "/k.pub";
  std::string error;
  REQUIRE(generate_key(priv, pub, &error));
  CHECK(file_mode(priv) == 0600);
  CHECK(file_mode(pub) == 0644);
  CHECK(dir.read("k.pem").starts_with("-----BEGIN PRIVATE KEY-----\n"));
  CHECK(dir.read("k.pub").starts_with("-----BEGIN PUBLIC KEY-----\n"));
  const std::string before = dir.read("k.pem");
  CHECK_FALSE(generate_key(priv, dir.str() + "/other.pub", &error));
  CHECK(error == "cannot create " + priv + ": File exists (an existing key is never overwritten)");
  CHECK(dir.read("k.pem") == before);
  CHECK_FALSE(std::filesystem::exists(dir.str() + "/other.pub"));
  // The public path taken: the new private file is removed again.
  CHECK_FALSE(generate_key(dir.str() + "/new.pem", pub, &error));
  CHECK(error == "cannot create " + pub + ": File exists (an existing key is never overwritten)");
  CHECK_FALSE(std::filesystem::exists(dir.str() + "/new.pem"));
}

TEST_CASE("sign_hex and verify_hex: the right key verifies, others do not", "[signing]") {
  TempDir dir;
  std::string error;
  REQUIRE(generate_key(dir.str() + "/a.pem", dir.str() + "/a.pub", &error));
  REQUIRE(generate_key(dir.str() + "/b.pem", dir.str() + "/b.pub", &error));
  auto a = SigningKey::load(dir.str() + "/a.pem", &error);
  REQUIRE(a);
  auto a_pub = VerifyKey::load(dir.str() + "/a.pub", &error);
  REQUIRE(a_pub);
  auto a_from_private = VerifyKey::load(dir.str() + "/a.pem", &error);
  REQUIRE(a_from_private);
  auto b_pub = VerifyKey::load(dir.str() + "/b.pub", &error);
  REQUIRE(b_pub);

  CHECK(a->key_id().starts_with("ed25519:"));
  CHECK(a->key_id().size() == 8 + 32);
  CHECK(is_lower_hex(a->key_id().substr(8), 32));
  CHECK(a_pub->key_id() == a->key_id());
  CHECK(a_from_private->key_id() == a->key_id());
  CHECK(b_pub->key_id() != a->key_id());
  CHECK(a->public_pem() == dir.read("a.pub"));

  const std::string message = R"({"seq":5,"prev":"00","kind":"checkpoint"})";
  const std::string sig = a->sign_hex(message);
  CHECK(is_lower_hex(sig, 128));
  CHECK(a->sign_hex(message) == sig);  // Ed25519 is deterministic
  CHECK(a_pub->verify_hex(message, sig));
  CHECK(a_from_private->verify_hex(message, sig));
  CHECK_FALSE(b_pub->verify_hex(message, sig));
  std::string tampered = message;
  tampered[8] = '6';
  CHECK_FALSE(a_pub->verify_hex(tampered, sig));
  std::string bad_sig = sig;
  bad_sig[0] = bad_sig[0] == '0' ? '1' : '0';
  CHECK_FALSE(a_pub->verify_hex(message, bad_sig));
  CHECK_FALSE(a_pub->verify_hex(message, sig.substr(0, 126)));
  CHECK_FALSE(a_pub->verify_hex(message, std::string(128, 'z')));
}

TEST_CASE("a private key file group or others may read is refused with its mode", "[signing]") {
  TempDir dir;
  const std::string priv = dir.str() + "/k.pem";
  std::string error;
  REQUIRE(generate_key(priv, dir.str() + "/k.pub", &error));
  REQUIRE(::chmod(priv.c_str(), 0640) == 0);
  CHECK_FALSE(SigningKey::load(priv, &error));
  CHECK(error == "the signing key " + priv +
                     " has mode 0640: group or others may access it (chmod 600 " + priv + ")");
  REQUIRE(::chmod(priv.c_str(), 0604) == 0);
  CHECK_FALSE(SigningKey::load(priv, &error));
  CHECK(error.find("has mode 0604") != std::string::npos);
  REQUIRE(::chmod(priv.c_str(), 0400) == 0);
  CHECK(SigningKey::load(priv, &error));
  // The verifier needs no secrecy: a public key may be world readable.
  CHECK(VerifyKey::load(dir.str() + "/k.pub", &error));
}

TEST_CASE("key files that are not Ed25519 keys are refused with the cause", "[signing]") {
  TempDir dir;
  std::string error;
  dir.write("junk.pem", "not a key\n", 0600);
  CHECK_FALSE(SigningKey::load(dir.str() + "/junk.pem", &error));
  CHECK(error.starts_with("the signing key " + dir.str() + "/junk.pem: not a PEM private key"));
  CHECK_FALSE(VerifyKey::load(dir.str() + "/junk.pem", &error));
  CHECK(error.starts_with("the verification key " + dir.str() +
                          "/junk.pem: not a PEM public or private key"));
  CHECK_FALSE(SigningKey::load(dir.str() + "/missing.pem", &error));
  CHECK(error ==
        "cannot open the key file " + dir.str() + "/missing.pem: No such file or directory");
  // A public key is not a signing key.
  REQUIRE(generate_key(dir.str() + "/k.pem", dir.str() + "/k.pub", &error));
  REQUIRE(::chmod((dir.str() + "/k.pub").c_str(), 0600) == 0);
  CHECK_FALSE(SigningKey::load(dir.str() + "/k.pub", &error));
}
