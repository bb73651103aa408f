// `warden completion bash|zsh|fish` and `warden man DIR` against the binary's own help: every
// command and every long option `warden … --help` lists is completed by bash (sourced in a
// real bash, its function called with COMP_WORDS/COMP_CWORD set), by zsh (typed with a Tab
// into an interactive zsh in a pseudo-terminal) and by fish (complete -C), and documented in a
// manual page that groff renders without a warning. The files the build generated
// (packaging/) are what the binary prints now.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/build_paths.h"
#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

using namespace warden::cli::testing;
namespace fs = std::filesystem;
using warden::testing::TempDir;

namespace {

struct HelpCommand {
  std::vector<std::string> path;  // {"warden", "audit", "query"}
  std::set<std::string> subcommands;
  std::set<std::string> long_options;  // "--format"
};

std::string joined(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : separator) + w;
  return out;
}

// Runs `sh -c SCRIPT` and returns its exit status and output.
Run run_shell(const std::string& script) {
  const fs::path out =
      fs::temp_directory_path() / ("warden-completion-out-" + std::to_string(::getpid()));
  const fs::path err = fs::path(out.string() + ".err");
  const std::string command = "(" + script + ") > '" + out.string() + "' 2> '" + err.string() + "'";
  int status = std::system(command.c_str());
  std::ifstream o(out), e(err);
  std::stringstream os, es;
  os << o.rdbuf();
  es << e.rdbuf();
  fs::remove(out);
  fs::remove(err);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, os.str(), es.str()};
}

std::string contents_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void put_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out);
}

// The oracle: CLI11's own help of `warden PATH… --help`, its "Options:" and "Subcommands:"
// sections (an entry starts two spaces in; a description wrapped to the next line starts
// further in).
HelpCommand help_of(const std::vector<std::string>& path) {
  std::vector<std::string> args(path.begin() + 1, path.end());
  args.push_back("--help");
  Run r = run_warden(args);
  INFO(joined(path, " ") << " --help: " << r.err);
  REQUIRE(r.code == 0);
  HelpCommand h;
  h.path = path;
  std::string section;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] != ' ') {
      section = line;
      continue;
    }
    if (line.size() < 3 || line.compare(0, 2, "  ") != 0 || line[2] == ' ') continue;
    const std::string entry = line.substr(2, line.find(' ', 2) - 2);
    if (section == "Subcommands:") h.subcommands.insert(entry);
    if (section == "Options:") {
      std::istringstream names(entry);
      for (std::string name; std::getline(names, name, ',');)
        if (name.rfind("--", 0) == 0) h.long_options.insert(name);
    }
  }
  return h;
}

const std::vector<HelpCommand>& all_help() {
  static const std::vector<HelpCommand> all = [] {
    std::vector<HelpCommand> out;
    std::vector<std::vector<std::string>> todo{{"warden"}};
    while (!todo.empty()) {
      std::vector<std::string> path = todo.front();
      todo.erase(todo.begin());
      HelpCommand h = help_of(path);
      for (const auto& sub : h.subcommands) {
        std::vector<std::string> child = path;
        child.push_back(sub);
        todo.push_back(child);
      }
      out.push_back(std::move(h));
    }
    return out;
  }();
  return all;
}

// Completes each word list in one bash process: COMP_WORDS is the list (the last word is the
// one being completed), COMP_CWORD its index, and _warden fills COMPREPLY.
std::vector<std::set<std::string>> bash_complete(
    const std::vector<std::vector<std::string>>& cases) {
  TempDir dir{"warden-completion"};
  Run script = run_warden({"completion", "bash"});
  REQUIRE(script.code == 0);
  put_file(dir.path() / "warden.bash", script.out);
  std::string driver = "source '" + (dir.path() / "warden.bash").string() + "' || exit 9\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    driver += "COMP_WORDS=(";
    for (const auto& w : cases[i]) driver += "'" + w + "' ";
    driver += ")\nCOMP_CWORD=" + std::to_string(cases[i].size() - 1) + "\nCOMPREPLY=()\n_warden\n";
    driver +=
        "echo '@@ " + std::to_string(i) + "'\nfor w in \"${COMPREPLY[@]}\"; do echo \"$w\"; done\n";
  }
  put_file(dir.path() / "driver.bash", driver);
  Run r = run_shell("bash --norc --noprofile '" + (dir.path() / "driver.bash").string() + "'");
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(r.err.empty());
  std::vector<std::set<std::string>> out(cases.size());
  long current = -1;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("@@ ", 0) == 0) {
      current = std::stol(line.substr(3));
      continue;
    }
    REQUIRE(current >= 0);
    out[static_cast<std::size_t>(current)].insert(line);
  }
  REQUIRE(current == static_cast<long>(cases.size()) - 1);
  return out;
}

