// Tests for the tool entries of the effects table (engine/effects.h, [tool.*]): parsing with
// its errors (E_EFFECTS_TABLE at file and line), lookup ("SERVER/TOOL" before "TOOL"), and
// the effects of a call's arguments, including the fail-closed `unknown` effects.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/effects.h"

namespace warden {
namespace {

const char* const kToolCwd = "/home/user/project";
const char* const kToolHome = "/home/user";

const char* const kToolTable = R"toml(
[program.cat]
operands = ["read..."]

[tool.read_text_file]
read = ["path"]
none = ["head", "tail"]

[tool."other/read_text_file"]
none = ["path"]

[tool.read_multiple_files]
read = ["paths"]

[tool.move_file]
read = ["source"]
delete = ["source"]
write = ["destination"]

[tool.nested]
write = ["options.target"]

[tool.runner]
exec-program = ["command"]
exec-code = ["script"]
network = ["url"]

[tool.list_allowed_directories]

[tool.search]
none = ["query", "options.limit"]

[tool.apply_patch]
patch = ["command"]
)toml";

std::shared_ptr<EffectsTable> parse_tool_text(const std::string& text, Diagnostics* d,
                                              const std::string& file = "t.toml") {
  return EffectsTable::parse(RuleSource{file, text}, d);
}

std::shared_ptr<EffectsTable> tool_table() {
  Diagnostics d;
  auto t = parse_tool_text(kToolTable, &d);
  for (const auto& x : d) UNSCOPED_INFO(x.to_text());
  REQUIRE(t);
  return t;
}

// "KIND OBJECT TARGET VIA" per effect, for short comparisons.
std::vector<std::string> tool_effects_of(const EffectsTable& t, const std::string& server,
                                         const std::string& tool, const char* args_json) {
  rapidjson::Document doc;
  const rapidjson::Value* args = nullptr;
  if (args_json != nullptr) {
    doc.Parse(args_json);
    REQUIRE_FALSE(doc.HasParseError());
    args = &doc;
  }
  std::vector<Effect> out;
  t.tool_effects(server, tool, args, kToolCwd, kToolHome, &out);
  std::vector<std::string> lines;
  for (const Effect& e : out) {
    CHECK(e.program == tool);
    lines.push_back(std::string(effect_kind_name(e.kind)) + " " +
                    std::string(effect_object_name(e.object)) + " " + e.target + " " + e.via);
  }
  return lines;
}

using V = std::vector<std::string>;

TEST_CASE("tool effects: a path argument, relative to the workspace", "[tool-effects]") {
  auto t = tool_table();
  CHECK(tool_effects_of(*t, "fs", "read_text_file", R"({"path": ".env"})") ==
        V{"read path /home/user/project/.env payload.args.path"});
  CHECK(tool_effects_of(*t, "", "read_text_file", R"({"path": "~/.ssh/id_rsa"})") ==
        V{"read path /home/user/.ssh/id_rsa payload.args.path"});
  CHECK(
      tool_effects_of(*t, "fs", "read_text_file", R"({"path": "/etc/../etc/hosts", "head": 3})") ==
      V{"read path /etc/hosts payload.args.path"});
}

TEST_CASE("tool effects: the exact server entry wins over the bare tool name", "[tool-effects]") {
  auto t = tool_table();
  CHECK(tool_effects_of(*t, "other", "read_text_file", R"({"path": ".env"})").empty());
  CHECK(t->knows_tool("other", "read_text_file"));
  CHECK(t->knows_tool("fs", "read_text_file"));
  CHECK_FALSE(t->knows_tool("fs", "write_file"));
}

TEST_CASE("tool effects: an array of strings gives one effect per element", "[tool-effects]") {
  auto t = tool_table();
  CHECK(
      tool_effects_of(*t, "fs", "read_multiple_files", R"({"paths": ["a.txt", "/etc/passwd"]})") ==
      V{"read path /home/user/project/a.txt payload.args.paths",
        "read path /etc/passwd payload.args.paths"});
  CHECK(tool_effects_of(*t, "fs", "read_multiple_files", R"({"paths": []})").empty());
}

TEST_CASE("tool effects: several kinds of one argument, in table order", "[tool-effects]") {
  auto t = tool_table();
  CHECK(tool_effects_of(*t, "fs", "move_file", R"({"source": "a", "destination": "/tmp/b"})") ==
        V{"read path /home/user/project/a payload.args.source",
          "delete path /home/user/project/a payload.args.source",
          "write path /tmp/b payload.args.destination"});
}

TEST_CASE("tool effects: a dotted argument name reaches into objects", "[tool-effects]") {
  auto t = tool_table();
  CHECK(tool_effects_of(*t, "", "nested", R"({"options": {"target": "out.txt"}})") ==
        V{"write path /home/user/project/out.txt payload.args.options.target"});
}

TEST_CASE("tool effects: programs, code and hosts", "[tool-effects]") {
  auto t = tool_table();
  CHECK(
      tool_effects_of(
          *t, "", "runner",
          R"j({"command": "/usr/bin/curl -s x", "script": "print(1)", "url": "https://Example.COM:8443/x"})j") ==
      V{"exec program curl payload.args.command", "exec code print(1) payload.args.script",
        "network host example.com payload.args.url"});
  // A file: URL or a local path is a read of that file.
  CHECK(tool_effects_of(*t, "", "runner",
                        R"({"command": "ls", "script": "x", "url": "file:///etc/shadow"})")[2] ==
        "read path /etc/shadow payload.args.url");
}

TEST_CASE("tool effects: an unknown tool has one unknown effect", "[tool-effects]") {
  auto t = tool_table();
  CHECK(tool_effects_of(*t, "fs", "frobnicate", R"({"path": "x"})") ==
        V{"unknown program frobnicate payload.tool"});
  CHECK(tool_effects_of(*t, "", "frobnicate", nullptr) ==
        V{"unknown program frobnicate payload.tool"});
}

TEST_CASE("tool effects: a known tool without effects has none", "[tool-effects]") {
  auto t = tool_table();
  CHECK(tool_effects_of(*t, "fs", "list_allowed_directories", R"({})").empty());
  CHECK(tool_effects_of(*t, "fs", "list_allowed_directories", nullptr).empty());
}

TEST_CASE("tool effects: a missing or non-text argument is unknown (fail closed)",
          "[tool-effects]") {
  auto t = tool_table();
  const V unknown{"unknown program read_text_file payload.args.path"};
  CHECK(tool_effects_of(*t, "fs", "read_text_file", R"({})") == unknown);
  CHECK(tool_effects_of(*t, "fs", "read_text_file", nullptr) == unknown);
  CHECK(tool_effects_of(*t, "fs", "read_text_file", R"({"path": null})") == unknown);
  CHECK(tool_effects_of(*t, "fs", "read_text_file", R"({"path": 3})") == unknown);
  CHECK(tool_effects_of(*t, "fs", "read_text_file", R"({"path": {"p": "x"}})") == unknown);
  CHECK(tool_effects_of(*t, "fs", "read_text_file", R"(["x"])") == unknown);
  CHECK(tool_effects_of(*t, "fs", "read_multiple_files", R"({"paths": ["a", 1]})") ==
        V{"unknown program read_multiple_files payload.args.paths"});
  CHECK(tool_effects_of(*t, "", "nested", R"({"options": "x"})") ==
        V{"unknown program nested payload.args.options.target"});
}

TEST_CASE("tool effects: a patch writes and deletes the files it names", "[tool-effects]") {
  auto t = tool_table();
  CHECK(
      tool_effects_of(
          *t, "", "apply_patch",
          R"({"command": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b.txt  \n*** Move to: /tmp/c.txt\n@@\n-y\n+z\n*** Delete File: d.txt\n*** End Patch\n"})") ==
      V{"write path /home/user/project/a.txt payload.args.command",
        "write path /home/user/project/b.txt payload.args.command",
        "write path /tmp/c.txt payload.args.command",
        "delete path /home/user/project/b.txt payload.args.command",
        "delete path /home/user/project/d.txt payload.args.command"});
  // A patch line inside the added text is data: only lines starting with the markers count.
  CHECK(tool_effects_of(
            *t, "", "apply_patch",
            R"({"command": "*** Begin Patch\n*** Add File: a\n+*** Add File: /etc/x\n"})") ==
        V{"write path /home/user/project/a payload.args.command"});
  // Naming no file: not known.
  CHECK(tool_effects_of(*t, "", "apply_patch", R"({"command": "rm -rf /"})") ==
        V{"unknown program apply_patch payload.args.command"});
  CHECK(tool_effects_of(*t, "", "apply_patch", R"({"command": "*** Add File: \n"})") ==
        V{"unknown program apply_patch payload.args.command"});
}

TEST_CASE("tool effects: an argument the entry does not name is unknown (closed world)",
          "[tool-effects]") {
  auto t = tool_table();
  // A registered tool's other arguments: a URL, a key, a command are not known to be data.
  CHECK(tool_effects_of(*t, "", "search",
                        R"({"query": "x", "url": "http://169.254.169.254/latest/meta-data/"})") ==
        V{"unknown program search payload.args.url"});
  CHECK(tool_effects_of(*t, "", "search", R"({"query": "x", "path": "~/.ssh/id_rsa"})") ==
        V{"unknown program search payload.args.path"});
  CHECK(tool_effects_of(*t, "fs", "read_text_file",
                        R"({"path": "a", "head": 3, "file": "/etc/shadow"})") ==
        V{"read path /home/user/project/a payload.args.path",
          "unknown program read_text_file payload.args.file"});
  CHECK(tool_effects_of(*t, "fs", "list_allowed_directories", R"({"path": "/"})") ==
        V{"unknown program list_allowed_directories payload.args.path"});
  // Below a dotted name: only the named members are covered.
  CHECK(tool_effects_of(*t, "", "search",
                        R"({"query": "x", "options": {"limit": 3, "proxy": "http://10.0.0.1"}})") ==
        V{"unknown program search payload.args.options.proxy"});
  CHECK(tool_effects_of(*t, "", "nested", R"({"options": {"target": "o", "mode": "x"}})") ==
        V{"write path /home/user/project/o payload.args.options.target",
          "unknown program nested payload.args.options.mode"});
  // A member name holding a dot is not the dotted argument.
  CHECK(tool_effects_of(*t, "", "search", R"({"query": "x", "options.limit": "y"})") ==
        V{"unknown program search payload.args.options.limit"});
  // `none` arguments are data of any shape, and may be absent.
  CHECK(
      tool_effects_of(*t, "", "search", R"({"query": {"q": ["a", 1]}, "options": {"limit": null}})")
          .empty());
  CHECK(tool_effects_of(*t, "", "search", R"({})").empty());
  CHECK(tool_effects_of(*t, "", "search", nullptr).empty());
  // Arguments that are not an object: one unknown effect.
  CHECK(tool_effects_of(*t, "", "search", R"(["~/.ssh/id_rsa"])") ==
        V{"unknown program search payload.args"});
  CHECK(tool_effects_of(*t, "", "search", R"("x")") == V{"unknown program search payload.args"});
}

// ---------------------------------------------------------------- parse errors

void expect_error(const std::string& toml, const std::string& part, long line) {
  Diagnostics d;
  auto t = parse_tool_text(toml, &d);
  CHECK(t == nullptr);
  for (const auto& x : d) UNSCOPED_INFO(x.to_text());
  REQUIRE(d.size() == 1);
  CHECK(d[0].code == "E_EFFECTS_TABLE");
  CHECK(d[0].file == "t.toml");
  CHECK(d[0].line == line);
  CHECK(d[0].message.find(part) != std::string::npos);
}

TEST_CASE("tool table error: an unknown kind", "[tool-effects]") {
  expect_error("[tool.a]\nread = [\"path\"]\nreads = [\"x\"]\n", "unknown key \"reads\"", 3);
  expect_error("[tool.a]\ncwd = [\"path\"]\n", "unknown key \"cwd\"", 2);
  expect_error("[tool.a]\nunknown = [\"path\"]\n", "unknown key \"unknown\"", 2);
  expect_error("[tool.a]\nenv-dump = [\"path\"]\n", "unknown key \"env-dump\"", 2);
}

TEST_CASE("tool table error: not an array of strings", "[tool-effects]") {
  expect_error("[tool.a]\nread = \"path\"\n", "must be an array of strings", 2);
  expect_error("[tool.a]\n\nread = [\"path\", 3]\n", "must be an array of strings", 3);
}

TEST_CASE("tool table error: bad argument names", "[tool-effects]") {
  expect_error("[tool.a]\nread = [\"\"]\n", "is not an argument name", 2);
  expect_error("[tool.a]\nread = [\"a..b\"]\n", "is not an argument name", 2);
  expect_error("[tool.a]\nread = [\"a b\"]\n", "is not an argument name", 2);
  expect_error("[tool.a]\nread = [\"p\", \"p\"]\n", "listed twice", 2);
}

TEST_CASE("tool table error: bad tool names", "[tool-effects]") {
  expect_error("[tool.\"a/b/c\"]\n", "is not a tool name", 1);
  expect_error("[tool.\"/b\"]\n", "is not a tool name", 1);
  expect_error("[tool.\"a b\"]\n", "is not a tool name", 1);
  expect_error("[tool.a]\n[tool.x]\nread = [\"p\"]\n[tool.a.more]\n", "unknown key \"more\"", 4);
  expect_error("tool = 3\n", "must hold [tool.NAME] tables", 1);
}

TEST_CASE("tool table: a tools-only table parses; merge refuses a tool in both", "[tool-effects]") {
  Diagnostics d;
  auto a = parse_tool_text("[tool.a]\nread = [\"p\"]\n", &d, "a.toml");
  auto b = parse_tool_text("\n[tool.b]\n[tool.a]\nwrite = [\"p\"]\n", &d, "b.toml");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->tool_count() == 1);
  CHECK_FALSE(a->merge(*b, &d));
  REQUIRE(d.size() == 1);
  CHECK(d[0].file == "b.toml");
  CHECK(d[0].line == 3);
  CHECK(d[0].message.find("a.toml:1") != std::string::npos);
  CHECK_FALSE(a->knows_tool("", "b"));
}

}  // namespace
}  // namespace warden
