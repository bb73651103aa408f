// Red team: the history filter's predicate judging (PredicateJudge in engine/history_filter.cpp)
// claims an entry it drops is one no `:` predicate of the history pattern accepts as CLIPS
// evaluates it. Each case decides one request twice, filtered and with explain (every entry
// asserted), and compares the decisions' JSON (facts_json and elapsed_us cleared).
#include <string>
#include <vector>

#include "engine/history_filter.h"
#include "engine/rule_files.h"
#include "engine/session_memory.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/history_test_util.h"

// One named scope: test files are compiled in unity batches sharing one scope.
namespace predicate_redteam {

using namespace warden;
using warden::test::effect;
using warden::test::shipped;
using warden::test::test_options;

constexpr std::int64_t kAt = 10000;

using Twice = warden::test::FilteredAndAll;

// The decision with the filter, and with every entry asserted (explain).
Twice decide_twice(const std::string& rules, const std::string& json,
                   const std::vector<HistoryEntry>& history) {
  auto loaded = Policy::compile({{"effects.toml", shipped("effects.toml")},
                                 {"paths.toml", shipped("paths.toml")},
                                 {"t.clp", rules}});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  EngineOptions o = test_options();
  o.clock = [] { return kAt; };
  Engine engine(loaded.policy, o);
  return warden::test::decide_filtered_and_all(engine, json, history);
}

const char* kReplyJson = R"({"target":"reply","payload":{"text":"hi"}})";

const char* kApproveAll = R"(
(defrule approve-all
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-all) (reason "ok")))))";

// A rule rejecting when a history entry passes `pattern` (a history pattern).
std::string reject_when(const std::string& pattern, const std::string& more = "") {
  return std::string(kApproveAll) + R"(
(defrule seen
  (proposal (id ?id))
  )" + more +
         "\n  " + pattern +
         R"(
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule seen) (reason "seen"))))
)";
}

TEST_CASE("red team instance-name-str-cat: (str-cat \"/etc/\" [shadow]) is \"/etc/shadow\"",
          "[history_filter][redteam]") {
  const std::vector<HistoryEntry> history = {
      {"d1", kAt, effect("read", "path", "/etc/shadow", "cat")}};
  auto b = decide_twice(reject_when(R"((history (target ?t&:(eq ?t (str-cat "/etc/" [shadow])))))"),
                        kReplyJson, history);
  INFO("CLIPS's str-cat takes an instance name's text without brackets; the judge keeps them");
  CHECK(b.filtered == b.all);
}

TEST_CASE(
    "red team instance-name-str-cat: (str-prefix (str-cat [/etc]) ?t) accepts \"/etc/shadow\"",
    "[history_filter][redteam]") {
  const std::vector<HistoryEntry> history = {
      {"d1", kAt, effect("read", "path", "/etc/shadow", "cat")}};
  auto b = decide_twice(reject_when(R"((history (target ?t&:(str-prefix (str-cat [/etc]) ?t))))"),
                        kReplyJson, history);
  CHECK(b.filtered == b.all);
}

TEST_CASE("red team guard: (str-cat (workspace-root) \"/\") as a str-prefix",
          "[history_filter][redteam]") {
  const std::vector<HistoryEntry> history = {
      {"d1", kAt, effect("read", "path", "/home/user/project/a", "cat")}};
  auto b = decide_twice(
      reject_when(R"((history (target ?t&:(str-prefix (str-cat (workspace-root) "/") ?t))))"),
      kReplyJson, history);
  CHECK(b.filtered == b.all);
}

}  // namespace predicate_redteam

namespace predicate_redteam {

// shell-command's runs slot claims to be (path-normalize (nth$ 1 argv) cwd) for a first word
// with a `/`; a rule that checks it rejects where they differ.
TEST_CASE("red team runs-normalize: runs is path-normalize of the first word in its cwd",
          "[history_filter][redteam]") {
  const std::string rules = reject_when(
      R"((shell-command (argv ?a $?) (cwd ?c) (runs ?r&~""&:(neq ?r (path-normalize ?a ?c)))))");
  for (const char* command :
       {"./x/../y", "../../../y", "~/bin/t", "//x//y/", "./a b/c", "/x/./../y/.."}) {
    const std::string json = std::string(R"({"target":"shell","payload":{"command":")") + command +
                             R"(","cwd":"/home/user/project"}})";
    auto b = decide_twice(rules, json, {});
    INFO(command);
    CHECK(b.all.find("\"outcome\":\"approve\"") != std::string::npos);
  }
}

}  // namespace predicate_redteam