std::vector<std::string> extended(std::vector<std::string> words,
                                  const std::vector<std::string>& more) {
  words.insert(words.end(), more.begin(), more.end());
  return words;
}

std::string page_of(const HelpCommand& h) { return joined(h.path, "-") + ".1"; }

}  // namespace

TEST_CASE("the help tree the completions are checked against is the whole CLI",
          "[cli][completion]") {
  const auto& all = all_help();
  std::set<std::string> names;
  for (const auto& h : all) names.insert(joined(h.path, " "));
  // Commands of every family, and nested ones, so a parse of the help that found nothing fails.
  for (const char* expected :
       {"warden", "warden serve", "warden audit query", "warden token new",
        "warden hook claude-code", "warden completion", "warden man", "warden version"})
    CHECK(names.count(expected) == 1);
  CHECK(all.size() > 25);
  for (const auto& h : all) {
    INFO(joined(h.path, " "));
    CHECK(h.long_options.count("--help") == 1);
  }
}

TEST_CASE("bash completes every subcommand and every long option of every command",
          "[cli][completion]") {
  const auto& all = all_help();
  std::vector<std::vector<std::string>> cases;
  for (const auto& h : all) {
    cases.push_back(extended(h.path, {""}));    // a subcommand, or nothing offered
    cases.push_back(extended(h.path, {"--"}));  // every long option
  }
  const auto replies = bash_complete(cases);
  for (std::size_t i = 0; i < all.size(); ++i) {
    INFO(joined(all[i].path, " "));
    if (!all[i].subcommands.empty()) CHECK(replies[2 * i] == all[i].subcommands);
    CHECK(replies[2 * i + 1] == all[i].long_options);
  }
}

TEST_CASE("bash completes prefixes of subcommands, options and option values",
          "[cli][completion]") {
  const std::vector<std::pair<std::vector<std::string>, std::set<std::string>>> expected{
      {{"warden", "se"}, {"serve"}},
      {{"warden", "audit", "q"}, {"query"}},
      {{"warden", "serve", "--wor"}, {"--workers", "--workspace"}},
      {{"warden", "hook", "install", "--"}, {}},  // filled from the help below
      {{"warden", "version", "--format", ""}, {"text", "json"}},
      {{"warden", "version", "--format", "j"}, {"json"}},
      {{"warden", "version", "--format", "=", "t"}, {"text"}},  // --format=t, split at '='
      {{"warden", "audit", "query", "--outcome", "appr"}, {"approve", "approval-required"}},
      {{"warden", "completion", ""}, {"bash", "zsh", "fish"}},
      {{"warden", "completion", "f"}, {"fish"}},
      // An option's value is not a subcommand, and options before a subcommand are passed over.
      {{"warden", "serve", "--log-level", "info", "--log-j"}, {"--log-json"}},
      {{"warden", "serve", "--config", ""}, {}},  // a file: left to readline's file names
      {{"warden", "exec", "--", "--"}, {}},       // a command's own words
      {{"warden", "nonesuch", "--he"}, {"--help"}},
  };
  std::vector<std::vector<std::string>> cases;
  for (const auto& e : expected) cases.push_back(e.first);
  const auto replies = bash_complete(cases);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO(joined(expected[i].first, " "));
    if (i == 3) {
      std::set<std::string> hook_install = help_of({"warden", "hook", "install"}).long_options;
      CHECK(hook_install.count("--project") == 1);
      CHECK(replies[i] == hook_install);
      continue;
    }
    CHECK(replies[i] == expected[i].second);
  }
}

