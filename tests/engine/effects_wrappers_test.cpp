// The options of the wrappers the shell parser unwraps are known twice: the parser reads them
// to find the wrapped command (bindings/shell_parser.cpp, kWrapperOptions), and the shipped
// effects table lists them for a wrapper's bare call (`sudo -l`, `nice -n 5`: rules/
// effects.toml). Which options take a value must agree, or a value is read as an operand on
// one side and skipped on the other. This test compares the two lists: an option added to one
// side only fails here, naming the side that lacks it. The differences known today are listed
// below, each with what it costs; fixing one removes it from the list.
// Run with: engine_tests "[effects_wrappers]".
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "bindings/shell_internal.h"
#include "engine/effects.h"
#include "engine/effects_spec.h"
#include "tests/build_paths.h"

namespace warden {
namespace {

using shell::detail::WrapperOptions;

// The options of `w` that take a value (a command string included), written as the effects
// table writes them: "-u", "--user".
std::set<std::string> parser_value_options(const WrapperOptions& w) {
  std::set<std::string> out;
  for (char c : w.short_val) out.insert(std::string("-") + c);
  for (std::string_view l : w.long_val) out.insert("--" + std::string(l));
  if (w.command != 0) out.insert(std::string("-") + w.command);
  for (std::string_view l : w.command_long) out.insert("--" + std::string(l));
  return out;
}

// The options of a table entry that take a value (`values` and `options`).
std::set<std::string> table_value_options(const EffectsTable::Program& p) {
  std::set<std::string> out;
  for (const effects_spec::Option& o : p.spec.options) {
    if (o.takes_value) out.insert(o.name);
  }
  return out;
}

// One difference: `option` of the table entry `entry` takes a value on one side only.
struct WrapperOptionDifference {
  std::string entry;
  std::string option;
  bool parser_only;  // true: the parser skips its value, the table reads it as an operand
  bool operator<(const WrapperOptionDifference& o) const {
    return std::tie(entry, option, parser_only) < std::tie(o.entry, o.option, o.parser_only);
  }
};

// The differences known today, by table entry: the options only the parser reads a value
// of, and those only the table does. Each matters to a bare call of the wrapper (nothing
// wrapped, or a flag that stops the unwrapping: `ionice -P 12`, `parallel … :::: FILE`),
// the only call the table's entry sees:
//  - parser only: the table reads the option's value as an operand (`ionice -P 12`: an
//    unknown option and "12" an exec-program operand), more effects than there are;
//  - table only: the table takes the word after the option for its value, where the parser
//    reads it as an operand (a flag, or an option whose value can only be attached:
//    `parallel --tag`, `xargs --max-lines[=N]`, `watch -d[=permanent]`).
// The `nice` entry is shared by nice, ionice, nohup, builtin, stdbuf and time, `nsenter` by
// nsenter and unshare, `taskset` by taskset and chrt: each is held against the union.
struct KnownWrapperDifferences {
  std::string_view entry;
  std::string_view parser_only;  // space-separated
  std::string_view table_only;
};
constexpr KnownWrapperDifferences kKnownDifferences[] = {
    {"nice", "-P -u --classdata --pgid --uid", ""},  // ionice's
    {"nsenter",
     "-N -R -W -l -w --boottime --load-interp --map-group --map-groups --map-user --map-users "
     "--monotonic --net-socket --propagation --root --setgroups --wd --wdns",
     ""},
    {"parallel",
     "-B -C -D -E -H -I -J -L -P -U -W -e -i -l -s --arg-file-sep --arg-sep --argfile "
     "--argfilesep --argsep --basefile --basenameextensionreplace --basenamereplace --bf "
     "--bin --block --block-size --block-timeout --blocksize --blocktimeout --bner --bnr "
     "--bt --col-sep --compress-program --compressprogram --ctag-string --ctagstring "
     "--debug --decompress-program --decompressprogram --delay --dirnamereplace --dnr "
     "--env --eof --er --extensionreplace --filter --group-by --groupby --halt-on-error "
     "--haltonerror --header --id --jl --limit --linkinputsource --load --max-chars "
     "--max-lines --max-procs --max-replace-args --maxargs --maxchars --maxlines "
     "--maxprocs --maxreplaceargs --memfree --memsuspend --min-version --minversion "
     "--nice --parens --process-slot-var --processslotvar --profile --recend --recstart "
     "--replace --res --result --retries --return --rpl --rsync-opts --rsyncopts "
     "--semaphore-name --semaphore-timeout --semaphorename --semaphoretimeout "
     "--seqreplace --shard --shell-completion --shellcompletion --slf --slotreplace --sql "
     "--sql-and-worker --sql-master --sql-worker --sqlandworker --sqlmaster --sqlworker "
     "--ssh --ssh-delay --sshdelay --sshloginfile --st --tag-string --tempdir --template "
     "--term-seq --termseq --tf --tmpl --total --total-jobs --totaljobs --transfer-file "
     "--transfer-files --transferfile --transferfiles --trc --trim --use-compress-program "
     "--use-decompress-program --usecompressprogram --usedecompressprogram --wd "
     "--work-dir --workdir --xapplyinputsource",
     "--tag"},
    {"runuser", "--session-command", ""},
    {"script", "-o --output-limit", ""},
    {"taskset", "-D -P -T --sched-deadline --sched-period --sched-runtime", ""},  // chrt's
    {"watch", "--shotsdir", "-d --differences"},
    {"xargs", "", "--max-lines"},
};

std::set<WrapperOptionDifference> known_wrapper_differences() {
  std::set<WrapperOptionDifference> out;
  auto add = [&](std::string_view entry, std::string_view options, bool parser_only) {
    std::istringstream words{std::string(options)};
    for (std::string option; words >> option;)
      out.insert({std::string(entry), option, parser_only});
  };
  for (const KnownWrapperDifferences& k : kKnownDifferences) {
    add(k.entry, k.parser_only, true);
    add(k.entry, k.table_only, false);
  }
  return out;
}

// Wrappers the parser unwraps that the table has no entry for: a bare call is an unknown
// program.
const std::set<std::string> kWithoutEntry = {"sshpass"};

std::shared_ptr<EffectsTable> shipped_effects_table() {
  std::ifstream in(WARDEN_SOURCE_DIR "/rules/effects.toml");
  std::stringstream text;
  text << in.rdbuf();
  Diagnostics diagnostics;
  auto table = EffectsTable::parse(RuleSource{"rules/effects.toml", text.str()}, &diagnostics);
  REQUIRE(diagnostics.empty());
  REQUIRE(table != nullptr);
  return table;
}

TEST_CASE("the effects table and the shell parser agree on which wrapper options take a value",
          "[effects_wrappers]") {
  const auto table = shipped_effects_table();
  // Each table entry with the union of its wrappers' options, as the parser reads them.
  std::map<const EffectsTable::Program*, std::set<std::string>> parser_side;
  std::set<std::string> without_entry;
  for (const WrapperOptions& w : shell::detail::wrapper_options()) {
    const EffectsTable::Program* entry = table->find(w.program);
    if (entry == nullptr) {
      without_entry.insert(std::string(w.program));
      continue;
    }
    parser_side[entry].merge(parser_value_options(w));
  }
  CHECK(without_entry == kWithoutEntry);

  const std::set<WrapperOptionDifference> known = known_wrapper_differences();
  std::set<WrapperOptionDifference> differences;
  for (const auto& [entry, parser] : parser_side) {
    const std::set<std::string> listed = table_value_options(*entry);
    for (const std::string& o : parser) {
      if (!listed.count(o)) differences.insert({entry->name, o, true});
    }
    for (const std::string& o : listed) {
      if (!parser.count(o)) differences.insert({entry->name, o, false});
    }
  }
  for (const WrapperOptionDifference& d : differences) {
    INFO("[program." << d.entry << "] " << d.option << ": "
                     << (d.parser_only ? "the parser reads a value, the table does not"
                                       : "the table reads a value, the parser does not"));
    CHECK(known.count(d) == 1);
  }
  for (const WrapperOptionDifference& d : known) {
    INFO("[program." << d.entry << "] " << d.option << ": listed as a difference, there is none");
    CHECK(differences.count(d) == 1);
  }
}

TEST_CASE("the parser's wrapper options are sorted by program and name no option twice",
          "[effects_wrappers]") {
  const auto all = shell::detail::wrapper_options();
  REQUIRE(!all.empty());
  for (std::size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].program < all[i].program);
  for (const WrapperOptions& w : all) {
    INFO(w.program);
    const std::set<char> shorts(w.short_val.begin(), w.short_val.end());
    CHECK(shorts.size() == w.short_val.size());
    const std::set<std::string_view> longs(w.long_val.begin(), w.long_val.end());
    CHECK(longs.size() == w.long_val.size());
    for (char c : w.short_opt) CHECK(shorts.count(c) == 0);  // a value attached only
  }
}

}  // namespace
}  // namespace warden
