// Tests for the file actuator on real files in a temporary root: read, write, append,
// delete; `..`, symlink, absolute-path and hard-link escapes refused (by openat2 and by the
// component walk used without it); size caps. Run with: actuators_tests "[file]".
#include "actuators/file.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "engine/json_writer.h"
#include "tests/actuators/workspace.h"

using namespace warden::actuators;
using warden::json_string;
using warden::testing::read_file;
using warden::testing::TempDir;
using warden::testing::write_file;

namespace {

std::string file_action(const std::string& verb, const std::string& path,
                        const std::string* content = nullptr) {
  std::string json = R"({"target":"file","action":)" + json_string(verb) +
                     R"(,"payload":{"action":)" + json_string(verb) + R"(,"path":)" +
                     json_string(path);
  if (content) json += ",\"content\":" + json_string(*content);
  return json + "}}";
}

FileConfig root_at(const TempDir& dir) {
  FileConfig c;
  c.root = dir.str();
  return c;
}

}  // namespace

TEST_CASE("file reads, writes, appends and deletes beneath the root", "[file]") {
  TempDir root;
  const Resolve how = GENERATE(Resolve::Auto, Resolve::Walk);
  FileActuator file(root_at(root), false, how);
  std::filesystem::create_directories(root / "docs");
  std::string hello = "hello\n", more = "more\n";
  Result w = file.act(file_action("write", "docs/a.txt", &hello), Context{});
  REQUIRE(w.ok);
  CHECK(read_file(root / "docs/a.txt") == "hello\n");
  Result a = file.act(file_action("append", root / "docs/a.txt", &more), Context{});
  REQUIRE(a.ok);
  Result r = file.act(file_action("read", "./docs//a.txt"), Context{});
  REQUIRE(r.ok);
  CHECK(r.output == "hello\nmore\n");
  CHECK_FALSE(r.truncated);
  Result shorter = file.act(file_action("write", "docs/a.txt", &more), Context{});
  REQUIRE(shorter.ok);
  CHECK(read_file(root / "docs/a.txt") == "more\n");
  Result d = file.act(file_action("delete", "docs/a.txt"), Context{});
  REQUIRE(d.ok);
  CHECK_FALSE(std::filesystem::exists(root / "docs/a.txt"));
  Result gone = file.act(file_action("read", "docs/a.txt"), Context{});
  CHECK_FALSE(gone.ok);
  CHECK(gone.error_code == "E_ACT_FAILED");
  CHECK(gone.error.find("ENOENT") != std::string::npos);
}

TEST_CASE("file: '..' and symlink escapes fail at the system call", "[file]") {
  TempDir root, outside;
  const Resolve how = GENERATE(Resolve::Auto, Resolve::Walk);
  FileActuator file(root_at(root), false, how);
  write_file(outside / "secret", "outside secret\n");
  std::filesystem::create_directories(root / "sub");
  std::filesystem::create_symlink(outside / "secret", root / "link-to-secret");
  std::filesystem::create_directory_symlink(outside.str(), root / "sub/link-dir");
  std::string evil = "overwritten\n";

  struct Case {
    std::string path;
    const char* errno_name;
  };
  const std::string up =
      "../" + std::filesystem::path(outside.str()).filename().string() + "/secret";
  for (const Case& c :
       {Case{up, "EXDEV"}, Case{"sub/../../x", "EXDEV"}, Case{"link-to-secret", "ELOOP"},
        Case{"sub/link-dir/secret", "ELOOP"}, Case{root / "sub/link-dir/secret", "ELOOP"}}) {
    INFO(c.path);
    for (const char* verb : {"read", "write", "append"}) {
      INFO(verb);
      Result r = file.act(file_action(verb, c.path, std::string(verb) == "read" ? nullptr : &evil),
                          Context{});
      CHECK_FALSE(r.ok);
      CHECK(r.error_code == "E_ACT_DENIED");
      CHECK(r.error.find(c.errno_name) != std::string::npos);
    }
  }
  Result del = file.act(file_action("delete", "sub/link-dir/secret"), Context{});
  INFO(del.error);
  CHECK(del.error_code == "E_ACT_DENIED");
  CHECK(read_file(outside / "secret") == "outside secret\n");
}

TEST_CASE("file: an absolute path outside the root is refused", "[file]") {
  TempDir root, outside;
  FileActuator file(root_at(root), false);
  write_file(outside / "x", "x");
  for (std::string path : {std::string("/etc/passwd"), outside / "x", root.str() + "-sibling/x"}) {
    INFO(path);
    Result r = file.act(file_action("read", path), Context{});
    CHECK_FALSE(r.ok);
    CHECK(r.error_code == "E_ACT_DENIED");
    CHECK(r.error.find("outside the root") != std::string::npos);
  }
}

