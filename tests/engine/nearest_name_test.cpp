// "Did you mean …?": the nearest name by edit distance, only when near enough.
#include "engine/nearest_name.h"

#include <catch2/catch.hpp>

using namespace warden;

TEST_CASE("edit distance counts a swap of neighbours as one edit", "[nearest_name]") {
  CHECK(edit_distance("tset", "test", 3) == 1);
  CHECK(edit_distance("proposl", "proposal", 3) == 1);
  CHECK(edit_distance("kitten", "sitting", 5) == 3);
  CHECK(edit_distance("abc", "abcdefgh", 2) == 3);  // past the limit: limit + 1
  CHECK(edit_distance("REJECT", "reject", 1) == 0);
}

TEST_CASE("the nearest name is suggested only when near enough to be meant", "[nearest_name]") {
  const std::vector<std::string> outcomes = {"approve", "reject", "approval-required"};
  CHECK(nearest_name("rejct", outcomes) == "reject");
  CHECK(nearest_name("aprove", outcomes) == "approve");
  CHECK(nearest_name("approval-requird", outcomes) == "approval-required");
  CHECK(nearest_name("deny", outcomes).empty());
  CHECK(nearest_name("reject", outcomes).empty());  // right already
  CHECK(nearest_name("x", {"y", "xyz"}).empty());   // one letter is no name's misspelling
  CHECK(did_you_mean("rejct", outcomes) == " — did you mean `reject`?");
  CHECK(did_you_mean(std::string(100, 'a'), outcomes).empty());
}

TEST_CASE("name lists stop at a length", "[nearest_name]") {
  CHECK(name_list({"a", "b", "c"}) == "a, b, c");
  CHECK(name_list({"a", "b", "c"}, 2) == "a, b, … (3 in all)");
}
