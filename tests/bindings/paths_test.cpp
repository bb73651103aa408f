// Tests for warden::paths (lexical normalization and containment), incl. traversal tricks.
// Run with: bindings_tests "[paths]". Single-threaded.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "bindings/paths.h"

using namespace std::string_literals;
namespace paths = warden::paths;

namespace {
std::string norm(std::string_view p, std::string_view cwd = "/work", std::string_view home = "/home/u") {
  return paths::normalize(p, cwd, home);
}
}  // namespace

TEST_CASE("normalize resolves absolute paths lexically", "[paths]") {
  CHECK(norm("/") == "/");
  CHECK(norm("/etc/passwd") == "/etc/passwd");
  CHECK(norm("//etc///passwd//") == "/etc/passwd");
  CHECK(norm("/etc/./passwd") == "/etc/passwd");
  CHECK(norm("/a/b/../c") == "/a/c");
  CHECK(norm("/home/u/proj/../../etc/passwd") == "/home/etc/passwd");
  CHECK(norm("/../../..") == "/");
  CHECK(norm("/../etc/passwd") == "/etc/passwd");
  CHECK(norm("/a/b/c/../../..") == "/");
  CHECK(norm("/a/.") == "/a");
  CHECK(norm("/a/..") == "/");
  CHECK(norm("/a/...") == "/a/...");       // "..." is an ordinary name
  CHECK(norm("/a/..b/.c") == "/a/..b/.c");
  CHECK(norm("/a\\..\\b") == "/a\\..\\b");  // backslash is an ordinary byte on POSIX
}

TEST_CASE("normalize joins relative paths to cwd", "[paths]") {
  CHECK(norm("x") == "/work/x");
  CHECK(norm("./x/y/") == "/work/x/y");
  CHECK(norm("..") == "/");
  CHECK(norm("../../../../etc/shadow") == "/etc/shadow");
  CHECK(norm("") == "/work");
  CHECK(norm(".") == "/work");
  CHECK(norm("x", "") == "/x");                   // empty cwd = "/"
  CHECK(norm("x", "/a/b/../c/") == "/a/c/x");      // cwd normalized too
  CHECK(norm("x", "rel") == "/rel/x");             // relative cwd taken from "/"
  CHECK(norm("x", "~/proj") == "/home/u/proj/x");  // cwd may use "~"
  CHECK(norm("x", "$PWD") == "x");                 // unresolvable cwd: unchanged
}

TEST_CASE("normalize expands home prefixes", "[paths]") {
  CHECK(norm("~") == "/home/u");
  CHECK(norm("~/") == "/home/u");
  CHECK(norm("~/.ssh/id_rsa") == "/home/u/.ssh/id_rsa");
  CHECK(norm("~/../../etc") == "/etc");
  CHECK(norm("$HOME") == "/home/u");
  CHECK(norm("$HOME/.aws/credentials") == "/home/u/.aws/credentials");
  CHECK(norm("${HOME}/.aws") == "/home/u/.aws");
  CHECK(norm("~", "/", "/home/u/") == "/home/u");
  // "~user" is not resolved (unknown home): returned unchanged, never absolute.
  CHECK(norm("~root/.ssh") == "~root/.ssh");
  CHECK(norm("~root") == "~root");
  CHECK(norm("~+/x") == "~+/x");
  // Not a home prefix: "$HOMEX", "$HOME_DIR"...
  CHECK(norm("$HOMEX/a") == "$HOMEX/a");
  CHECK(norm("${HOME}x") == "${HOME}x");
  // A "~" that is not leading is an ordinary name.
  CHECK(norm("/a/~/b") == "/a/~/b");
  CHECK(norm("a~") == "/work/a~");
  // Home unknown or unusable: unchanged.
  CHECK(norm("~/x", "/", "") == "~/x");
  CHECK(norm("~/x", "/", "relative") == "~/x");
  CHECK(norm("~/x", "/", "/home/$USER") == "~/x");
}

