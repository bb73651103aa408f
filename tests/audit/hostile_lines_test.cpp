// Lines an attacker with write access to the log directory may leave there, found by the
// fuzz target fuzz/fuzz_audit.cpp: every reader must answer "not a record" without throwing.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "audit/chain.h"
#include "audit/reader.h"

using namespace warden::audit;

TEST_CASE("peek_seq_kind refuses a line that ends inside its prev hash", "[audit][hostile]") {
  // The fuzzer's input: a "prev" shorter than 64 hex digits at the end of the line. The
  // reader used to slice past the end (std::out_of_range, which ends verify and replay).
  const std::string line = R"({"seq":2,"prev":"1{"se65746ab54c94d2aq":65604,"prev":"3f18c9fd0)";
  std::uint64_t seq = 0;
  std::string_view kind;
  CHECK_FALSE(peek_seq_kind(line, &seq, &kind));
  CHECK_FALSE(peek_seq_kind(R"({"seq":7,"prev":")", &seq, &kind));
  Head head;
  std::string error;
  CHECK_FALSE(parse_head(line, &head, &error));
}

TEST_CASE("peek_seq_kind refuses a seq that does not fit in 64 bits", "[audit][hostile]") {
  const std::string prev(64, '0');
  std::uint64_t seq = 0;
  std::string_view kind;
  // 2^64 + 1 would wrap around to 1.
  std::string wrapped =
      "{\"seq\":18446744073709551617,\"prev\":\"" + prev + "\",\"kind\":\"decision\"";
  CHECK_FALSE(peek_seq_kind(wrapped, &seq, &kind));
  std::string fine = "{\"seq\":9223372036854775807,\"prev\":\"" + prev + "\",\"kind\":\"decision\"";
  REQUIRE(peek_seq_kind(fine, &seq, &kind));
  CHECK(seq == 9223372036854775807ull);
  CHECK(kind == "decision");
}
