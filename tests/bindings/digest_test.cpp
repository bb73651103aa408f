// SHA-256 held against the standard's test vectors, as bytes and as lowercase hex, on one
// thread's reused context and on another thread's.
#include "bindings/digest.h"

#include <catch2/catch.hpp>

#include <string>
#include <thread>

#include "bindings/text.h"

using namespace warden;

TEST_CASE("sha256_hex is SHA-256 in lowercase hex", "[digest]") {
  CHECK(digest::sha256_hex("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(digest::sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(digest::sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 is the 32 bytes sha256_hex spells", "[digest]") {
  const digest::Sha256 md = digest::sha256("abc");
  CHECK(md[0] == 0xba);
  CHECK(md[31] == 0xad);
  CHECK(text::hex(md.data(), md.size()) == digest::sha256_hex("abc"));
  // Bytes past a NUL count: the view's size is hashed, not a C string.
  CHECK(digest::sha256_hex(std::string_view("a\0b", 3)) ==
        "59b271ae1bbcb1d31d41929817f4b16fb439eb4f31520b5ad1d5ce98920a7138");
}

TEST_CASE("sha256 on another thread gives the same digests", "[digest]") {
  const std::string here = digest::sha256_hex("abc");
  std::string there;
  std::thread t([&] {
    there = digest::sha256_hex("abc");
    there += digest::sha256_hex("");
  });
  t.join();
  CHECK(there == here + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
