// The shell state the parser follows (working directories through cd/pushd/popd at every
// nesting level, with bash's scoping) and the text bash evaluates as code (arithmetic
// subscripts, test -v, printf -v, read, prompt expansion, traps, callbacks). The code
// constructs are checked against the real bash first: each line must really run a command
// when bash runs it, and the parser must then report code.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "bindings/shell_parser.h"

using namespace warden::shell;
namespace fs = std::filesystem;

namespace {

ParseResult must_parse(const std::string& line) {
  ParseResult r = parse(line);
  INFO(line << " -> " << r.error);
  REQUIRE(r.ok);
  return r;
}

// The first command running `program` with `arg` among its operands (or any, when empty).
const SimpleCommand& find(const ParseResult& r, const std::string& program,
                          const std::string& arg = "") {
  for (const auto& c : r.commands) {
    if (c.program != program) continue;
    if (arg.empty() || std::find(c.args.begin(), c.args.end(), arg) != c.args.end()) return c;
  }
  FAIL("no command " << program << " " << arg);
  throw 0;
}

// The working directories as text: "" the start, "?" unknown, else the steps joined by "|".
std::vector<std::string> dirs(const SimpleCommand& c) {
  std::vector<std::string> out;
  for (const auto& d : c.cwds) {
    if (!d.known) {
      out.push_back("?");
      continue;
    }
    std::string s;
    for (const auto& step : d.steps) s += (s.empty() ? "" : "|") + step;
    out.push_back(s);
  }
  std::sort(out.begin(), out.end());
  return out;
}

using Dirs = std::vector<std::string>;

bool has_code(const ParseResult& r) {
  for (const auto& c : r.commands)
    if (!c.code.empty()) return true;
  return false;
}

}  // namespace

TEST_CASE("cd inside bash -c, sh -c, eval, groups and functions moves what follows",
          "[shell][cwd]") {
  SECTION("bash -c: the inner command runs in the new directory") {
    auto r = must_parse("bash -c 'cd ~ && rm -rf .ssh'");
    CHECK(dirs(find(r, "rm")) == Dirs{"~"});
  }
  SECTION("sh -c with ; : the cd may fail, both stay possible") {
    auto r = must_parse("sh -c 'cd ~; rm -rf .ssh'");
    CHECK(dirs(find(r, "rm")) == Dirs{"", "~"});
  }
  SECTION("eval runs in this shell: its cd leaks out") {
    auto r = must_parse("eval 'cd ~' && rm -rf .ssh");
    CHECK(dirs(find(r, "rm")) == Dirs{"~"});
    auto r2 = must_parse("eval cd /etc; cat passwd");
    CHECK(dirs(find(r2, "cat")) == Dirs{"", "/etc"});
  }
  SECTION("a brace group is this shell") {
    auto r = must_parse("{ cd ~; } && rm -rf .ssh");
    CHECK(dirs(find(r, "rm")) == Dirs{"~"});
  }
  SECTION("nested: bash -c inside sh -c inside eval") {
    auto r = must_parse(R"(eval "sh -c 'bash -c \"cd /root && rm -rf x\"'")");
    CHECK(dirs(find(r, "rm")) == Dirs{"/root"});
  }
  SECTION("a function body runs where it is called: anywhere once the line moves") {
    auto r = must_parse("f() { rm -rf .ssh; }; cd ~; f");
    CHECK(std::find(dirs(find(r, "rm")).begin(), dirs(find(r, "rm")).end(), "?") !=
          dirs(find(r, "rm")).end());
  }
  SECTION("a function whose body changes directory moves its callers") {
    auto r = must_parse("go() { cd ~; }; go && rm -rf .ssh");
    const Dirs d = dirs(find(r, "rm"));
    CHECK(std::find(d.begin(), d.end(), "?") != d.end());
  }
  SECTION("a function named cd replaces the builtin") {
    auto r = must_parse("cd() { builtin cd ~; }; cd /home/user/project && rm -rf .ssh");
    const Dirs d = dirs(find(r, "rm"));
    CHECK(std::find(d.begin(), d.end(), "?") != d.end());
  }
  SECTION("a loop whose body changes directory: anywhere") {
    auto r = must_parse("for i in 1 2; do rm -rf .ssh; cd ~; done");
    const Dirs d = dirs(find(r, "rm"));
    CHECK(std::find(d.begin(), d.end(), "?") != d.end());
  }
  SECTION("if/case branches: every branch's directory stays possible") {
    auto r = must_parse("if true; then cd ~; fi; rm -rf .ssh");
    CHECK(dirs(find(r, "rm")) == Dirs{"", "~"});
    auto r2 = must_parse("case x in x) cd /etc;; esac && cat passwd");
    CHECK(dirs(find(r2, "cat")) == Dirs{"", "/etc"});
  }
}

