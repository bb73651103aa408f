// How cli_docs reads a CLI11 tree (hidden parts left out, an IsMember check's choices, an
// option group's options, flags and values) and how it writes roff and the scripts, on a small
// application built here.
#include "cli/cli_docs.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

using namespace warden::cli;

namespace {

struct Sample {
  CLI::App app{"Sample tool"};
  std::string format, config, secret, input, name;
  bool quiet = false;
  std::vector<std::string> rules;
  Sample() {
    app.add_flag("-q,--quiet", quiet, "Say less");
    auto* run = app.add_subcommand("run", "Run it. Exit: 0 done");
    run->add_option("--format", format, "Output format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    run->add_option("-c,--config", config, "The file, e.g. a.toml. Optional");
    run->add_option("--rules", rules, "Rule paths (repeatable)");
    run->add_option("--secret", secret, "Hidden")->group("");
    run->add_option("--token", name, "A token")->envname("SAMPLE_TOKEN");
    run->add_option("input", input, "The input \xe2\x80\xa6 \\ -")->required();
    auto* group = run->add_option_group("Transport");
    group->add_option("--addr", name, "Where");
    auto* hidden = app.add_subcommand("internal", "Not for users");
    hidden->group("");
    auto* nested = app.add_subcommand("db", "Database");
    nested->require_subcommand(1);
    nested->add_subcommand("migrate", ".starts with a dot");
  }
};

const OptionDoc* find_option(const CommandDoc& c, const std::string& long_name) {
  for (const auto& o : c.options)
    if (std::find(o.long_names.begin(), o.long_names.end(), long_name) != o.long_names.end())
      return &o;
  return nullptr;
}

}  // namespace

TEST_CASE("describe_command reads what the parser accepts and leaves out what is hidden",
          "[cli][completion]") {
  Sample s;
  const CommandDoc root = describe_command(s.app, "sample");
  REQUIRE(root.path == std::vector<std::string>{"sample"});
  REQUIRE(root.subcommands.size() == 2);  // run, db; not internal
  CHECK(root.subcommands[0].path == std::vector<std::string>{"sample", "run"});
  CHECK(root.subcommands[1].path == std::vector<std::string>{"sample", "db"});
  CHECK(root.subcommands[1].requires_subcommand);
  REQUIRE(find_option(root, "quiet") != nullptr);
  CHECK(find_option(root, "quiet")->value_name.empty());  // a flag
  CHECK(find_option(root, "quiet")->short_names == std::vector<std::string>{"q"});
  CHECK(find_option(root, "help") != nullptr);

  const CommandDoc& run = root.subcommands[0];
  REQUIRE(find_option(run, "format") != nullptr);
  CHECK(find_option(run, "format")->choices == std::vector<std::string>{"text", "json"});
  CHECK(find_option(run, "format")->value_name == "TEXT");
  CHECK(find_option(run, "config")->choices.empty());
  CHECK(find_option(run, "rules")->repeatable);
  CHECK_FALSE(find_option(run, "config")->repeatable);
  CHECK(find_option(run, "token")->envname == "SAMPLE_TOKEN");
  CHECK(find_option(run, "secret") == nullptr);  // hidden
  CHECK(find_option(run, "addr") != nullptr);    // from its option group
  REQUIRE(run.positionals.size() == 1);
  CHECK(run.positionals[0].name == "input");
  CHECK(run.positionals[0].required);
}

TEST_CASE("first_sentence stops at the first full stop that ends a sentence", "[cli][completion]") {
  CHECK(first_sentence("Run it. Exit: 0 done") == "Run it");
  CHECK(first_sentence("The file, e.g. a.toml. Optional") == "The file, e.g. a.toml");
  CHECK(first_sentence("One line.") == "One line");
  CHECK(first_sentence("First\nsecond. third") == "First");
}

TEST_CASE("man pages: one per command, ASCII roff, escapes where roff needs them", "[cli][man]") {
  Sample s;
  const auto pages = man_pages(describe_command(s.app, "sample"), "sample 1.0");
  std::vector<std::string> names;
  for (const auto& p : pages) names.push_back(p.file_name);
  CHECK(names ==
        std::vector<std::string>{"sample.1", "sample-run.1", "sample-db.1", "sample-db-migrate.1"});
  const std::string& run = pages[1].text;
  CHECK(run.find(".TH SAMPLE\\-RUN 1 \"\" \"sample 1.0\" \"Warden Manual\"\n") !=
        std::string::npos);
  CHECK(run.find(".SH NAME\nsample\\-run \\- Run it\n") != std::string::npos);
  CHECK(run.find("\\fB\\-\\-format\\fR \\fITEXT\\fR\nOutput format. One of: text, json.") !=
        std::string::npos);
  CHECK(run.find("The input \\[u2026] \\e \\-.") != std::string::npos);
  CHECK(run.find("$SAMPLE_TOKEN") != std::string::npos);
  CHECK(run.find("secret") == std::string::npos);
  CHECK(pages[2].text.find("\\fICOMMAND\\fR\n") != std::string::npos);  // db requires one
  CHECK(pages[3].text.find("\n\\&.starts with a dot\n") != std::string::npos);
  for (const auto& p : pages)
    CHECK(std::all_of(p.text.begin(), p.text.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
}

TEST_CASE("a name or choice the scripts could not list unquoted stops the generators",
          "[cli][completion]") {
  CLI::App app{"x"};
  std::string v;
  app.add_subcommand("go")
      ->add_option("--mode", v, "Mode")
      ->check(CLI::IsMember({"fast", "very slow"}));
  const CommandDoc root = describe_command(app, "x");
  CHECK_THROWS_WITH(bash_completion(root), Catch::Contains("very slow"));
  CHECK_THROWS_WITH(zsh_completion(root), Catch::Contains("very slow"));
  CHECK_THROWS_WITH(fish_completion(root), Catch::Contains("very slow"));
}
