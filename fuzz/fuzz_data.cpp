// libFuzzer target: the data file reader (rule authors' *.data.toml and *.data.json files,
// which the daemon loads on every reload, and whose strings rules compare with proposal
// strings). The first byte picks the format. Checks that nothing throws or crashes, that a
// refused file came with data error diagnostics carrying a line and added nothing, and that
// an accepted file holds only what rules can see: valid set names, strings of valid UTF-8
// without NUL within the length limit, each one found again by a lookup.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bindings/data_sets.h"
#include "bindings/text.h"
#include "engine/data_files.h"

namespace {

void fail(const char* what) {
  std::fprintf(stderr, "fuzz_data: %s\n", what);
  std::abort();
}

void check_string(const std::string& s) {
  if (s.find('\0') != std::string::npos) fail("an accepted string holds a NUL");
  if (!warden::text::valid_utf8(s)) fail("an accepted string is not UTF-8");
  if (s.size() > warden::kMaxDataStringBytes) fail("an accepted string is over the limit");
}

void check_name(const std::string& name) {
  if (name.empty() || name.size() > warden::kMaxDataSetName || name[0] < 'a' || name[0] > 'z')
    fail("an accepted set name is malformed");
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
      fail("an accepted set name holds another character");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool json = (data[0] & 1) != 0;
  const warden::RuleSource source{json ? "team/f.data.json" : "team/f.data.toml",
                                  std::string(reinterpret_cast<const char*>(data + 1), size - 1)};
  warden::DataSets sets;
  warden::Diagnostics diagnostics;
  const bool ok = warden::read_data_file(source, &sets, &diagnostics);
  bool error = false;
  for (const auto& d : diagnostics) {
    if (d.severity != warden::Severity::Error) continue;
    error = true;
    if (d.code != "E_DATA" && d.code != "E_DATA_VALUE" && d.code != "E_DATA_LIMIT")
      fail("a refusal with another code");
    if (d.line < 1) fail("a refusal without a line");
    if (d.file != source.path) fail("a refusal naming another file");
  }
  if (!ok) {
    if (!error) fail("a file refused without an error");
    if (!sets.sets().empty()) fail("a refused file added sets");
    return 0;
  }
  if (error) fail("a file accepted with an error");
  std::size_t entries = 0;
  for (const auto& [name, set] : sets.sets()) {
    check_name(name);
    bool known = false;
    for (const auto& v : set.members) {
      check_string(v);
      if (!sets.contains(name, v, &known) || !known) fail("a list value is not found");
    }
    for (const auto& [k, v] : set.map) {
      check_string(k);
      check_string(v);
      if (!sets.contains(name, k, &known) || !known) fail("a map key is not found");
    }
    entries += set.size();
  }
  if (entries > warden::kMaxDataEntries) fail("more entries than the limit");
  return 0;
}
