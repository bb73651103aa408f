// The audit line format: seal/parse_head round trips, every off-shape line refused with its
// cause, the hash and signature suffixes, and the strict time stamps.
#include "audit/chain.h"

#include <catch2/catch.hpp>

#include <string>

#include "bindings/digest.h"

using namespace warden::audit;

namespace {

Envelope envelope(std::uint64_t seq = 7) {
  Envelope e;
  e.seq = seq;
  e.prev = std::string(kGenesis);
  e.kind = "decision";
  e.time_us = 1795148900123456;  // 2026-11-20T04:28:20.123456Z
  e.daemon = "host-1.example:a_b";
  return e;
}

std::string unterminated(const std::string& line) { return line.substr(0, line.size() - 1); }

std::string parse_error(const std::string& line) {
  Head h;
  std::string error;
  REQUIRE_FALSE(parse_head(line, &h, &error));
  return error;
}

}  // namespace

TEST_CASE("format_time and parse_time are exact inverses", "[chain]") {
  CHECK(format_time(0) == "1970-01-01T00:00:00.000000Z");
  CHECK(format_time(1795148900123456) == "2026-11-20T04:28:20.123456Z");
  CHECK(format_time(951782400000001) == "2000-02-29T00:00:00.000001Z");
  CHECK(format_time(-1) == "1969-12-31T23:59:59.999999Z");
  for (std::int64_t t : {std::int64_t{0}, std::int64_t{1795148900123456}, std::int64_t{-1},
                         std::int64_t{951782400000001}, std::int64_t{253402300799999999}}) {
    std::int64_t back = 42;
    REQUIRE(parse_time(format_time(t), &back));
    CHECK(back == t);
  }
  std::int64_t t = 0;
  CHECK_FALSE(parse_time("2026-11-19T00:28:20.12345Z", &t));    // 5 fraction digits
  CHECK_FALSE(parse_time("2026-11-19T00:28:20.1234567Z", &t));  // 7
  CHECK_FALSE(parse_time("2026-11-19T00:28:20.123456", &t));    // no Z
  CHECK_FALSE(parse_time("2026-11-19T00:28:20.123456+", &t));
  CHECK_FALSE(parse_time("2026-11-19 00:28:20.123456Z", &t));
  CHECK_FALSE(parse_time("2026-02-29T00:00:00.000000Z", &t));  // not a leap year
  CHECK_FALSE(parse_time("2026-13-01T00:00:00.000000Z", &t));
  CHECK_FALSE(parse_time("2026-11-19T24:00:00.000000Z", &t));
  CHECK_FALSE(parse_time("2026-11-19T00:60:00.000000Z", &t));
  CHECK_FALSE(parse_time("2026-11-19T00:00:60.000000Z", &t));  // no leap seconds
  CHECK_FALSE(parse_time("2026-11-19T00:00:0a.000000Z", &t));
  CHECK_FALSE(parse_time("", &t));
  CHECK(parse_time("2024-02-29T23:59:59.999999Z", &t));
}

TEST_CASE("seal then parse_head round trips with and without fields", "[chain]") {
  std::string hash;
  const std::string line = seal(envelope(), R"("a":1,"b":"x")", &hash);
  REQUIRE(line.back() == '\n');
  CHECK(line.starts_with(
      R"({"seq":7,"prev":")" + std::string(kGenesis) +
      R"(","kind":"decision","time":"2026-11-20T04:28:20.123456Z","daemon":"host-1.example:a_b","a":1,"b":"x","hash":")"));
  CHECK(line.ends_with("\"hash\":\"" + hash + "\"}\n"));
  const std::string text = unterminated(line);
  Head h;
  std::string error;
  REQUIRE(parse_head(text, &h, &error));
  CHECK(h.seq == 7);
  CHECK(h.prev == kGenesis);
  CHECK(h.kind == "decision");
  CHECK(h.time == "2026-11-20T04:28:20.123456Z");
  CHECK(h.daemon == "host-1.example:a_b");
  CHECK(h.fields == R"("a":1,"b":"x")");
  CHECK(h.hash == hash);
  CHECK(h.sealed == line.substr(0, line.find(",\"hash\":\"")));
  CHECK(warden::digest::sha256_hex(h.sealed) == hash);
  CHECK(hash_matches(h));

  const std::string empty = seal(envelope(1), "", &hash);
  const std::string empty_text = unterminated(empty);
  REQUIRE(parse_head(empty_text, &h, &error));
  CHECK(h.fields.empty());
  CHECK(h.seq == 1);
  CHECK(hash_matches(h));
  CHECK(empty.find("\"daemon\":\"host-1.example:a_b\",\"hash\"") != std::string::npos);
}

