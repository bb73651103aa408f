// libFuzzer target: the proposal reader and a whole decision with the shipped rule pack, as
// the daemon and dry-run run them. Checks that nothing throws, that an input the reader
// refuses is never decided, that an approval carries no engine error, and that every JSON
// text the engine returns (decision, approved action) is valid JSON.
#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "engine/proposal_reader.h"
#include "engine/rule_files.h"

namespace {

warden::Engine* engine = nullptr;

bool valid_json(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(text.data(),
                                                                                    text.size());
  return !doc.HasParseError();
}

void fail(const char* what, const std::uint8_t* data, std::size_t size) {
  std::fprintf(stderr, "fuzz_proposal: %s for input of %zu bytes\n", what, size);
  (void)data;
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  warden::Diagnostics diagnostics;
  warden::RuleSources sources =
      warden::read_rule_files({warden::shipped_rules_dir()}, &diagnostics);
  auto loaded = warden::Policy::compile(sources);
  if (!loaded.policy) {
    for (const auto& d : loaded.diagnostics) std::fprintf(stderr, "%s\n", d.to_text().c_str());
    std::abort();
  }
  warden::EngineOptions options;
  options.workspace_root = "/home/user/project";
  options.home = "/home/user";
  options.deadline = std::chrono::seconds(2);  // sanitizers are slow; a timeout is no finding
  options.clock = [] { return std::int64_t{1700000000}; };
  engine = new warden::Engine(loaded.policy, options);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);

  rapidjson::Document doc;
  warden::ProposalFields fields;
  std::vector<warden::Leaf> leaves;
  const bool readable = !warden::read_proposal(json, warden::ReadLimits{}, &doc, &fields, &leaves);

  warden::DecideRequest request;
  request.proposal_json = json;
  request.decision_id = "fuzz";
  request.explain = size % 2 == 0;
  if (size % 3 == 0) {
    request.principal = "fuzz-principal";
    request.groups = {"dev"};
  }
  warden::DecideResult result = engine->decide(request);
  if (!readable && result.ok) fail("a proposal the reader refuses was decided", data, size);
  if (!result.ok) {
    if (result.error.code.empty()) fail("an input error without a code", data, size);
    return 0;
  }
  const warden::Decision& d = result.decision;
  if (d.outcome == warden::Outcome::Approve && !d.error_code.empty())
    fail("approved although the engine failed", data, size);
  if (!valid_json(warden::decision_to_json(d, request.explain)))
    fail("decision JSON is not valid", data, size);
  if (!d.action_json.empty() && !valid_json(d.action_json))
    fail("action JSON is not valid", data, size);
  return 0;
}
