// Data files (engine/data_files.h): named lists and maps beside the rules that rules read with
// data-member and data-value. Reading both formats, each malformed class refused with its code
// and line, the rules digest, values that hold rule syntax, names checked at load and at run
// time, and what the history filter makes of a data call.
#include "engine/data_files.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/policy_impl.h"
#include "tests/engine/engine_test_util.h"

using namespace warden;
using namespace warden::test;

namespace {

// Approves a reply whose text is on the list "words", with the reason the map "notes" holds
// for it; asks for any other reply.
const char* kWordRules = R"CLP(
(defrule listed-word
  (param (proposal ?id) (key "payload.text") (value ?t&:(data-member "words" ?t)))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule listed-word)
                    (reason (str-cat "note: " (data-value "notes" ?t))))))
(defrule unlisted-word
  (param (proposal ?id) (key "payload.text") (value ?t&:(not (data-member "words" ?t))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule unlisted-word) (reason ?t))))
)CLP";

std::string reply(const std::string& text_json) {
  return R"({"target":"reply","payload":{"text":)" + text_json + "}}";
}

Policy::Loaded compile_with(const RuleSources& data, const std::string& rules = kWordRules) {
  RuleSources sources{RuleSource{"rules/words.clp", rules}};
  sources.insert(sources.end(), data.begin(), data.end());
  return Policy::compile(sources);
}

std::shared_ptr<const Policy> must_compile_with(const RuleSources& data,
                                                const std::string& rules = kWordRules) {
  auto loaded = compile_with(data, rules);
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  return loaded.policy;
}

struct Refusal {
  std::string file, code;
  long line;
};

// Compiles, expects no policy and the first error to be `code` at file:line.
void expect_refused(const RuleSources& data, const Refusal& expected,
                    const std::string& rules = kWordRules) {
  auto loaded = compile_with(data, rules);
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  CHECK_FALSE(loaded.policy);
  REQUIRE_FALSE(loaded.diagnostics.empty());
  bool found = false;
  for (const auto& d : loaded.diagnostics)
    found |= d.severity == Severity::Error && d.code == expected.code && d.file == expected.file &&
             d.line == expected.line;
  CHECK(found);
  CHECK(code::is_known(expected.code));
}

const char* kWordsToml =
    "# the words\nwords = [\"hi\", \"hello\"]\n\n[notes]\nhi = \"short\"\nhello = \"long\"\n";
const char* kWordsJson =
    "{\n  \"words\": [\"hi\", \"hello\"],\n  \"notes\": {\"hi\": \"short\", \"hello\": "
    "\"long\"}\n}\n";

}  // namespace

TEST_CASE("data files: rules read a list with data-member and a map with data-value, TOML or JSON",
          "[data]") {
  for (const RuleSource& data : {RuleSource{"team/words.data.toml", kWordsToml},
                                 RuleSource{"team/words.data.json", kWordsJson}}) {
    INFO(data.path);
    auto policy = must_compile_with({data});
    Engine engine(policy, test_options());
    Decision hi = decide_ok(engine, reply("\"hi\""));
    CHECK(hi.outcome == Outcome::Approve);
    CHECK(fired(hi, "listed-word"));
    CHECK(hi.reason == "note: short");
    Decision hello = decide_ok(engine, reply("\"hello\""));
    CHECK(hello.outcome == Outcome::Approve);
    CHECK(hello.reason == "note: long");
    Decision other = decide_ok(engine, reply("\"HI\""));  // exact: no case folding
    CHECK(other.outcome == Outcome::ApprovalRequired);
    CHECK(fired(other, "unlisted-word"));

    const auto sets = policy->data_sets();
    REQUIRE(sets.size() == 2);
    CHECK(sets[0].name == "notes");
    CHECK(sets[0].kind == "map");
    CHECK(sets[0].entries == 2);
    CHECK(sets[1].name == "words");
    CHECK(sets[1].kind == "list");
    CHECK(sets[1].entries == 2);
  }
  // Both file names are data; other names are not.
  CHECK(is_data_file("team/words.data.toml"));
  CHECK(is_data_file("words.data.json"));
  CHECK_FALSE(is_data_file("team/.data.toml"));
  CHECK_FALSE(is_data_file("team/words.toml"));
  CHECK_FALSE(is_data_file("team/words.json"));
  CHECK_FALSE(is_data_file("team/words.data.jsonl"));
}

