// FrameDecoder and encode_frame: good / need-more / bad, byte by byte and in bulk.
#include "protocol/frame.h"

#include <catch2/catch.hpp>

#include "engine/diagnostic.h"

using warden::protocol::encode_frame;
using warden::protocol::FrameDecoder;
namespace err = warden::code;
using Status = FrameDecoder::Status;

TEST_CASE("encode_frame writes a 6-digit hex length", "[server][frame]") {
  CHECK(encode_frame("{}") == "000002{}");
  CHECK(encode_frame("") == "000000");
  CHECK(encode_frame(std::string(0xabc, 'x')).substr(0, 6) == "000abc");
}

TEST_CASE("decoder returns frames fed in one piece and byte by byte", "[server][frame]") {
  std::string stream = encode_frame("{\"a\":1}") + encode_frame("[]") + encode_frame("");
  SECTION("bulk") {
    FrameDecoder d(1024);
    d.feed(stream.data(), stream.size());
    auto r = d.next();
    REQUIRE(r.status == Status::Good);
    CHECK(r.payload == "{\"a\":1}");
    r = d.next();
    REQUIRE(r.status == Status::Good);
    CHECK(r.payload == "[]");
    r = d.next();
    REQUIRE(r.status == Status::Good);
    CHECK(r.payload.empty());
    CHECK(d.next().status == Status::NeedMore);
    CHECK_FALSE(d.mid_frame());
  }
  SECTION("byte by byte") {
    FrameDecoder d(1024);
    std::vector<std::string> got;
    for (char c : stream) {
      d.feed(&c, 1);
      for (auto r = d.next(); r.status == Status::Good; r = d.next()) {
        got.emplace_back(r.payload);
      }
    }
    CHECK(got == std::vector<std::string>{"{\"a\":1}", "[]", ""});
  }
}

TEST_CASE("decoder accepts upper-case hex digits", "[server][frame]") {
  FrameDecoder d(1024);
  std::string s = "00000A0123456789";
  d.feed(s.data(), s.size());
  auto r = d.next();
  REQUIRE(r.status == Status::Good);
  CHECK(r.payload == "0123456789");
}

TEST_CASE("decoder refuses a bad prefix at the first bad byte", "[server][frame]") {
  FrameDecoder d(1024);
  d.feed("0x", 2);
  auto r = d.next();
  REQUIRE(r.status == Status::Bad);
  CHECK(std::string(r.code) == err::kFramePrefix);
  // Sticky: the stream cannot be resynchronised.
  d.feed("000002{}", 8);
  CHECK(d.next().status == Status::Bad);
}

TEST_CASE("decoder refuses garbage, spaces and signs in the prefix", "[server][frame]") {
  for (std::string bad : {"GET / HTTP/1.1\r\n", " 00002{}", "-00002{}", "+00002{}", "00 002{}"}) {
    FrameDecoder d(1024);
    d.feed(bad.data(), bad.size());
    auto r = d.next();
    CAPTURE(bad);
    REQUIRE(r.status == Status::Bad);
    CHECK(std::string(r.code) == err::kFramePrefix);
  }
}

TEST_CASE("decoder refuses an oversized frame as soon as the prefix is read", "[server][frame]") {
  FrameDecoder d(100);
  d.feed("000065", 6);  // 101 bytes
  auto r = d.next();
  REQUIRE(r.status == Status::Bad);
  CHECK(std::string(r.code) == err::kFrameTooLarge);

  FrameDecoder exact(100);
  std::string frame = encode_frame(std::string(100, ' '));
  exact.feed(frame.data(), frame.size());
  CHECK(exact.next().status == Status::Good);
}

TEST_CASE("decoder reports an unfinished frame as mid_frame", "[server][frame]") {
  FrameDecoder d(1024);
  CHECK_FALSE(d.mid_frame());
  d.feed("000007{\"a\"", 10);
  CHECK(d.next().status == Status::NeedMore);
  CHECK(d.mid_frame());
  CHECK(d.buffered() == 10);
  d.feed(":1}", 3);
  auto r = d.next();
  REQUIRE(r.status == Status::Good);
  CHECK(r.payload == "{\"a\":1}");
  CHECK_FALSE(d.mid_frame());
}

TEST_CASE("memory follows the bytes received, not the length announced", "[server][frame]") {
  FrameDecoder d(0xFFFFFF);
  // A stalled peer announces 16 MiB and sends ten bytes.
  std::string start = "ffffff0123456789";
  d.feed(start.data(), start.size());
  CHECK(d.next().status == Status::NeedMore);
  CHECK(d.capacity() < 4096);
}

TEST_CASE("a large frame's buffer is returned once it is handed out", "[server][frame]") {
  FrameDecoder d(1 << 20);
  std::string big = encode_frame(std::string(900 * 1024, 'x'));
  d.feed(big.data(), big.size());
  REQUIRE(d.next().status == Status::Good);
  CHECK(d.capacity() >= 900 * 1024);
  d.compact();
  CHECK(d.capacity() <= 64 * 1024);
  // A small frame after it still decodes, and release() frees everything.
  std::string small = encode_frame("{}");
  d.feed(small.data(), small.size());
  CHECK(d.next().payload == "{}");
  d.release();
  CHECK(d.capacity() <= sizeof(std::string));
}

TEST_CASE("the frame limit can be raised between frames (after auth)", "[server][frame]") {
  FrameDecoder d(16);
  std::string stream = encode_frame("{\"token\":1}") + encode_frame(std::string(100, 'y'));
  d.feed(stream.data(), stream.size());
  REQUIRE(d.next().status == Status::Good);
  d.set_max_frame_bytes(1024);
  auto r = d.next();
  REQUIRE(r.status == Status::Good);
  CHECK(r.payload.size() == 100);
  FrameDecoder strict(16);
  strict.feed(stream.data(), stream.size());
  REQUIRE(strict.next().status == Status::Good);
  auto bad = strict.next();
  CHECK(bad.status == Status::Bad);
  CHECK(std::string(bad.code) == err::kFrameTooLarge);
}