TEST_CASE("subshells keep their cd; new shells start where their caller is", "[shell][cwd]") {
  SECTION("( … ) does not leak") {
    auto r = must_parse("(cd ~ && ls); rm -rf .ssh");
    CHECK(dirs(find(r, "ls")) == Dirs{"~"});
    CHECK(dirs(find(r, "rm")) == Dirs{""});
  }
  SECTION("$( … ) and backquotes do not leak") {
    auto r = must_parse("x=$(cd ~); y=`cd /etc`; rm -rf .ssh");
    CHECK(dirs(find(r, "rm")) == Dirs{""});
  }
  SECTION("pipeline members are subshells") {
    auto r = must_parse("cd ~ | cat && rm -rf .ssh");
    CHECK(dirs(find(r, "rm")) == Dirs{""});
    auto r2 = must_parse("true | cd ~ && rm -rf .ssh");
    CHECK(dirs(find(r2, "rm")) == Dirs{""});
  }
  SECTION("a background job is a subshell") {
    auto r = must_parse("cd ~ & rm -rf .ssh");
    CHECK(dirs(find(r, "rm")) == Dirs{""});
  }
  SECTION("bash -c starts in the caller's directory and keeps its own cd") {
    auto r = must_parse("cd /tmp && bash -c 'cd ~' && rm -rf x && bash -c 'ls'");
    CHECK(dirs(find(r, "rm")) == Dirs{"/tmp"});
    CHECK(dirs(find(r, "ls")) == Dirs{"/tmp"});
  }
  SECTION("a here-document script starts where its shell runs") {
    auto r = must_parse("cd /srv && bash <<'EOF'\ncd ~ && rm -rf .ssh\nEOF\nls");
    CHECK(dirs(find(r, "rm")) == Dirs{"~"});
    CHECK(dirs(find(r, "ls")) == Dirs{"", "/srv"});
  }
  SECTION("ssh commands run in a remote directory nobody knows") {
    auto r = must_parse("ssh host 'rm -rf .ssh'");
    CHECK(dirs(find(r, "rm")) == Dirs{"?"});
  }
  SECTION("cd under another program's wrapper changes nothing here") {
    auto r = must_parse("cd ~; timeout 5 cd /home/user/project && rm -rf .ssh");
    CHECK(dirs(find(r, "rm")) == Dirs{"", "~"});
  }
  SECTION("a cd whose words come at run time (xargs, parallel) goes who knows where") {
    auto r = must_parse("echo ~ | xargs -I{} sh -c 'cd {} && rm -rf .ssh'");
    CHECK(dirs(find(r, "rm")) == Dirs{"?"});
  }
  SECTION("builtin and command keep cd in this shell") {
    auto r = must_parse("builtin cd ~ && command rm -rf .ssh");
    CHECK(dirs(find(r, "rm")) == Dirs{"~"});
  }
}

TEST_CASE("a wrapper that starts its command in another directory moves that command only",
          "[shell][cwd]") {
  // Read as `cd DIR` from where the shell is, for the wrapped command and what it wraps.
  struct Case {
    const char* line;
    Dirs rm;
  };
  for (const Case& c : {
           Case{"env -C ~ rm -rf .ssh", {"~"}},
           Case{"env --chdir=/home/user rm -rf .ssh", {"/home/user"}},
           Case{"env --chdir /home/user rm -rf .ssh", {"/home/user"}},
           Case{"env --ch=/home/user rm -rf .ssh", {"/home/user"}},
           Case{"env -iC/home/user rm -rf .ssh", {"/home/user"}},
           Case{"sudo -D /home/user rm -rf .ssh", {"/home/user"}},
           Case{"sudo --chdir=/root rm -rf .ssh", {"/root"}},
           Case{"unshare -w /home/user rm -rf .ssh", {"/home/user"}},
           Case{"nsenter --wd=/home/user rm -rf .ssh", {"/home/user"}},
           Case{"nsenter -w/home/user rm -rf .ssh", {"/home/user"}},
           Case{"parallel --wd /home/user rm -rf .ssh ::: a", {"/home/user"}},
           Case{"cd /srv && env -C .. rm -rf .ssh", {"/srv|.."}},
           Case{"env -C /a timeout 5 env -C b rm -rf .ssh", {"/a|b"}},
           Case{"timeout 5 sudo -D /home/user nice rm -rf .ssh", {"/home/user"}},
           Case{"sudo -D /home/user bash -c 'rm -rf .ssh'", {"/home/user"}},
           // Somewhere the line does not show.
           Case{"env -C \"$D\" rm -rf .ssh", {"?"}},
           Case{"sudo -i rm -rf .ssh", {"?"}},
           Case{"sudo -R /jail rm -rf .ssh", {"?"}},
           Case{"unshare -R /r rm -rf .ssh", {"?"}},
           Case{"nsenter -r rm -rf .ssh", {"?"}},
           Case{"nsenter --wd rm -rf .ssh", {"?"}},
           Case{"nsenter --wdns=/x rm -rf .ssh", {"?"}},
           Case{"parallel --wd ... rm -rf .ssh ::: a", {"?"}},
           Case{"chroot /jail rm -rf .ssh", {"?"}},
           Case{"echo ~ | xargs -I{} env -C {} rm -rf .ssh", {"?"}},
           // Options that move nothing.
           Case{"env -u C rm -rf .ssh", {""}},
           Case{"sudo -u root rm -rf .ssh", {""}},
       }) {
    INFO(c.line);
    CHECK(dirs(find(must_parse(c.line), "rm")) == c.rm);
  }
  // The shell itself stays where it was.
  auto r = must_parse("env -C /home/user ls; rm -rf .ssh");
  CHECK(dirs(find(r, "ls")) == Dirs{"/home/user"});
  CHECK(dirs(find(r, "rm")) == Dirs{""});
  // nsenter's long option is --wdns: its value is not the program.
  CHECK(find(must_parse("nsenter --wdns /x rm -rf .ssh"), "rm").wrappers ==
        std::vector<std::string>{"nsenter"});
}