TEST_CASE("fish completes subcommands, options and choices", "[cli][completion]") {
  TempDir dir{"warden-completion"};
  Run script = run_warden({"completion", "fish"});
  REQUIRE(script.code == 0);
  put_file(dir.path() / "warden.fish", script.out);
  const auto& all = all_help();
  std::string driver = "source '" + (dir.path() / "warden.fish").string() + "'; or exit 9\n";
  std::vector<std::pair<std::string, std::set<std::string>>> cases;
  for (const auto& h : all) {
    const std::string line = joined(h.path, " ") + " ";
    if (!h.subcommands.empty()) cases.push_back({line, h.subcommands});
    cases.push_back({line + "--", h.long_options});
  }
  cases.push_back({"warden se", {"serve"}});
  cases.push_back({"warden version --format ", {"text", "json"}});
  cases.push_back({"warden completion ", {"bash", "zsh", "fish"}});
  for (std::size_t i = 0; i < cases.size(); ++i)
    driver += "echo '@@ " + std::to_string(i) + "'\ncomplete -C '" + cases[i].first + "'\n";
  put_file(dir.path() / "driver.fish", driver);
  Run r = run_shell("HOME='" + dir.path().string() + "' fish --no-config '" +
                    (dir.path() / "driver.fish").string() + "'");
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::vector<std::set<std::string>> got(cases.size());
  long current = -1;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("@@ ", 0) == 0) {
      current = std::stol(line.substr(3));
      continue;
    }
    REQUIRE(current >= 0);
    got[static_cast<std::size_t>(current)].insert(line.substr(0, line.find('\t')));
  }
  REQUIRE(current == static_cast<long>(cases.size()) - 1);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("complete -C '" << cases[i].first << "'");
    CHECK(got[i] == cases[i].second);
  }
}

TEST_CASE("zsh completes every subcommand and long option, prefixes and choices",
          "[cli][completion]") {
  TempDir dir{"warden-completion"};
  Run script = run_warden({"completion", "zsh"});
  REQUIRE(script.code == 0);
  put_file(dir.path() / "_warden", script.out);
  // LINE typed into an interactive zsh in a pseudo-terminal, then a Tab (tests/cli/zsh_complete.zsh).
  auto complete = [&](const std::string& line) {
    Run r = run_shell("timeout 60 zsh -f '" WARDEN_SOURCE_DIR "/tests/cli/zsh_complete.zsh' '" +
                      dir.path().string() + "' '" + line + "'");
    INFO("zsh: " << line << ": " << r.err);
    REQUIRE(r.code == 0);
    std::set<std::string> matches;
    std::istringstream lines(r.out);
    for (std::string m; std::getline(lines, m);) matches.insert(m);
    return matches;
  };
  for (const auto& h : all_help()) {
    const std::string line = joined(h.path, " ") + " ";
    INFO(line);
    if (!h.subcommands.empty()) CHECK(complete(line) == h.subcommands);
    CHECK(complete(line + "--") == h.long_options);
  }
  CHECK(complete("warden se") == std::set<std::string>{"serve"});
  CHECK(complete("warden serve --wor") == std::set<std::string>{"--workers", "--workspace"});
  CHECK(complete("warden version --format ") == std::set<std::string>{"text", "json"});
  CHECK(complete("warden audit query --outcome appr") ==
        std::set<std::string>{"approve", "approval-required"});
  CHECK(complete("warden completion ") == std::set<std::string>{"bash", "zsh", "fish"});
}

TEST_CASE("the zsh script parses, defines a function per command and names every option",
          "[cli][completion]") {
  TempDir dir{"warden-completion"};
  Run script = run_warden({"completion", "zsh"});
  REQUIRE(script.code == 0);
  REQUIRE(script.out.rfind("#compdef warden\n", 0) == 0);
  put_file(dir.path() / "_warden", script.out);
  Run syntax = run_shell("zsh -n '" + (dir.path() / "_warden").string() + "'");
  INFO(syntax.err);
  REQUIRE(syntax.code == 0);
  // Sourced after compinit, as a user would: it registers itself and defines its functions.
  Run loaded = run_shell(
      "HOME='" + dir.path().string() + "' zsh -f -c 'autoload -Uz compinit && compinit -u -d " +
      (dir.path() / "zcompdump").string() + " && source " + (dir.path() / "_warden").string() +
      " && print -r -- $_comps[warden] && print -rl -- ${(k)functions}'");
  INFO(loaded.err);
  REQUIRE(loaded.code == 0);
  std::istringstream lines(loaded.out);
  std::string registered;
  std::getline(lines, registered);
  CHECK(registered == "_warden");
  std::set<std::string> functions;
  for (std::string line; std::getline(lines, line);) functions.insert(line);
  for (const auto& h : all_help()) {
    std::string fn = "_" + joined(h.path, "_");
    for (char& c : fn)
      if (c == '-') c = '_';
    INFO(joined(h.path, " "));
    CHECK(functions.count(fn) == 1);
    for (const auto& option : h.long_options)
      CHECK(script.out.find(option + "[") != std::string::npos);
    for (const auto& sub : h.subcommands)
      CHECK(script.out.find("'" + sub + ":") != std::string::npos);
  }
}

