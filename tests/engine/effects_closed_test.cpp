// Tests for the closed-world reading of the effects table (engine/effects.h): options no spec
// lists are unknown effects, `harmless`, `other-options`, `input` / `no-input`, the `list`
// kind, `one-dash-long`, `harmless-match`, `safe-code`, a `-` program, words xargs appends,
// and the completeness warnings of the table checks.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/effects.h"

namespace warden {
namespace {

using V = std::vector<std::string>;

const char* const kClosedTable = R"toml(
[program.ls]
operands = ["read..."]
values = ["-w"]
harmless = ["-l", "-a", "-h", "--all", "--color"]

[program.uname]
operands = ["none..."]
other-options = "none"

[program.nproc]
operands = []

[program.git]
subcommands = true
harmless = ["--no-pager"]
[program.git.sub.log]
operands = ["read..."]
harmless = ["--oneline"]
values = ["-n"]

[program.sh]
aliases = ["yash"]
stop-at-operand = true
operands = ["exec", "none..."]
input = "exec-code"
no-input = ["--version"]
harmless = ["--version", "-x"]
[program.sh.options]
"-c" = "exec-code"

[program.make]
operands = []
[program.make.options]
"-f" = "exec"

[program.curl]
operands = ["network..."]
[program.curl.options]
"-K" = "list"
"--config" = "list"

[program.cat]
operands = ["read..."]

[program.emacs]
one-dash-long = true
operands = ["write..."]
harmless = ["-e", "--batch"]
[program.emacs.options]
"--eval" = "exec-code"
"-x" = "exec"

[program.cc]
single-dash = true
operands = ["read..."]
harmless = ["-c"]
harmless-match = '-(?:O[0-3]|W[a-z-]+)'
[program.cc.options]
"-o" = "write"

[program.gdb]
single-dash = true
operands = ["read..."]
harmless = ["-batch"]
input = "exec-code"
no-input = ["-batch"]
safe-code = '(?:bt|info [a-z]+)'
[program.gdb.options]
"-ex" = "exec-code"
)toml";

const EffectsTable& closed_table() {
  static std::shared_ptr<EffectsTable> t = [] {
    Diagnostics d;
    auto parsed = EffectsTable::parse(RuleSource{"closed.toml", kClosedTable}, &d);
    for (const auto& x : d) UNSCOPED_INFO(x.to_text());
    return parsed;
  }();
  REQUIRE(t);
  return *t;
}

// The effects of argv (one simple command, run in /w) as "kind object target via".
V closed_fx(V argv, V wrappers = {}) {
  shell::SimpleCommand c;
  c.program = argv.empty() ? "" : argv[0];
  c.argv = std::move(argv);
  c.wrappers = std::move(wrappers);
  std::vector<Effect> out;
  closed_table().effects_of(c, "/w", "/home/u", &out);
  V text;
  for (const Effect& e : out) {
    text.push_back(std::string(effect_kind_name(e.kind)) + " " +
                   std::string(effect_object_name(e.object)) + " " + e.target + " " + e.via);
  }
  return text;
}

Diagnostics warnings_of(const std::string& toml) {
  Diagnostics d;
  CHECK(EffectsTable::parse(RuleSource{"w.toml", toml}, &d) != nullptr);
  return d;
}

TEST_CASE("closed world: an option no spec lists is an unknown effect", "[effects][closed]") {
  CHECK(closed_fx({"ls", "--frobnicate", "src"}) ==
        V{"unknown none --frobnicate option", "read path /w/src operand"});
  CHECK(closed_fx({"ls", "--frobnicate=x"}) == V{"unknown none --frobnicate option"});
}

TEST_CASE("closed world: listed harmless options and values have no effect", "[effects][closed]") {
  CHECK(closed_fx({"ls", "-lah", "--all", "--color=always", "-w", "80", "src"}) ==
        V{"read path /w/src operand"});
}

TEST_CASE("closed world: each letter of a cluster is looked up", "[effects][closed]") {
  CHECK(closed_fx({"ls", "-laZ", "src"}) ==
        V{"unknown none -Z option", "read path /w/src operand"});
}

TEST_CASE("closed world: other-options none opts a reviewed program out", "[effects][closed]") {
  CHECK(closed_fx({"uname", "-a", "--processor", "-X"}).empty());
}

TEST_CASE("closed world: a sub's unlisted option is unknown, its parent's harmless ones are not",
          "[effects][closed]") {
  CHECK(closed_fx({"git", "--no-pager", "log", "--oneline", "-n", "5"}) == V{});
  CHECK(closed_fx({"git", "log", "--frobnicate"}) == V{"unknown none --frobnicate option"});
}

TEST_CASE("closed world: a short unknown long option (no abbreviation possible) is unknown",
          "[effects][closed]") {
  CHECK(closed_fx({"ls", "--ab"}) == V{"unknown none --ab option"});
}

TEST_CASE("input: a shell with no program named reads it from standard input",
          "[effects][closed]") {
  CHECK(closed_fx({"yash"}) == V{"exec code  input"});
  CHECK(closed_fx({"sh", "-x"}) == V{"exec code  input"});
  CHECK(closed_fx({"sh", "x.sh"}) == V{"exec path /w/x.sh operand"});
  CHECK(closed_fx({"sh", "-c", "id"}) == V{"exec code id -c"});
  CHECK(closed_fx({"sh", "--version"}).empty());
}

TEST_CASE("input: gdb in batch mode reads no commands; safe-code words are not code",
          "[effects][closed]") {
  CHECK(closed_fx({"gdb", "./app"}) == V{"read path /w/app operand", "exec code  input"});
  CHECK(closed_fx({"gdb", "-batch", "-ex", "bt", "./app"}) == V{"read path /w/app operand"});
  CHECK(closed_fx({"gdb", "-batch", "-ex", "info registers", "./app"}) ==
        V{"read path /w/app operand"});
  CHECK(closed_fx({"gdb", "-batch", "-ex", "shell id", "./app"}) ==
        V{"exec code shell id -ex", "read path /w/app operand"});
  // safe-code is a full match: a read-only command followed by another is code
  CHECK(closed_fx({"gdb", "-batch", "-ex", "bt\nshell id"}) == V{"exec code bt\nshell id -ex"});
}

TEST_CASE("a program read from standard input through an exec option is code",
          "[effects][closed]") {
  CHECK(closed_fx({"make", "-f", "-"}) == V{"exec code - -f"});
  CHECK(closed_fx({"make", "-f", "Makefile.ci"}) == V{"exec path /w/Makefile.ci -f"});
}

TEST_CASE("list kind: the list file is read and what it names is unknown", "[effects][closed]") {
  CHECK(closed_fx({"curl", "-K", "cfg.txt"}) == V{"read path /w/cfg.txt -K", "unknown none -K -K"});
  CHECK(closed_fx({"curl", "--config=-"}) == V{"unknown none --config --config"});
}

TEST_CASE("xargs: words appended at run time are unknown unless the program's operands are data",
          "[effects][closed]") {
  CHECK(closed_fx({"cat"}, {"xargs"}) == V{"unknown none xargs wrapper"});
  CHECK(closed_fx({"uname"}, {"xargs"}).empty());
  CHECK(closed_fx({"nproc"}, {"xargs"}) == V{"unknown none xargs wrapper"});
}

TEST_CASE("operands the spec does not describe are unknown, not data", "[effects][closed]") {
  // `operands = []`: the program takes none; a word there is not accounted for.
  CHECK(closed_fx({"nproc"}).empty());
  CHECK(closed_fx({"nproc", "/etc/shadow"}) == V{"unknown none  operand"});
  // "none..." says every operand is data.
  CHECK(closed_fx({"uname", "/etc/shadow", "x"}).empty());
  // Past the listed positions: `cat` lists "read..." (repeats), `git log` too; a spec
  // with fixed positions leaves the rest unknown (effects_test: git clone URL DIR EXTRA).
  CHECK(closed_fx({"cat", "a", "b"}) == V{"read path /w/a operand", "read path /w/b operand"});
}

TEST_CASE("one-dash-long: -eval is --eval, other one-dash words are clusters",
          "[effects][closed]") {
  CHECK(closed_fx({"emacs", "-eval", "(kill-emacs)"}) == V{"exec code (kill-emacs) --eval"});
  CHECK(closed_fx({"emacs", "--batch", "-e"}).empty());
  CHECK(closed_fx({"emacs", "-ex", "f.el"}) == V{"exec path /w/f.el -x"});
}

TEST_CASE("harmless-match: whole option words of a family are harmless", "[effects][closed]") {
  CHECK(closed_fx({"cc", "-O2", "-Wall", "-Wno-unused", "-c", "a.c", "-o", "a.o"}) ==
        V{"write path /w/a.o -o", "read path /w/a.c operand"});
  CHECK(closed_fx({"cc", "-Wl,-T,x.ld", "a.c"}) ==
        V{"unknown none -Wl,-T,x.ld option", "read path /w/a.c operand"});
}

TEST_CASE("table format: new keys are checked", "[effects][closed]") {
  Diagnostics d;
  CHECK(EffectsTable::parse(RuleSource{"b.toml", "[program.a]\nother-options = \"maybe\"\n"}, &d) ==
        nullptr);
  REQUIRE(d.size() == 1);
  CHECK(d[0].code == code::kEffectsTable);
  CHECK(d[0].line == 2);
  d.clear();
  CHECK(EffectsTable::parse(RuleSource{"b.toml", "[program.a]\ninput = \"read\"\n"}, &d) ==
        nullptr);
  REQUIRE(d.size() == 1);
  CHECK(d[0].line == 2);
  d.clear();
  CHECK(EffectsTable::parse(RuleSource{"b.toml", "[program.a]\nharmless-match = '('\n"}, &d) ==
        nullptr);
  REQUIRE(d.size() == 1);
  CHECK(d[0].line == 2);
  d.clear();
  CHECK(EffectsTable::parse(RuleSource{"b.toml", "[program.a.flags]\n\"-x\" = \"list\"\n"}, &d) ==
        nullptr);
  REQUIRE(d.size() == 1);
  CHECK(d[0].line == 2);
}

TEST_CASE("table checks: an option without effect named like a file or code warns",
          "[effects][closed]") {
  Diagnostics d =
      warnings_of("[program.a]\noperands = []\nvalues = [\"-f\", \"--config\", \"-n\"]\n");
  REQUIRE(d.size() == 2);
  for (const auto& w : d) {
    CHECK(w.severity == Severity::Warning);
    CHECK(w.code == code::kEffectsTable);
    CHECK(w.line == 3);
  }
  CHECK(d[0].message.find("\"-f\"") != std::string::npos);
  CHECK(d[1].message.find("\"--config\"") != std::string::npos);
  CHECK(
      warnings_of("[program.a]\noperands = []\nvalues = [\"-f\"]\nreviewed = [\"-f\"]\n").empty());
  CHECK(
      warnings_of("[program.a]\noperands = []\n[program.a.options]\n\"-f\" = \"read\"\n").empty());
}

TEST_CASE("table checks: a runner subcommand without exec effect warns", "[effects][closed]") {
  Diagnostics d = warnings_of(
      "[program.a]\nsubcommands = true\n[program.a.sub.exec]\noperands = [\"none...\"]\n");
  REQUIRE(d.size() == 1);
  CHECK(d[0].severity == Severity::Warning);
  CHECK(d[0].line == 3);
  CHECK(d[0].message.find("\"exec\"") != std::string::npos);
  CHECK(
      warnings_of("[program.a]\nsubcommands = true\n[program.a.sub.exec]\nstop-at-operand = true\n"
                  "operands = [\"exec-program\", \"none...\"]\n")
          .empty());
}

TEST_CASE("table checks: an interpreter silent about standard input warns", "[effects][closed]") {
  Diagnostics d =
      warnings_of("[program.a]\nstop-at-operand = true\noperands = [\"exec\", \"none...\"]\n");
  REQUIRE(d.size() == 1);
  CHECK(d[0].line == 1);
  CHECK(warnings_of("[program.a]\nstop-at-operand = true\noperands = [\"exec\", "
                    "\"none...\"]\ninput = \"exec-code\"\n")
            .empty());
}

}  // namespace
}  // namespace warden
