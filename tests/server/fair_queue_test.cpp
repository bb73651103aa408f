// FairQueue: round-robin between keys, the caps on all lines and on one, what take's
// chooser does with a job (take, skip, drop), removal and draining.
#include "server/fair_queue.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using warden::server::FairQueue;

namespace {

struct Job {
  std::string key;
  int n = 0;
};

void push(FairQueue<Job>& q, const std::string& key, int n) {
  Job job{key, n};
  REQUIRE(q.push(key, job));
}

std::vector<int> take_all(FairQueue<Job>& q) {
  std::vector<int> out;
  Job job;
  while (q.take(&job)) out.push_back(job.n);
  return out;
}

}  // namespace

TEST_CASE("FairQueue: keys take turns, each line oldest first", "[fair-queue]") {
  FairQueue<Job> q(100, 100);
  for (int n : {1, 2, 3, 4}) push(q, "flood", n);
  push(q, "quiet", 10);
  push(q, "other", 20);
  push(q, "quiet", 11);
  CHECK(q.size() == 7);
  CHECK(q.keys() == 3);
  // flood, quiet, other in the order their lines began; then round and round.
  CHECK(take_all(q) == std::vector<int>{1, 10, 20, 2, 11, 3, 4});
  CHECK(q.size() == 0);
  CHECK(q.keys() == 0);
}

TEST_CASE("FairQueue: a full queue or a full line refuses, and leaves the job as it was",
          "[fair-queue]") {
  FairQueue<Job> q(3, 2);
  push(q, "a", 1);
  push(q, "a", 2);
  CHECK(q.full("a"));
  CHECK_FALSE(q.full("b"));
  Job refused{"a", 3};
  CHECK_FALSE(q.push("a", refused));
  CHECK(refused.key == "a");  // not moved from
  CHECK(refused.n == 3);
  push(q, "b", 4);
  CHECK(q.full("c"));  // all lines together
  Job late{"c", 5};
  CHECK_FALSE(q.push("c", late));
  CHECK(q.size() == 3);
  // Caps below one are one.
  FairQueue<Job> tiny(0, 0);
  push(tiny, "x", 1);
  CHECK(tiny.full("y"));
  CHECK(tiny.max_per_key() == 1);
}

TEST_CASE("FairQueue: the chooser skips jobs that may not start, drops others, takes one",
          "[fair-queue]") {
  FairQueue<Job> q(100, 100);
  push(q, "a", 1);  // skipped: a later job of a's line may go
  push(q, "a", 2);  // dropped
  push(q, "a", 3);  // taken
  push(q, "b", 4);
  using Choice = FairQueue<Job>::Choice;
  std::vector<std::string> lines;
  std::vector<Job> dropped;
  Job out;
  auto choose = [](const Job& j) {
    return j.n == 1 ? Choice::Skip : j.n == 2 ? Choice::Drop : Choice::Take;
  };
  REQUIRE(q.take(
      &out, [&](const std::string& key) { lines.push_back(key); }, choose, &dropped));
  CHECK(out.n == 3);
  CHECK(lines == std::vector<std::string>{"a"});
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0].n == 2);
  // a still holds job 1, so it goes to the back: b is next.
  CHECK(take_all(q) == std::vector<int>{4, 1});
}

TEST_CASE("FairQueue: a line emptied by drops loses its turn; nothing taken is false",
          "[fair-queue]") {
  FairQueue<Job> q(100, 100);
  push(q, "gone", 1);
  push(q, "gone", 2);
  push(q, "stuck", 3);
  using Choice = FairQueue<Job>::Choice;
  std::vector<Job> dropped;
  Job out;
  auto choose = [](const Job& j) { return j.key == "gone" ? Choice::Drop : Choice::Skip; };
  CHECK_FALSE(q.take(
      &out, [](const std::string&) {}, choose, &dropped));
  CHECK(dropped.size() == 2);
  CHECK(q.keys() == 1);
  CHECK(q.size() == 1);
  CHECK(take_all(q) == std::vector<int>{3});
}

TEST_CASE("FairQueue: remove_if and drain empty lines and their turns", "[fair-queue]") {
  FairQueue<Job> q(100, 100);
  for (int n = 1; n <= 6; ++n) push(q, n % 2 ? "odd" : "even", n);
  push(q, "third", 7);
  std::vector<Job> removed;
  CHECK(q.remove_if([](const Job& j) { return j.key == "even" || j.n == 7; }, &removed) == 4);
  CHECK(removed.size() == 4);
  CHECK(q.size() == 3);
  CHECK(q.keys() == 1);
  push(q, "new", 8);
  std::vector<Job> left;
  q.drain(&left);
  CHECK(left.size() == 4);
  CHECK(q.size() == 0);
  CHECK(q.keys() == 0);
  Job job;
  CHECK_FALSE(q.take(&job));
  push(q, "again", 9);  // usable after draining
  CHECK(take_all(q) == std::vector<int>{9});
}
