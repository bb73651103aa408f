// `warden check`, `warden dry-run`, `warden test`: the rule author's commands. They share
// the daemon's load path (engine/rule_files.h: load_policy), its defaults (engine/defaults.h)
// and one Engine.
#include <rapidjson/document.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "engine/case_runner.h"
#include "engine/engine.h"
#include "engine/json_writer.h"
#include "engine/rule_files.h"

namespace warden::cli {
namespace {

struct EngineFlags {
  std::string workspace;
  std::string home;
  std::string default_outcome = "approval-required";
};

// Defaults are the engine's (engine/defaults.h), as for `warden serve`.
void add_engine_flags(CLI::App* cmd, EngineFlags* flags) {
  flags->workspace = kDefaultWorkspaceRoot;
  flags->home = kDefaultHome;
  cmd->add_option("--workspace", flags->workspace, "Workspace root: paths inside it are in the workspace")
      ->capture_default_str();
  cmd->add_option("--home", flags->home, "What ~ and $HOME mean in paths")->capture_default_str();
  cmd->add_option("--default-outcome", flags->default_outcome, "Outcome when no rule decides")
      ->check(CLI::IsMember({"approve", "reject", "approval-required"}))
      ->capture_default_str();
}

EngineOptions engine_options(const EngineFlags& flags) {
  EngineOptions o;
  o.workspace_root = flags.workspace;
  o.home = flags.home;
  o.default_outcome = *parse_outcome(flags.default_outcome);
  return o;
}

void print_diagnostics(const Diagnostics& diagnostics, bool json, std::FILE* out) {
  for (const auto& d : diagnostics) std::fprintf(out, "%s\n", (json ? d.to_json() : d.to_text()).c_str());
}

// Loads rules; prints diagnostics to stderr on failure and returns null.
std::shared_ptr<const Policy> load_rules(const std::vector<std::string>& paths, bool json) {
  LoadedPolicy loaded = load_policy(paths);
  print_diagnostics(loaded.diagnostics, json, stderr);
  return loaded.policy;
}

bool read_input(const std::string& file, std::string* text) {
  if (file == "-") {
    std::ostringstream s;
    s << std::cin.rdbuf();
    *text = s.str();
    return true;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *text = s.str();
  return true;
}

// ---- check ----------------------------------------------------------------

void register_check(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("check", "Compile rule files or directories and print every diagnostic");
  auto paths = std::make_shared<std::vector<std::string>>();
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("paths", *paths, "Rule files (.clp) or directories")->required();
  cmd->add_option("--format", *format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([=] {
    LoadedPolicy loaded = load_policy(*paths);
    const Diagnostics& diagnostics = loaded.diagnostics;
    const bool json = *format == "json";
    if (json) {
      std::string out = "{\"ok\":";
      out += loaded.policy ? "true" : "false";
      if (loaded.policy) {
        out += ",\"rules\":" + std::to_string(loaded.policy->rule_count()) + ",\"rules_digest\":";
        append_json_string(out, loaded.policy->digest());
      }
      out += ",\"diagnostics\":[";
      for (std::size_t i = 0; i < diagnostics.size(); ++i) out += (i ? "," : "") + diagnostics[i].to_json();
      out += "]}";
      std::printf("%s\n", out.c_str());
    } else {
      print_diagnostics(diagnostics, false, stdout);
      if (loaded.policy)
        std::printf("ok: %zu rules from %zu files, %s\n", loaded.policy->rule_count(), loaded.files,
                    loaded.policy->digest().c_str());
      else
        std::printf("%zu error(s); nothing loaded\n", diagnostics.size());
    }
    *exit_code = loaded.policy ? kExitOk : kExitRejected;
  });
}

// ---- dry-run --------------------------------------------------------------

std::string text_line(const Decision& d) {
  std::string out = std::string(outcome_name(d.outcome)) + "  " + d.reason;
  for (const auto& r : d.rules)
    out += "\n  " + std::string(r.monitor ? "[monitor] " : "") + r.rule + ": " +
           std::string(outcome_name(r.outcome)) + " (" + r.reason + ")";
  return out;
}

void register_dry_run(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("dry-run", "Decide one JSON proposal or JSON lines of them; nothing is actuated");
  struct Args {
    std::vector<std::string> rules;
    std::string input = "-";
    std::string format = "json";
    bool explain = false;
    EngineFlags engine;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--rules", a->rules, "Rule file or directory (repeatable; default: the shipped rules)")
      ->allow_extra_args(false);
  cmd->add_option("input", a->input, "Proposal file (JSON or JSON lines), - for stdin")->capture_default_str();
  cmd->add_flag("--explain", a->explain, "Also print the facts the rules saw");
  cmd->add_option("--format", a->format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  add_engine_flags(cmd, &a->engine);
  cmd->callback([=] {
    auto policy = load_rules(a->rules, a->format == "json");  // empty: the shipped rules
    if (!policy) { *exit_code = kExitUsage; return; }
    std::string text;
    if (!read_input(a->input, &text)) {
      std::fprintf(stderr, "warden: cannot read %s\n", a->input.c_str());
      *exit_code = kExitUsage;
      return;
    }
    Engine engine(policy, engine_options(a->engine));
    // One JSON document (possibly spread over lines) is a single proposal; otherwise lines.
    rapidjson::Document whole;
    whole.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
    std::vector<std::pair<long, std::string>> items;
    const bool single = !whole.HasParseError();
    if (single) {
      items.push_back({1, text});
    } else {
      std::istringstream lines(text);
      std::string line;
      for (long n = 1; std::getline(lines, line); ++n)
        if (line.find_first_not_of(" \t\r") != std::string::npos) items.push_back({n, line});
    }
    bool any_invalid = false;
    Outcome last = Outcome::Approve;
    for (const auto& [line_no, json] : items) {
      DecideRequest req;
      req.proposal_json = json;
      req.explain = a->explain;
      DecideResult r = engine.decide(req);
      if (!r.ok) {
        any_invalid = true;
        if (a->format == "json") {
          std::string out = "{\"line\":" + std::to_string(line_no) + ",\"error\":" + r.error.to_json() + "}";
          std::printf("%s\n", out.c_str());
        } else {
          std::printf("line %ld: error %s: %s\n", line_no, r.error.code.c_str(), r.error.message.c_str());
        }
        continue;
      }
      last = r.decision.outcome;
      std::printf("%s\n", (a->format == "json" ? decision_to_json(r.decision, a->explain) : text_line(r.decision)).c_str());
    }
    std::fflush(stdout);
    if (items.empty()) {
      std::fprintf(stderr, "warden: no proposal in input\n");
      *exit_code = kExitUsage;
    } else if (any_invalid) {
      *exit_code = kExitUsage;
    } else {
      *exit_code = items.size() == 1 ? exit_code_for(last) : kExitOk;
    }
  });
}

// ---- test -----------------------------------------------------------------

void register_test(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("test", "Run rule test cases (*.jsonl, *.json beside the rules)");
  struct Args {
    std::vector<std::string> paths;
    std::string format = "text";
    bool verbose = false;
    EngineFlags engine;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("paths", a->paths, "Directories or files holding rules and cases")->required();
  cmd->add_option("--format", a->format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  cmd->add_flag("-v,--verbose", a->verbose, "Print passing cases too");
  add_engine_flags(cmd, &a->engine);
  cmd->callback([=] {
    const bool json = a->format == "json";
    auto policy = load_rules(a->paths, json);
    if (!policy) { *exit_code = kExitUsage; return; }
    Diagnostics diagnostics;
    std::vector<RuleCase> cases;
    for (const auto& file : list_files(a->paths, {".jsonl", ".json"})) {
      std::string text;
      if (!read_input(file, &text)) {
        diagnostics.push_back({code::kRead, Severity::Error, file, 0, "", "cannot read"});
        continue;
      }
      auto more = read_cases(file, text, &diagnostics);
      cases.insert(cases.end(), more.begin(), more.end());
    }
    print_diagnostics(diagnostics, json, stderr);
    CaseReport report = run_cases(policy, cases, engine_options(a->engine));
    if (json) {
      std::string out = "{\"passed\":" + std::to_string(report.passed) + ",\"failed\":" + std::to_string(report.failed) + ",\"cases\":[";
      for (std::size_t i = 0; i < report.results.size(); ++i) {
        const auto& r = report.results[i];
        out += i ? "," : "";
        out += "{\"name\":" + json_string(r.test->name) + ",\"file\":" + json_string(r.test->file) +
               ",\"line\":" + std::to_string(r.test->line) + ",\"passed\":" + (r.passed ? "true" : "false") +
               ",\"failure\":" + json_string(r.failure) + "}";
      }
      out += "],\"uncovered_rules\":[";
      for (std::size_t i = 0; i < report.uncovered_rules.size(); ++i)
        out += (i ? "," : "") + json_string(report.uncovered_rules[i]);
      out += "]}";
      std::printf("%s\n", out.c_str());
    } else {
      for (const auto& r : report.results) {
        if (r.passed && !a->verbose) continue;
        std::printf("%s %s (%s:%ld)\n", r.passed ? "PASS" : "FAIL", r.test->name.c_str(), r.test->file.c_str(), r.test->line);
        if (!r.passed) std::printf("%s", r.failure.c_str());
      }
      std::printf("coverage: %zu of %zu rules fired by some case\n",
                  policy->rule_count() - report.uncovered_rules.size(), policy->rule_count());
      for (const auto& name : report.uncovered_rules) std::printf("  not covered: %s\n", name.c_str());
      std::printf("%zu passed, %zu failed\n", report.passed, report.failed);
    }
    *exit_code = report.failed || !diagnostics.empty() || cases.empty() ? kExitRejected : kExitOk;
  });
}

}  // namespace

void register_rule_commands(CLI::App& app, int* exit_code) {
  register_check(app, exit_code);
  register_dry_run(app, exit_code);
  register_test(app, exit_code);
}

}  // namespace warden::cli