TEST_CASE("cd's own arguments: -, none, CDPATH, pushd, popd, unknown targets", "[shell][cwd]") {
  SECTION("cd alone goes home; cd - back to OLDPWD") {
    CHECK(dirs(find(must_parse("cd && rm -rf .ssh"), "rm")) == Dirs{"~"});
    auto r = must_parse("cd ~ && cd /tmp && cd - && rm -rf .ssh");
    CHECK(dirs(find(r, "rm")) == Dirs{"~"});
  }
  SECTION("cd - with an OLDPWD from outside the line: unknown") {
    CHECK(dirs(find(must_parse("cd - && rm -rf .ssh"), "rm")) == Dirs{"?"});
  }
  SECTION("HOME or CDPATH set in the line: cd alone or a bare name goes who knows where") {
    CHECK(dirs(find(must_parse("HOME=/root; cd && rm -rf x"), "rm")) == Dirs{"?"});
    CHECK(dirs(find(must_parse("CDPATH=~ cd .ssh && rm -rf id_rsa"), "rm")) == Dirs{"?"});
    CHECK(dirs(find(must_parse("CDPATH=~; cd ./src && ls"), "ls")) == Dirs{"./src"});
    CHECK(dirs(find(must_parse("shopt -s cdable_vars; cd h && ls"), "ls")) == Dirs{"?"});
  }
  SECTION("a target known only at run time: unknown") {
    CHECK(dirs(find(must_parse("cd \"$D\" && rm -rf x"), "rm")) == Dirs{"?"});
    CHECK(dirs(find(must_parse("c=cd; $c ~; rm -rf .ssh"), "rm")) == Dirs{"", "?"});
    CHECK(dirs(find(must_parse("source \"$f\"; rm -rf .ssh"), "rm")) == Dirs{"", "?"});
    CHECK(dirs(find(must_parse(". .venv/bin/activate && pytest"), "pytest")) == Dirs{""});
    CHECK(dirs(find(must_parse(". /dev/stdin <<< 'cd ~'; rm -rf .ssh"), "rm")) == Dirs{"", "?"});
    CHECK(dirs(find(must_parse("echo 'cd ~' > x; . ./x; rm -rf .ssh"), "rm")) == Dirs{"", "?"});
  }
  SECTION("pushd and popd") {
    CHECK(dirs(find(must_parse("pushd ~ && rm -rf .ssh"), "rm")) == Dirs{"~"});
    auto r = must_parse("pushd /tmp && pushd ~ && popd && popd && ls");
    CHECK(dirs(find(r, "ls")) == Dirs{""});
    auto r2 = must_parse("pushd ~ && pushd /tmp && pushd && rm -rf .ssh");
    CHECK(dirs(find(r2, "rm")) == Dirs{"~"});
    CHECK(dirs(find(must_parse("pushd +1 && rm -rf .ssh"), "rm")) == Dirs{"?"});
    CHECK(dirs(find(must_parse("popd && rm -rf .ssh"), "rm")) == Dirs{"?"});
  }
  SECTION("the everyday forms keep their directory") {
    CHECK(dirs(find(must_parse("cd src && make"), "make")) == Dirs{"src"});
    CHECK(dirs(find(must_parse("cd src; make"), "make")) == Dirs{"", "src"});
    CHECK(dirs(find(must_parse("ls"), "ls")) == Dirs{""});
  }
}