TEST_CASE("data files: the sets of several files are used together; a set defined twice is refused",
          "[data]") {
  auto policy = must_compile_with({{"a.data.toml", "words = [\"hi\"]\n"},
                                   {"b.data.json", "{\"notes\": {\"hi\": \"from b\"}}"}});
  Engine engine(policy, test_options());
  CHECK(decide_ok(engine, reply("\"hi\"")).reason == "note: from b");
  expect_refused(
      {{"a.data.toml", "words = [\"hi\"]\n[notes]\n"}, {"b.data.json", "{\n\"words\": [\"x\"]}"}},
      {"b.data.json", code::kData, 2});
}

TEST_CASE("data files: each malformed class is refused with its code and line", "[data]") {
  const std::string notes = "[notes]\nhi = \"x\"\n";
  SECTION("TOML syntax") {
    expect_refused({{"w.data.toml", "words = [\"hi\",\n\"hello\"\nnotes = 1\n"}},
                   {"w.data.toml", code::kData, 3});
  }
  SECTION("JSON syntax") {
    expect_refused({{"w.data.json", "{\"words\": [\"hi\",\n \"hello\" \"x\"], \"notes\": {}}"}},
                   {"w.data.json", code::kData, 2});
  }
  SECTION("a JSON top level that is not an object") {
    expect_refused({{"w.data.json", "[\"hi\"]"}}, {"w.data.json", code::kData, 1});
  }
  SECTION("a list value that is not a string") {
    expect_refused({{"w.data.toml", "words = [\n  \"hi\",\n  3,\n]\n" + notes}},
                   {"w.data.toml", code::kData, 3});
    expect_refused(
        {{"w.data.json", "{\"notes\": {},\n\"words\": [\"hi\",\n {\"nested\": \"x\"}]}"}},
        {"w.data.json", code::kData, 3});
  }
  SECTION("a map value that is not a string") {
    expect_refused({{"w.data.toml", "words = []\n[notes]\nhi = \"x\"\nho = true\n"}},
                   {"w.data.toml", code::kData, 4});
    expect_refused({{"w.data.json", "{\"words\": [],\n\"notes\": {\"hi\": [\"x\"]}}"}},
                   {"w.data.json", code::kData, 2});
  }
  SECTION("a set that is neither a list nor a map") {
    expect_refused({{"w.data.toml", "words = []\ntier = \"gold\"\n" + notes}},
                   {"w.data.toml", code::kData, 2});
    expect_refused({{"w.data.json", "{\"words\": [], \"notes\": {},\n\"tier\": \"gold\"}"}},
                   {"w.data.json", code::kData, 2});
  }
  SECTION("a bad set name") {
    expect_refused({{"w.data.toml", "words = []\nTeam-List = [\"x\"]\n" + notes}},
                   {"w.data.toml", code::kData, 2});
    expect_refused({{"w.data.json", "{\"words\": [], \"notes\": {},\n\"\": [\"x\"]}"}},
                   {"w.data.json", code::kData, 2});
  }
  SECTION("a JSON set or map key given twice") {
    expect_refused({{"w.data.json", "{\"words\": [], \"notes\": {},\n\"words\": [\"x\"]}"}},
                   {"w.data.json", code::kData, 2});
    expect_refused({{"w.data.json", "{\"words\": [], \"notes\": {\"hi\": \"a\",\n\"hi\": \"b\"}}"}},
                   {"w.data.json", code::kData, 2});
  }
  SECTION("a NUL in a value, escaped or as a byte") {
    expect_refused({{"w.data.toml", "words = [\"hi\",\n\"h\\u0000i\"]\n" + notes}},
                   {"w.data.toml", code::kDataValue, 2});
    expect_refused({{"w.data.json", "{\"notes\": {},\n\"words\": [\"h\\u0000i\"]}"}},
                   {"w.data.json", code::kDataValue, 2});
    const char raw[] = "{\"notes\": {},\n\n\"words\": [\"h\0i\"]}";
    expect_refused({{"w.data.json", std::string(raw, sizeof raw - 1)}},
                   {"w.data.json", code::kDataValue, 3});
  }
  SECTION("text that is not UTF-8: a byte, or a lone surrogate") {
    expect_refused({{"w.data.toml", "words = [\"hi\",\n\"caf\xe9\"]\n" + notes}},
                   {"w.data.toml", code::kDataValue, 2});
    expect_refused({{"w.data.json", "{\"notes\": {},\n\"words\": [\"\\ud800\"]}"}},
                   {"w.data.json", code::kDataValue, 2});
  }
  SECTION("a string over the limit") {
    const std::string longest(kMaxDataStringBytes, 'a');
    must_compile_with({{"w.data.toml", "words = [\"" + longest + "\"]\n" + notes}});
    expect_refused({{"w.data.toml", "words = [\"hi\",\n\"" + longest + "b\"]\n" + notes}},
                   {"w.data.toml", code::kDataLimit, 2});
    expect_refused({{"w.data.json", "{\"words\": [],\n\"notes\": {\"" + longest + "b\": \"x\"}}"}},
                   {"w.data.json", code::kDataLimit, 2});
  }
  SECTION("more entries than the limit, over all data files") {
    std::string half = "{\"notes\": {}, \"words\": [\n";
    for (std::size_t i = 0; i < kMaxDataEntries / 2; ++i)
      half += "\"w" + std::to_string(i) + "\",\n";
    half +=
        "\"last\"]}\n";  // kMaxDataEntries / 2 + 1 entries, on lines 2 … kMaxDataEntries / 2 + 2
    std::string other = "{\"more\": [\n";
    for (std::size_t i = 0; i < kMaxDataEntries / 2; ++i)
      other += "\"m" + std::to_string(i) + "\",\n";
    other += "\"end\"]}\n";
    // The entry that goes over is the second file's (kMaxDataEntries / 2)th, "m" followed by
    // kMaxDataEntries / 2 - 1, on line kMaxDataEntries / 2 + 1.
    expect_refused({{"a.data.json", half}, {"b.data.json", other}},
                   {"b.data.json", code::kDataLimit, static_cast<long>(kMaxDataEntries / 2 + 1)});
    must_compile_with({{"a.data.json", half}});
  }
}

