// Tests for warden::paths: lexical normalization and containment (traversal tricks), and
// symlink resolution on real temporary directories. Run with: bindings_tests "[paths]".
// Single-threaded.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "bindings/paths.h"
#include "tests/support/temp_dir.h"

using namespace std::string_literals;
namespace paths = warden::paths;

namespace {
std::string norm(std::string_view p, std::string_view cwd = "/work",
                 std::string_view home = "/home/u") {
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
  CHECK(norm("/a/...") == "/a/...");  // "..." is an ordinary name
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
  CHECK(norm("x", "") == "/x");                    // empty cwd = "/"
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

// ---- Symlink resolution (real temporary directories, real symlinks) ----

namespace {

// A fresh directory under the system temp dir, removed at scope exit. `root` is its real path.
struct TempTree {
  warden::testing::TempDir tmp{"warden-paths"};
  std::string root = std::filesystem::canonical(tmp.path()).string();
  std::string operator/(std::string_view rel) const { return root + "/" + std::string(rel); }
  void dir(std::string_view rel) const { std::filesystem::create_directories(*this / rel); }
  void file(std::string_view rel) const { std::ofstream(*this / rel) << "x"; }
  void link(std::string_view rel, const std::string& target) const {
    std::filesystem::create_symlink(target, *this / rel);
  }
};

}  // namespace

TEST_CASE("join keeps dot segments for the kernel walk", "[paths][resolve]") {
  CHECK(paths::join("a/../b", "/w", "/h") == "/w/a/../b");
  CHECK(paths::join("~/x", "/w", "/h") == "/h//x");  // repeated "/" is harmless to the walk
  CHECK(paths::join("/abs/./x", "/w", "/h") == "/abs/./x");
  CHECK(paths::join("x", "c/..", "/h") == "/c/../x");
  CHECK(paths::join("$X/y", "/w", "/h").empty());
  CHECK(paths::join("~root/x", "/w", "/h").empty());
}

TEST_CASE("resolve follows symlinks of the existing part and appends the rest",
          "[paths][resolve]") {
  TempTree t;
  t.dir("ws/src");
  t.dir("outside/secret");
  t.file("outside/secret/key");
  t.link("ws/out_link", t / "outside");        // absolute target
  t.link("ws/rel_link", "../outside/secret");  // relative target
  t.link("ws/file_link", t / "outside/secret/key");
  t.link("ws/chain", "out_link");  // link to a link
  t.link("ws/loop_a", "loop_b");
  t.link("ws/loop_b", "loop_a");

  CHECK(paths::resolve(t / "ws/src") == t / "ws/src");
  CHECK(paths::resolve(t / "ws/out_link/secret/key") == t / "outside/secret/key");
  CHECK(paths::resolve(t / "ws/rel_link/key") == t / "outside/secret/key");
  CHECK(paths::resolve(t / "ws/file_link") == t / "outside/secret/key");  // last component too
  CHECK(paths::resolve(t / "ws/chain/secret") == t / "outside/secret");
  // Missing tail: appended lexically to the resolved existing prefix.
  CHECK(paths::resolve(t / "ws/out_link/new/file.txt") == t / "outside/new/file.txt");
  CHECK(paths::resolve(t / "ws/src/new/../x") == t / "ws/src/x");
  // ".." after a symlink is the parent of the target, as the kernel sees it.
  CHECK(paths::resolve(t / "ws/rel_link/../../ws/src") == t / "ws/src");
  CHECK(paths::resolve(t / "ws/out_link/..") == t.root);
  // Back on the filesystem after a missing component: symlinks count again.
  CHECK(paths::resolve(t / "ws/missing/../out_link/secret") == t / "outside/secret");
  // Below a regular file: lexical.
  CHECK(paths::resolve(t / "outside/secret/key/x") == t / "outside/secret/key/x");
  // Failures are "", never a guess.
  CHECK(paths::resolve(t / "ws/loop_a").empty());
  CHECK(paths::resolve(t / "ws/loop_a/x").empty());
  CHECK(paths::resolve("relative/x").empty());
  CHECK(paths::resolve("").empty());
  CHECK(paths::resolve("/" + std::string(5000, 'a')).empty());
  CHECK(paths::resolve("/") == "/");
}

TEST_CASE("a symlink inside the workspace does not make its target in the workspace",
          "[paths][resolve]") {
  TempTree t;
  t.dir("ws/src");
  t.dir("etc");
  t.file("etc/shadow");
  t.link("ws/etc_link", t / "etc");
  paths::Resolver r;
  const std::string home = t / "home";
  const paths::Location root = r.locate(t / "ws", "", home);

  // Lexically inside, really outside: was "in the workspace" with lexical containment only.
  const paths::Location shadow = r.locate("etc_link/shadow", t / "ws", home);
  CHECK(shadow.normalized == t / "ws/etc_link/shadow");
  CHECK(shadow.resolved == t / "etc/shadow");
  CHECK(paths::within(shadow.normalized, root.normalized));
  CHECK_FALSE(paths::within(shadow, root));

  CHECK(paths::within(r.locate("src/a.c", t / "ws", home), root));
  CHECK(paths::within(r.locate("src/new/dir/file", t / "ws", home), root));  // not created yet
  CHECK_FALSE(paths::within(r.locate("../etc/shadow", t / "ws", home), root));
  CHECK_FALSE(paths::within(r.locate("etc_link", t / "ws", home), root));
  // Lexically outside but resolving inside is not inside either (both must hold).
  t.link("etc/ws_link", t / "ws");
  CHECK_FALSE(paths::within(r.locate(t / "etc/ws_link/src", "", home), root));
  // Unknown resolution is never inside.
  t.link("ws/loop", "loop");
  CHECK_FALSE(paths::within(r.locate("loop/x", t / "ws", home), root));
  CHECK_FALSE(paths::within(r.locate("$X/y", t / "ws", home), root));
}

TEST_CASE("a workspace root reached through a symlink is resolved too", "[paths][resolve]") {
  TempTree t;
  t.dir("real_ws/src");
  t.link("ws", t / "real_ws");
  paths::Resolver r;
  const paths::Location root = r.locate(t / "ws", "", "/h");
  CHECK(root.resolved == t / "real_ws");
  CHECK(paths::within(r.locate("src/x", t / "ws", "/h"), root));
  CHECK_FALSE(paths::within(r.locate(t / "real_ws/src/x", "", "/h"), root));  // lexically outside
}

TEST_CASE("Resolver caches until cleared; a changed symlink is seen after clear",
          "[paths][resolve]") {
  TempTree t;
  t.dir("a");
  t.dir("b");
  t.link("l", t / "a");
  paths::Resolver r;
  CHECK(r.locate(t / "l/x", "", "/h").resolved == t / "a/x");
  std::filesystem::remove(t / "l");
  t.link("l", t / "b");
  CHECK(r.locate(t / "l/x", "", "/h").resolved == t / "a/x");  // same decision: cached
  r.clear();
  CHECK(r.locate(t / "l/x", "", "/h").resolved == t / "b/x");
}

TEST_CASE("Resolver::locate's normalized reading is normalize() of the same input",
          "[paths][resolve]") {
  // locate expands a path once and resolves it lexically; it must agree with normalize on
  // every kind of input, unresolvable ones included.
  const char* inputs[] = {"/a/b/../c", "a/./b//c/", "../../..",   "..",      ".",
                          "",          "/",         "//",         "/./..",   "~/x/../y",
                          "~",         "~user/x",   "$HOME/.ssh", "${HOME}", "$X/y",
                          "a`b`",      "/a/b/..",   "x/..",       "a/b/.."};
  const char* cwds[] = {"/work", "", "/", "/w/../x/./y/", "rel/dir", "~/proj", "$X", "/a//b"};
  const char* homes[] = {"/home/u", "", "rel", "/h/$X", "/h/"};
  paths::Resolver resolver;
  for (const char* p : inputs)
    for (const char* c : cwds)
      for (const char* h : homes) {
        INFO(p << " | " << c << " | " << h);
        CHECK(resolver.locate(p, c, h).normalized == paths::normalize(p, c, h));
      }
}

TEST_CASE("within compares unnormalized input as normalized", "[paths]") {
  CHECK(paths::within("/a/b/c", "/a/b"));
  CHECK(paths::within("/a/b//c/", "/a/./b"));
  CHECK_FALSE(paths::within("/a/b/../c", "/a/b"));
  CHECK(paths::within("/a/b/../b/c", "/a/b/"));
  CHECK(paths::within("/x", "/"));
  CHECK(paths::within("/x", "/.."));
  CHECK_FALSE(paths::within("/a/bc", "/a/b"));
  CHECK(paths::within("/a/b", "/a/b"));
  CHECK_FALSE(paths::within("/a", "/a/b"));
}