TEST_CASE("text bash evaluates as code is reported", "[shell][code]") {
  const char* code_lines[] = {
      "test -v 'a[$(id)]'",
      "[ -v 'a[$(id)]' ]",
      "[[ -v a[$(id)] ]]",
      "x='a[$(id)]'; [[ $x -eq 0 ]]",
      "x='a[$(id)]'; let x",
      "let 'a[$(id)]'",
      "x='a[$(id)]'; echo $((x))",
      "echo $(( a[$(id)] ))",
      "x='a[$(id)]'; ((x))",
      "x='a[$(id)]'; declare -i y=$x",
      "declare -i y; y='a[$(id)]'",
      "typeset -i y='a[$(id)]'",
      "printf -v 'a[$(id)]' %s 1",
      "read 'a[$(id)]' <<< 1",
      "x='a[$(id)]'; echo ${!x}",
      "x='$(id)'; echo ${x@P}",
      "mapfile -C 'id #' -c 1 arr < f",
      "readarray -C id arr < f",
      "hash -p /tmp/evil ls",
      "trap 'id' EXIT",
      "compgen -C id x",
      "complete -C id git",
      "enable -f /tmp/x.so evil",
      "a=(1 2); echo ${a['$(id)']}",
      "x='a[$(id)]'; s=abc; echo ${s:x}",
      "x='a[$(id)]'; a[$x]=1",
      "a+=(['$(id)']=2)",
      "x='a[$(id)]'; declare -n r=$x",
      "for ((i='a[$(id)]';i<0;i++)); do :; done",
      "echo $[a[$(id)]]",
      "read -r line < f; echo $((line))",
      "command printf -v 'a[$(id)]' %s 1",
      "builtin test -v 'a[$(id)]'",
      "bash -c \"test -v 'a[\\$(id)]'\"",
  };
  for (const char* line : code_lines) {
    INFO(line);
    CHECK(has_code(must_parse(line)));
  }
  const char* plain_lines[] = {
      "echo $((1 + 2))",
      "i=0; echo $((i + 1))",
      "for ((i=0; i<3; i++)); do echo $i; done",
      "test -v HOME",
      "[[ $n -eq 3 ]]",
      "printf -v out %s x",
      "read -r a b <<< 'x y'",
      "echo ${#arr[@]} ${arr[@]} ${x:-d} ${x:1:2}",
      "declare -i n=5",
      "trap - EXIT",
      "trap -p",
  };
  for (const char* line : plain_lines) {
    INFO(line);
    CHECK_FALSE(has_code(must_parse(line)));
  }
}

// Each line runs a command in the real bash (it creates the marker file), and the parser
// reports code for it.
TEST_CASE("the code constructs really run code in bash", "[shell][code][bash]") {
  REQUIRE(::access("/bin/bash", X_OK) == 0);
  std::string tmpl = (fs::temp_directory_path() / "warden-probe-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const std::string marker = tmpl + "/hit";
  const std::string payload = "a[$(touch " + marker + ")]";
  const std::vector<std::string> lines = {
      "x='" + payload + "'; test -v \"$x\"",
      "test -v '" + payload + "'",
      "x='" + payload + "'; [[ -v $x ]]",
      "x='" + payload + "'; [[ $x -eq 0 ]]",
      "x='" + payload + "'; let x",
      "x='" + payload + "'; echo $((x))",
      "x='" + payload + "'; declare -i y=$x",
      "printf -v '" + payload + "' %s 1",
      "read '" + payload + "' <<< 1",
      "x='" + payload + "'; echo ${!x}",
      "x='$(touch " + marker + ")'; echo ${x@P}",
      "printf 'a\\nb\\n' | mapfile -C 'touch " + marker + " #' -c 1 arr",
      "hash -p /usr/bin/touch foo; foo " + marker,
      "trap 'touch " + marker + "' EXIT",
      "compgen -C 'touch " + marker + "' x",
      "x='" + payload + "'; s=abc; echo ${s:x}",
      "x='" + payload + "'; a[$x]=1",
  };
  for (const std::string& line : lines) {
    INFO(line);
    fs::remove(marker);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // In the probe's directory: what a line creates (`compgen`, `x`) stays there.
      if (::chdir(tmpl.c_str()) != 0) _exit(126);
      execl("/bin/bash", "bash", "-c", line.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(fs::exists(marker));  // bash ran the command
    CHECK(has_code(must_parse(line)));
  }
  fs::remove_all(tmpl);
}