TEST_CASE("hash_matches fails when any sealed byte changes", "[chain]") {
  std::string line = unterminated(seal(envelope(), R"("outcome":"reject")", nullptr));
  line.replace(line.find("reject"), 6, "approv");
  Head h;
  std::string error;
  REQUIRE(parse_head(line, &h, &error));
  CHECK_FALSE(hash_matches(h));
}

TEST_CASE("parse_head refuses each off-shape part with its cause", "[chain]") {
  const std::string good = unterminated(seal(envelope(), R"("x":1)", nullptr));
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    return s;
  };
  CHECK(parse_error(" " + good) == "the line does not begin with {\"seq\":");
  CHECK(parse_error(with("\"seq\":7", "\"seq\":07")) ==
        "\"seq\" is not a decimal number without leading zeros");
  CHECK(parse_error(with("\"seq\":7", "\"seq\":")) ==
        "\"seq\" is not a decimal number without leading zeros");
  CHECK(parse_error(with("\"seq\":7", "\"seq\":0")) == "\"seq\" is 0 (records count from 1)");
  CHECK(parse_error(with("\"seq\":7", "\"seq\":123456789012345678901")) ==
        "\"seq\" is not a decimal number without leading zeros");
  CHECK(parse_error(with(",\"prev\"", ", \"prev\"")) == "expected \"prev\":\" at byte 8");
  CHECK(parse_error(with("\"prev\":\"0000", "\"prev\":\"000A")) ==
        "\"prev\" is not 64 lowercase hex digits");
  CHECK(parse_error(with("\"prev\":\"0000", "\"prev\":\"000")) ==
        "\"prev\" is not 64 lowercase hex digits");
  CHECK(parse_error(with("\"kind\":\"decision\"", "\"kind\":\"Decision\"")) ==
        "\"kind\" is not a kind name ([a-z][a-z_-]{0,31})");
  CHECK(parse_error(with("\"kind\":\"decision\"", "\"kind\":\"\"")) ==
        "\"kind\" is not a kind name ([a-z][a-z_-]{0,31})");
  CHECK(parse_error(with(",\"kind\"", ",\"knd\"")) == "expected \"kind\":\" at byte 82");
  CHECK(parse_error(with(".123456Z", ".123456")) == "\"time\" is not YYYY-MM-DDTHH:MM:SS.ffffffZ");
  CHECK(parse_error(with("\"daemon\":\"host", "\"daemon\":\"ho st")) ==
        "\"daemon\" is not a daemon id ([A-Za-z0-9._:-]{1,64})");
  CHECK(parse_error(with("\"daemon\":\"host-1.example:a_b\"", "\"daemon\":\"\"")) ==
        "\"daemon\" is not a daemon id ([A-Za-z0-9._:-]{1,64})");
  CHECK(parse_error(good.substr(0, good.size() - 1)) ==
        "the line does not end with ,\"hash\":\"<64 hex>\"}");
  CHECK(parse_error(good + " ") == "the line does not end with ,\"hash\":\"<64 hex>\"}");
  std::string upper = good;
  upper[upper.size() - 3] = 'A';
  CHECK(parse_error(upper) == "\"hash\" is not 64 lowercase hex digits");
  CHECK(parse_error(
            with("\"daemon\":\"host-1.example:a_b\",", "\"daemon\":\"host-1.example:a_b\"")) ==
        "unexpected bytes after \"daemon\" at byte 167");
  CHECK(parse_error(with(",\"x\":1", ",")) == "unexpected bytes after \"daemon\" at byte 167");
  CHECK(parse_error(R"({"seq":1,"prev":"abc)") == "unterminated \"prev\" value");
  CHECK(parse_error("") == "the line does not begin with {\"seq\":");
}

TEST_CASE("split_signature finds the signed bytes and the signature of a checkpoint", "[chain]") {
  const std::string sig(128, 'a');
  const std::string line = unterminated(
      seal(envelope(), R"("key_id":"ed25519:x","reason":"stop","sig":")" + sig + "\"", nullptr));
  std::string_view signed_bytes, sig_hex;
  REQUIRE(split_signature(line, &signed_bytes, &sig_hex));
  CHECK(sig_hex == sig);
  CHECK(signed_bytes == line.substr(0, line.find(",\"sig\":\"")));
  CHECK(signed_bytes.ends_with("\"reason\":\"stop\""));

  const std::string plain = unterminated(seal(envelope(), R"("reason":"stop")", nullptr));
  CHECK_FALSE(split_signature(plain, &signed_bytes, &sig_hex));
  const std::string short_sig = unterminated(
      seal(envelope(), R"("reason":"stop","sig":")" + std::string(127, 'a') + "\"", nullptr));
  CHECK_FALSE(split_signature(short_sig, &signed_bytes, &sig_hex));
  const std::string upper_sig = unterminated(
      seal(envelope(), R"("reason":"stop","sig":")" + std::string(128, 'A') + "\"", nullptr));
  CHECK_FALSE(split_signature(upper_sig, &signed_bytes, &sig_hex));
}
