// libFuzzer target: Think's reading of a hostile model's answer. The first byte picks a
// text answer or a native tool call ("name\0arguments"); the rest is the model's bytes.
// Checks that parse_answer never throws or crashes, always returns a valid-UTF-8 JSON object
// with a string target and action and an object payload and no other fields than
// explanation, that a text answer's proposal read again is the same proposal (a fixpoint),
// and that normalized_action is a pure function of it.
#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "reasoning/think.h"

namespace {

using warden::reasoning::Answer;
using warden::reasoning::Catalog;
using warden::reasoning::ToolCall;

const Catalog& catalog() {
  static const Catalog c = [] {
    Catalog c;
    c.identity = "fuzz";
    c.targets = {{"shell", "", ""}, {"file", "", ""}, {"http", "", ""}, {"reply", "", ""}};
    c.tools = {{"weather", "", ""}, {"Shell", "", ""}};
    return c;
  }();
  return c;
}

void fail(const char* what, const std::string& out) {
  std::fprintf(stderr, "fuzz_model_answer: %s: %.300s\n", what, out.c_str());
  std::abort();
}

void check_proposal(const std::string& out) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(out.data(),
                                                                                    out.size());
  if (doc.HasParseError()) fail("proposal is not valid UTF-8 JSON", out);
  if (!doc.IsObject()) fail("proposal is not an object", out);
  for (const auto& m : doc.GetObject()) {
    const std::string name(m.name.GetString(), m.name.GetStringLength());
    if (name != "target" && name != "action" && name != "payload" && name != "explanation")
      fail("proposal carries an unexpected field", out);
  }
  auto t = doc.FindMember("target");
  auto a = doc.FindMember("action");
  auto p = doc.FindMember("payload");
  if (t == doc.MemberEnd() || !t->value.IsString() || t->value.GetStringLength() == 0)
    fail("no target", out);
  if (a == doc.MemberEnd() || !a->value.IsString()) fail("no action", out);
  if (p == doc.MemberEnd() || !p->value.IsObject()) fail("no payload object", out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool tool_call = data[0] & 1;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  Answer answer;
  answer.ok = true;
  if (tool_call) {
    const auto nul = bytes.find('\0');
    ToolCall call;
    call.name = bytes.substr(0, nul);
    call.arguments_json = nul == std::string::npos ? "" : bytes.substr(nul + 1);
    answer.tool_call = call;
  } else {
    answer.text = bytes;
  }
  const std::string out = warden::reasoning::parse_answer(answer, catalog());
  check_proposal(out);
  const std::string form = warden::reasoning::normalized_action(out);
  if (form != warden::reasoning::normalized_action(out)) fail("normal form not stable", out);
  if (!tool_call) {
    Answer again;
    again.ok = true;
    again.text = out;
    const std::string out2 = warden::reasoning::parse_answer(again, catalog());
    if (out2 != out) fail("proposal read again differs", out + " vs " + out2);
  }
  return 0;
}