TEST_CASE("file: a hard link and a non-regular file are refused", "[file]") {
  TempDir root, outside;
  FileActuator file(root_at(root), false);
  write_file(outside / "secret", "outside secret\n");
  std::error_code ec;
  std::filesystem::create_hard_link(outside / "secret", root / "hard", ec);
  if (!ec) {
    Result r = file.act(file_action("read", "hard"), Context{});
    CHECK(r.error_code == "E_ACT_DENIED");
    CHECK(r.error.find("hard links") != std::string::npos);
    std::string evil = "x";
    CHECK(file.act(file_action("write", "hard", &evil), Context{}).error_code == "E_ACT_DENIED");
    CHECK(read_file(outside / "secret") == "outside secret\n");
  } else {
    FAIL("cannot create a hard link in the temporary directory: " << ec.message());
  }
  std::filesystem::create_directories(root / "dir");
  CHECK(file.act(file_action("read", "dir"), Context{}).error_code == "E_ACT_DENIED");
}

TEST_CASE("file: reads and writes are capped", "[file]") {
  TempDir root;
  FileConfig c = root_at(root);
  c.max_read_bytes = 10;
  c.max_write_bytes = 8;
  FileActuator file(c, false);
  write_file(root / "big", std::string(100, 'x'));
  Result r = file.act(file_action("read", "big"), Context{});
  REQUIRE(r.ok);
  CHECK(r.output == std::string(10, 'x'));
  CHECK(r.truncated);
  std::string nine = "123456789";
  Result w = file.act(file_action("write", "small", &nine), Context{});
  CHECK(w.error_code == "E_ACT_TOO_LARGE");
  CHECK_FALSE(std::filesystem::exists(root / "small"));
}

TEST_CASE("file: malformed actions are refused", "[file]") {
  TempDir root;
  FileActuator file(root_at(root), false);
  CHECK(file.act(R"({"target":"file","payload":{"path":"a"}})", Context{}).error_code ==
        "E_ACT_BAD_ACTION");
  CHECK(file.act(R"({"target":"file","payload":{"action":"chmod","path":"a"}})", Context{})
            .error_code == "E_ACT_BAD_ACTION");
  CHECK(file.act(R"({"target":"file","action":"read","payload":{"action":"delete","path":"a"}})",
                 Context{})
            .error_code == "E_ACT_BAD_ACTION");
  CHECK(file.act(R"({"target":"file","payload":{"action":"write","path":"a"}})", Context{})
            .error_code == "E_ACT_BAD_ACTION");
  CHECK(file.act(R"({"target":"file","payload":{"action":"read","path":"a","PATH":"/etc/passwd"}})",
                 Context{})
            .error_code == "E_ACT_BAD_ACTION");
  CHECK(file.act(R"({"target":"file","payload":{"action":"delete","path":".."}})", Context{})
            .error_code == "E_ACT_BAD_ACTION");
  Result top =
      file.act(R"({"target":"file","action":"read","payload":{"path":"missing"}})", Context{});
  CHECK(top.error_code == "E_ACT_FAILED");  // the top-level action names the operation
}

TEST_CASE("file: a relative path is read against payload.cwd, as the rules read it", "[file]") {
  TempDir root, outside;
  FileActuator file(root_at(root), false);
  write_file(root / "sub/a.txt", "in sub\n");
  write_file(root / "a.txt", "at root\n");
  Result r = file.act(R"({"target":"file","payload":{"action":"read","path":"a.txt","cwd":"sub"}})",
                      Context{});
  REQUIRE(r.ok);
  CHECK(r.output == "in sub\n");
  Result abs = file.act(R"({"target":"file","payload":{"action":"read","path":"a.txt","cwd":)" +
                            json_string(root / "sub") + "}}",
                        Context{});
  REQUIRE(abs.ok);
  CHECK(abs.output == "in sub\n");
  Result out = file.act(R"({"target":"file","payload":{"action":"read","path":"x","cwd":)" +
                            json_string(outside.str()) + "}}",
                        Context{});
  CHECK(out.error_code == "E_ACT_DENIED");
  Result up = file.act(
      R"({"target":"file","payload":{"action":"read","path":"../../x","cwd":"sub"}})", Context{});
  CHECK(up.error_code == "E_ACT_DENIED");
  CHECK(file.act(R"({"target":"file","payload":{"action":"read","path":"~/a.txt"}})", Context{})
            .error_code == "E_ACT_BAD_ACTION");
}