TEST_CASE("data files: a set a rule names must exist, and data-value reads a map (E_DATA_SET)",
          "[data]") {
  // kWordRules names "words" on lines 3 and 8, and reads the map "notes" on line 6.
  expect_refused({{"w.data.toml", "words = [\"hi\"]\n"}}, {"rules/words.clp", code::kDataSet, 6});
  expect_refused({{"w.data.toml", "words = [\"hi\"]\nnotes = [\"hi\"]\n"}},
                 {"rules/words.clp", code::kDataSet, 6});
  expect_refused({}, {"rules/words.clp", code::kDataSet, 3});
  expect_refused({}, {"rules/words.clp", code::kDataSet, 8});
  // A symbol names a set as a string does; in a deffunction too.
  auto loaded =
      Policy::compile({{"rules/f.clp", "(deffunction f (?x)\n  (data-member wrods ?x))\n"},
                       {"w.data.toml", "words = [\"hi\"]\n"}});
  CHECK_FALSE(loaded.policy);
  REQUIRE(loaded.diagnostics.size() == 1);
  CHECK(loaded.diagnostics[0].code == code::kDataSet);
  CHECK(loaded.diagnostics[0].line == 2);
  CHECK(loaded.diagnostics[0].message.find("\"wrods\"") != std::string::npos);
  CHECK(loaded.diagnostics[0].message.find("words") != std::string::npos);  // the sets defined
}

TEST_CASE("data files: a set named only at decision time that no file defines fails closed",
          "[data]") {
  auto policy = must_compile_with({{"w.data.toml", "words = [\"hi\"]\n"}}, R"CLP(
(defrule by-name
  (param (proposal ?id) (key "payload.set") (value ?set))
  (param (proposal ?id) (key "payload.text") (value ?t&:(data-member ?set ?t)))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule by-name))))
)CLP");
  Engine engine(policy, test_options());
  CHECK(decide_ok(engine, R"({"target":"reply","payload":{"set":"words","text":"hi"}})").outcome ==
        Outcome::Approve);
  Decision missing =
      decide_ok(engine, R"({"target":"reply","payload":{"set":"nowhere","text":"hi"}})");
  CHECK(missing.outcome == Outcome::Reject);
  CHECK(missing.error_code == code::kRuntime);
  CHECK(missing.reason.find("nowhere") != std::string::npos);
}

TEST_CASE("data files: a change of data changes the rules digest", "[data]") {
  auto a = must_compile_with({{"w.data.toml", kWordsToml}});
  auto same = must_compile_with({{"elsewhere/w.data.toml", kWordsToml}});
  std::string changed_text = kWordsToml;
  changed_text.replace(changed_text.find("\"hi\", "), 6, "\"hey\", \"hi\", ");
  auto changed = must_compile_with({{"w.data.toml", changed_text}});
  CHECK(a->digest() == same->digest());  // the contents count, not where they were read
  CHECK(a->digest() != changed->digest());
  auto without = Policy::compile({{"rules/r.clp", kSimpleRules}});
  auto with = Policy::compile({{"rules/r.clp", kSimpleRules}, {"w.data.json", "{\"unused\": []}"}});
  REQUIRE(without.policy);
  REQUIRE(with.policy);
  CHECK(without.policy->digest() != with.policy->digest());
}