TEST_CASE("a manual page per command, rendered by groff without a warning, with its options",
          "[cli][man]") {
  TempDir dir{"warden-completion"};
  Run r = run_warden({"man", (dir.path() / "man").string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::set<std::string> pages, expected;
  for (const auto& entry : fs::directory_iterator(dir.path() / "man"))
    pages.insert(entry.path().filename().string());
  for (const auto& h : all_help()) expected.insert(page_of(h));
  CHECK(pages == expected);
  for (const auto& h : all_help()) {
    const fs::path page = dir.path() / "man" / page_of(h);
    INFO(page.string());
    REQUIRE(fs::exists(page));
    const std::string roff = contents_of(page);
    CHECK(std::all_of(roff.begin(), roff.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
    // -ww: every warning; -P-cbou: plain text, no overstriking, to search.
    Run rendered = run_shell("groff -man -Tutf8 -ww -P-cbou '" + page.string() + "'");
    CHECK(rendered.code == 0);
    CHECK(rendered.err == "");
    CHECK(rendered.out.find("NAME") != std::string::npos);
    for (const auto& option : h.long_options) CHECK(rendered.out.find(option) != std::string::npos);
    for (const auto& sub : h.subcommands) {
      const std::string sub_page = joined(h.path, "-") + "-" + sub + "(1)";
      CHECK(rendered.out.find(sub_page) != std::string::npos);
    }
    // What whatis/apropos index: the NAME line.
    Run whatis = run_shell("lexgrog '" + page.string() + "'");
    CHECK(whatis.code == 0);
    CHECK(whatis.out.find(": \"" + joined(h.path, "-") + " - ") != std::string::npos);
  }
}

TEST_CASE("the completions and pages the build generated are the binary's",
          "[cli][completion][man]") {
  const fs::path generated = fs::path(WARDEN_BINARY_DIR) / "packaging";
  for (const auto& [shell, file] : std::vector<std::pair<std::string, std::string>>{
           {"bash", "warden.bash"}, {"zsh", "_warden"}, {"fish", "warden.fish"}}) {
    INFO(shell);
    Run r = run_warden({"completion", shell});
    REQUIRE(r.code == 0);
    CHECK(contents_of(generated / "completions" / file) == r.out);
  }
  TempDir dir{"warden-completion"};
  REQUIRE(run_warden({"man", dir.path().string()}).code == 0);
  std::set<std::string> built, fresh;
  for (const auto& entry : fs::directory_iterator(generated / "man"))
    built.insert(entry.path().filename().string());
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    fresh.insert(entry.path().filename().string());
    INFO(entry.path().filename().string());
    CHECK(contents_of(entry.path()) == contents_of(generated / "man" / entry.path().filename()));
  }
  CHECK(built == fresh);
}

TEST_CASE("completion and man fail loudly", "[cli][completion][man]") {
  Run unknown = run_warden({"completion", "tcsh"});
  CHECK(unknown.code == 2);
  CHECK(unknown.out.empty());
  Run missing = run_warden({"completion"});
  CHECK(missing.code == 2);
  TempDir dir{"warden-completion"};
  put_file(dir.path() / "file", "x");
  Run not_a_dir = run_warden({"man", (dir.path() / "file" / "man").string()});
  CHECK(not_a_dir.code == 4);
  CHECK(not_a_dir.err.find("warden: man: cannot create") != std::string::npos);
  Run unwritable =
      run_warden({"completion", "bash", "--output", (dir.path() / "file" / "x.bash").string()});
  CHECK(unwritable.code == 4);
  CHECK(unwritable.err.find("warden: completion: cannot open") != std::string::npos);
  Run written =
      run_warden({"completion", "bash", "--output", (dir.path() / "warden.bash").string()});
  CHECK(written.code == 0);
  CHECK(written.out.empty());
  CHECK(contents_of(dir.path() / "warden.bash") == run_warden({"completion", "bash"}).out);
}