TEST_CASE("normalize leaves unresolved expansions unchanged", "[paths]") {
  CHECK(norm("$X/etc") == "$X/etc");
  CHECK(norm("/etc/$(whoami)") == "/etc/$(whoami)");
  CHECK(norm("/etc/`id`") == "/etc/`id`");
  CHECK(norm("$HOME/$X") == "$HOME/$X");
  CHECK(norm("~/`id`") == "~/`id`");
  CHECK(norm("/etc/pass\0wd"s) == "/etc/pass\0wd"s);  // embedded NUL
  CHECK(norm("\0"s) == "\0"s);
}

TEST_CASE("normalize handles invalid UTF-8 as opaque bytes", "[paths]") {
  CHECK(norm("/a/\xFF\xFE/../b") == "/a/b");
  CHECK(norm("\xC3") == "/work/\xC3");
}

TEST_CASE("within compares whole components", "[paths]") {
  CHECK(paths::within("/home/u/project", "/home/u/project"));
  CHECK(paths::within("/home/u/project/src/a.c", "/home/u/project"));
  CHECK_FALSE(paths::within("/home/u/project2", "/home/u/project"));
  CHECK_FALSE(paths::within("/home/u/projec", "/home/u/project"));
  CHECK_FALSE(paths::within("/home/u", "/home/u/project"));
  CHECK(paths::within("/etc/passwd", "/"));
  CHECK(paths::within("/", "/"));
  CHECK_FALSE(paths::within("/", "/etc"));
  CHECK(paths::within("/a/b", "/a/b/"));  // trailing "/" on root tolerated
  CHECK(paths::within("/a/b/", "/a/b"));
}

TEST_CASE("within is robust to unnormalized and hostile input", "[paths]") {
  // Re-resolved lexically: ".." cannot climb out of root.
  CHECK_FALSE(paths::within("/home/u/project/../../../etc/passwd", "/home/u/project"));
  CHECK_FALSE(paths::within("/home/u/project/..", "/home/u/project"));
  CHECK(paths::within("/home/u/project/./src", "/home/u/project"));
  CHECK(paths::within("//home//u//project//x", "/home/u/project"));
  // Non-absolute and unresolved paths are never within anything.
  CHECK_FALSE(paths::within("home/u/project", "/"));
  CHECK_FALSE(paths::within("~/x", "/"));
  CHECK_FALSE(paths::within("", "/"));
  CHECK_FALSE(paths::within("/a", ""));
  CHECK_FALSE(paths::within("/a", "a"));
  CHECK_FALSE(paths::within("/home/$USER/x", "/home"));
  CHECK_FALSE(paths::within("/home/`id`", "/home"));
  CHECK_FALSE(paths::within("/x", "/$ROOT"));
  CHECK_FALSE(paths::within("/home/u/x\0/../../etc"s, "/home/u"));
  // normalize + within together, as the engine uses them
  const std::string root = norm("~/project");
  CHECK(paths::within(norm("src/../README"), "/work"));
  CHECK_FALSE(paths::within(norm("~/project/../.ssh/id_rsa"), root));
  CHECK_FALSE(paths::within(norm("~root/project"), root));
}

TEST_CASE("paths functions handle 1 MB inputs", "[paths]") {
  std::string deep;
  for (int i = 0; i < (1 << 20) / 2; ++i) deep += "a/";
  CHECK(norm("/" + deep).size() == (1 << 20));
  std::string dots;
  for (int i = 0; i < (1 << 20) / 3; ++i) dots += "../";
  CHECK(norm(dots + "etc") == "/etc");
  CHECK(norm(std::string(1 << 20, '/')) == "/");
  CHECK(paths::within("/" + deep + "x", "/" + deep.substr(0, 1000)));
  CHECK_FALSE(paths::within(std::string(1 << 20, '$'), "/"));
  std::string junk(1 << 20, '\xFF');
  CHECK(norm(junk).size() == (1 << 20) + 6);
}