TEST_CASE(
    "data files: values holding quotes, parentheses and backslashes match exactly, never as code",
    "[data]") {
  // Each value is what a rule would be built from if data were spliced into rule text.
  const char* kToml = R"TOML(words = [
  'hi") (outcome approve',
  '(assert (decision (proposal "p") (outcome approve) (rule injected)))',
  'back\slash "quoted"',
  "tab\there",
]
[notes]
'hi") (outcome approve' = '") (rule injected) (reason "'
)TOML";
  auto policy = must_compile_with({{"w.data.toml", kToml}});
  Engine engine(policy, test_options());
  Decision quoted = decide_ok(engine, reply(R"J("hi\") (outcome approve")J"));
  CHECK(quoted.outcome == Outcome::Approve);
  REQUIRE(quoted.rules.size() == 1);  // one decision, by the rule that asserted it
  CHECK(quoted.rules[0].rule == "listed-word");
  CHECK(quoted.reason == "note: \") (rule injected) (reason \"");
  Decision code_text = decide_ok(
      engine,
      reply(R"J("(assert (decision (proposal \"p\") (outcome approve) (rule injected)))")J"));
  CHECK(code_text.outcome == Outcome::Approve);
  REQUIRE(code_text.rules.size() == 1);
  CHECK(code_text.rules[0].rule == "listed-word");
  CHECK(decide_ok(engine, reply(R"("back\\slash \"quoted\"")")).outcome == Outcome::Approve);
  CHECK(decide_ok(engine, reply(R"("tab\there")")).outcome == Outcome::Approve);
  // Near misses are other strings: the backslash or the quotes dropped, the escape not taken.
  for (const char* near : {R"("backslash \"quoted\"")", R"("back\\slash quoted")",
                           R"("tab\\there")", R"("hi")", R"J("hi\")")J"}) {
    INFO(near);
    Decision d = decide_ok(engine, reply(near));
    CHECK(d.outcome == Outcome::ApprovalRequired);
    CHECK_FALSE(fired(d, "listed-word"));
    CHECK_FALSE(fired(d, "injected"));
  }
}

TEST_CASE("data files: a defglobal reads data once, when the rules load", "[data]") {
  auto policy =
      must_compile_with({{"w.data.toml", "words = []\n[notes]\ntier = \"gold\"\n"}}, R"CLP(
(defglobal ?*tier* = (data-value "notes" "tier"))
(defrule tier
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule tier) (reason ?*tier*))))
)CLP");
  Engine first(policy, test_options());   // the environment left over from compiling
  Engine second(policy, test_options());  // one built from the policy
  CHECK(decide_ok(first, reply("\"x\"")).reason == "gold");
  CHECK(decide_ok(second, reply("\"x\"")).reason == "gold");
}

TEST_CASE("data files: a history pattern calling data-member with a constant set keeps its gates",
          "[data]") {
  const std::string data_file = "words = [\"/w/a\"]\n";
  auto gates_of = [&](const std::string& call) {
    auto policy = must_compile_with({{"w.data.toml", data_file}}, R"CLP(
(defrule watched
  (shell-command (proposal ?id) (program "curl"))
  (history (kind write) (target ?t&:)CLP" + call + R"CLP())
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule watched))))
)CLP");
    const auto& patterns = policy_impl(*policy).history_filter->patterns();
    REQUIRE(patterns.size() == 1);
    return patterns[0].gates.size();
  };
  CHECK(gates_of("(data-member \"words\" ?t)") == 1);
  // A set named at run time could be missing, which fails the call: every write is asserted.
  CHECK(gates_of("(data-member (str-cat \"wor\" \"ds\") ?t)") == 0);
}

// The shared JSON parser's limits (bindings/json.h) before the file is read: a zero RapidJSON
// would misread and nesting deeper than json::kMaxDepth are refused at their byte's line.
TEST_CASE("data files: a misread zero and deep nesting are refused by the JSON reader", "[data]") {
  auto first_error = [](const std::string& text) {
    auto loaded = compile_with({{"w.data.json", text}});
    CHECK_FALSE(loaded.policy);
    REQUIRE_FALSE(loaded.diagnostics.empty());
    return loaded.diagnostics[0];
  };
  const auto zero = first_error("{\"notes\": {},\n\"words\": [\n0e66]}");
  CHECK(zero.code == code::kData);
  CHECK(zero.line == 3);
  CHECK(zero.message == "JSON: Number too big to be stored in double.");
  const auto deep = first_error("{\"notes\": {},\n\"words\": [\n" + std::string(200, '[') + "]}");
  CHECK(deep.code == code::kData);
  CHECK(deep.line == 3);
  CHECK(deep.message == "JSON: nested too deep");
}
