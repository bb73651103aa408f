// `warden check`, `warden dry-run`, `warden test`: the rule author's commands. They share
// the daemon's load path (engine/rule_files.h: load_policy), its defaults (engine/defaults.h)
// and one Engine.
#include <rapidjson/document.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "bindings/json.h"
#include "bindings/local_time.h"
#include "cli/commands.h"
#include "cli/proposal_stream.h"
#include "cli/terminal_text.h"
#include "engine/case_runner.h"
#include "engine/data_files.h"
#include "engine/engine.h"
#include "engine/json_writer.h"
#include "engine/rule_files.h"
#include "engine/session_memory.h"
#include "server/config.h"
#include "server/own_files.h"

namespace warden::cli {
namespace {

struct EngineFlags {
  std::string workspace;
  std::string home;
  std::string default_outcome = "approval-required";
  long long deadline_ms = 100;
  std::vector<std::string> own_paths;  // --own-path
  std::string config;                  // --config: the daemon's own paths from its warden.toml
};

// Defaults are the engine's (engine/defaults.h), as for `warden serve`. `warden test` judges
// what the rules decide, not how fast a loaded machine runs them: its deadline is longer.
void add_engine_flags(CLI::App* cmd, EngineFlags* flags, long long deadline_ms = 100) {
  flags->deadline_ms = deadline_ms;
  cmd->add_option("--deadline-ms", flags->deadline_ms,
                  "Wall time a decision may take before it fails closed (E_DEADLINE)")
      ->check(CLI::Range(1LL, 60000LL))
      ->capture_default_str();
  flags->workspace = kDefaultWorkspaceRoot;
  flags->home = kDefaultHome;
  cmd->add_option("--workspace", flags->workspace,
                  "Workspace root: paths inside it are in the workspace")
      ->capture_default_str();
  cmd->add_option("--home", flags->home, "What ~ and $HOME mean in paths")->capture_default_str();
  cmd->add_option("--default-outcome", flags->default_outcome, "Outcome when no rule decides")
      ->check(CLI::IsMember({"approve", "reject", "approval-required"}))
      ->capture_default_str();
  cmd->add_option("--own-path", flags->own_paths,
                  "A file or directory of the daemon's own (repeatable): its class is warden-own, "
                  "as the daemon gives its config, tokens, rules, state, keys, socket and binary")
      ->allow_extra_args(false);
  cmd->add_option("--config", flags->config,
                  "The daemon's warden.toml: decide with its own files as `warden serve` does "
                  "(config, tokens, rules, state directory, audit log and keys, TLS key, socket)");
}

// The own paths of --config (loaded as `warden serve` loads it) and --own-path. False (with
// the error printed) when the config cannot be read.
bool add_own_paths(const EngineFlags& flags, EngineOptions* o) {
  for (const std::string& p : flags.own_paths) {
    if (p.empty() || p[0] != '/') {
      std::fprintf(stderr, "warden: --own-path must be an absolute path: %s\n",
                   printable(p).c_str());
      return false;
    }
    o->own_paths.push_back(p);
  }
  if (flags.config.empty()) return true;
  server::Config config;
  server::ConfigErrors errors = server::load_config_file(flags.config, &config);
  if (errors.empty()) errors = server::resolve_state_paths(&config);
  if (!errors.empty()) {
    for (const auto& e : errors)
      std::fprintf(stderr, "warden: %s\n", printable(e.to_text(flags.config)).c_str());
    return false;
  }
  for (std::string& p : server::own_paths(config)) o->own_paths.push_back(std::move(p));
  return true;
}

EngineOptions engine_options(const EngineFlags& flags) {
  EngineOptions o;
  o.workspace_root = flags.workspace;
  o.home = flags.home;
  o.default_outcome = *parse_outcome(flags.default_outcome);
  o.deadline = std::chrono::milliseconds(flags.deadline_ms);
  return o;
}

void print_diagnostics(const Diagnostics& diagnostics, bool json, std::FILE* out) {
  for (const auto& d : diagnostics)
    std::fprintf(out, "%s\n",
                 (json ? json_for_terminal(d.to_json()) : printable(d.to_text())).c_str());
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

// A report of several lines: each line made printable, the line breaks kept.
std::string printable_lines(std::string_view text) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t nl = text.find('\n', at);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    out += printable(text.substr(at, end - at));
    if (nl != std::string_view::npos) out += '\n';
    at = end + 1;
  }
  return out;
}

// ---- check ----------------------------------------------------------------

void register_check(CLI::App& app, int* exit_code) {
  auto* cmd =
      app.add_subcommand("check", "Compile rule files or directories and print every diagnostic");
  struct Args {
    std::vector<std::string> paths;
    std::string format = "text";
    std::string config;
    std::string default_outcome;
    bool strict = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("paths", a->paths, "Rule files (.clp) or directories")->required();
  cmd->add_option("--format", a->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("-c,--config", a->config,
                  "warden.toml whose default_outcome the rules will run with");
  cmd->add_option("--default-outcome", a->default_outcome,
                  "Outcome when no rule decides (overrides --config; default approval-required)")
      ->check(CLI::IsMember({"approve", "reject", "approval-required"}));
  cmd->add_flag("--strict", a->strict,
                "Warnings fail the check (exit 1); errors always fail it (exit 2)");
  cmd->callback([=] {
    std::string default_outcome = "approval-required";
    if (!a->config.empty()) {
      server::Config config;
      server::ConfigErrors errors = server::load_config_file(a->config, &config);
      if (!errors.empty()) {
        for (const auto& e : errors)
          std::fprintf(stderr, "warden: %s\n", printable(e.to_text(a->config)).c_str());
        *exit_code = kExitUsage;
        return;
      }
      default_outcome = config.default_outcome;
    }
    if (!a->default_outcome.empty()) default_outcome = a->default_outcome;
    const bool fails_open = warn_if_default_approve(default_outcome);

    LoadedPolicy loaded = load_policy(a->paths);
    const Diagnostics& diagnostics = loaded.diagnostics;
    const bool json = a->format == "json";
    if (json) {
      std::string out = "{\"ok\":";
      out += loaded.policy ? "true" : "false";
      if (loaded.policy) {
        out += ",\"rules\":" + std::to_string(loaded.policy->rule_count()) + ",\"rules_digest\":";
        append_json_string(out, loaded.policy->digest());
        // The effective pack: each rule an overlay changes, what it asserts and what counts.
        out += ",\"overlay\":[";
        const auto& entries = loaded.policy->overlay();
        for (std::size_t i = 0; i < entries.size(); ++i) {
          const OverlayEntry& e = entries[i];
          out += i ? ",{\"rule\":" : "{\"rule\":";
          append_json_string(out, e.rule);
          out += ",\"at\":";
          append_json_string(out, e.at());
          out += ",\"declared\":";
          append_json_string(out, e.declared);
          if (e.disable) out += ",\"disabled\":true";
          if (e.outcome) {
            out += ",\"outcome\":";
            append_json_string(out, outcome_name(*e.outcome));
          }
          if (e.reason) {
            out += ",\"reason\":";
            append_json_string(out, *e.reason);
          }
          out += '}';
        }
        out += ']';
        // The data rules read: each set of the data files, where it is defined, its size.
        out += ",\"data\":[";
        const auto sets = loaded.policy->data_sets();
        for (std::size_t i = 0; i < sets.size(); ++i) {
          out += i ? ",{\"name\":" : "{\"name\":";
          append_json_string(out, sets[i].name);
          out += ",\"kind\":";
          append_json_string(out, sets[i].kind);
          out += ",\"entries\":" + std::to_string(sets[i].entries) + ",\"at\":";
          append_json_string(out, sets[i].at);
          out += '}';
        }
        out += ']';
      }
      out += ",\"default_outcome\":";
      append_json_string(out, default_outcome);
      out += ",\"diagnostics\":[";
      for (std::size_t i = 0; i < diagnostics.size(); ++i)
        out += (i ? "," : "") + diagnostics[i].to_json();
      out += "]}";
      std::printf("%s\n", json_for_terminal(out).c_str());
    } else {
      print_diagnostics(diagnostics, false, stdout);
      if (loaded.policy) {
        std::printf("ok: %zu rules from %zu files, %s\n", loaded.policy->rule_count(), loaded.files,
                    loaded.policy->digest().c_str());
        const auto& entries = loaded.policy->overlay();
        if (!entries.empty()) std::printf("overlay: %zu rule(s) changed\n", entries.size());
        for (const OverlayEntry& e : entries)
          std::printf("  %s: %s\n", printable(e.rule).c_str(), printable(e.summary()).c_str());
        const auto sets = loaded.policy->data_sets();
        if (!sets.empty()) std::printf("data: %zu set(s)\n", sets.size());
        for (const auto& d : sets)
          std::printf("  %s: %s of %zu (%s)\n", printable(d.name).c_str(), d.kind.c_str(),
                      d.entries, printable(d.at).c_str());
      } else {
        std::size_t errors = 0, warnings = 0;
        for (const auto& d : diagnostics) ++(d.severity == Severity::Warning ? warnings : errors);
        if (warnings)
          std::printf("%zu error(s), %zu warning(s); nothing loaded\n", errors, warnings);
        else
          std::printf("%zu error(s); nothing loaded\n", errors);
      }
    }
    bool warned = fails_open;
    for (const auto& d : diagnostics) warned = warned || d.severity == Severity::Warning;
    // Rules that do not load are an input error in every command that reads rules (check,
    // dry-run, test, replay): exit 2. Warnings under --strict fail the check itself: exit 1.
    *exit_code = !loaded.policy ? kExitUsage : a->strict && warned ? kExitRejected : kExitOk;
  });
}

// ---- dry-run --------------------------------------------------------------

// The decision, the rules that fired and, with --explain, every fact the rules saw (effects,
// path classes, history …), one per line.
// `label` names the input the decision belongs to ("line 3"), as an input error's line does.
std::string text_line(const std::string& label, const Decision& d, bool explain) {
  std::string out =
      label + ": " + std::string(outcome_name(d.outcome)) + "  " + printable(d.reason);
  for (const auto& r : d.rules) {
    out += "\n  " + std::string(r.monitor ? "[monitor] " : "") + printable(r.rule) + ": " +
           std::string(outcome_name(r.outcome));
    if (!r.overlay.empty())
      out += " (overlay " + printable(r.overlay) +
             (r.disabled ? std::string("; disabled")
                         : "; was " + std::string(outcome_name(r.asserted))) +
             ")";
    out += " (" + printable(r.reason) + ")";
  }
  if (!explain || d.facts_json.empty()) return out;
  rapidjson::Document facts;  // the engine's own list of strings
  if (warden::json::parse_stored(d.facts_json, &facts) || !facts.IsArray())
    return out + "\n  facts: (unreadable)";
  out += "\n  facts:";
  for (const auto& f : facts.GetArray())
    if (f.IsString())
      out += "\n    " + printable(std::string_view(f.GetString(), f.GetStringLength()));
  return out;
}

// Opens the input for reading; -1 (after a message) when it cannot be read.
int open_input(const std::string& path) {
  if (path == "-") return STDIN_FILENO;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) std::fprintf(stderr, "warden: cannot read %s\n", printable(path).c_str());
  return fd;
}

// Decides the proposals of a --session file in order, remembering their approved effects.
// False (after a message naming the line) when the file cannot be read or holds an input
// that is not a proposal: a history that silently lost a step would test the wrong thing.
bool replay_session(Engine& engine, SessionMemory& memory, const std::string& path,
                    const std::optional<std::string>& principal,
                    const std::vector<std::string>& groups) {
  if (path == "-") {
    std::fprintf(stderr, "warden: --session must name a file (stdin holds the proposals)\n");
    return false;
  }
  int fd = open_input(path);
  if (fd < 0) return false;
  ProposalStream stream(fd, engine.options().max_input_bytes);
  ProposalStream::Item item;
  bool ok = true;
  while (ok && stream.next(&item)) {
    DecideRequest req;
    req.proposal_json = item.text;
    req.principal = principal;
    req.groups = groups;
    DecideResult r = decide_in_session(engine, memory, req, session_key(item.text, principal));
    if (!r.ok) {
      std::fprintf(stderr, "warden: %s:%ld: not a proposal: %s: %s\n", printable(path).c_str(),
                   item.line, printable(r.error.code).c_str(), printable(r.error.message).c_str());
      ok = false;
    }
  }
  if (ok && stream.read_error()) {
    std::fprintf(stderr, "warden: cannot read %s\n", printable(path).c_str());
    ok = false;
  }
  ::close(fd);
  return ok;
}

void register_dry_run(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "dry-run",
      "Decide one JSON proposal or JSON lines of them, each as soon as it is read; nothing is "
      "actuated. Exit: 2 if any input was invalid, else 1 if any reject, else 3 if any "
      "approval-required, else 0");
  struct Args {
    std::vector<std::string> rules;
    std::string input = "-";
    std::string format = "json";
    bool explain = false;
    std::optional<std::string> principal;
    std::vector<std::string> groups;
    std::string session;
    std::string now;
    EngineFlags engine;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--rules", a->rules,
                  "Rule file or directory (repeatable; default: the shipped rules)")
      ->allow_extra_args(false);
  cmd->add_option(
      "--now", a->now,
      "Decide at this time (RFC 3339 with an offset, e.g. 2026-03-29T01:30:00+01:00) instead of "
      "the system clock: what (now), local-hour and the other time functions read");
  cmd->add_option(
      "--session", a->session,
      "Earlier proposals of the session (JSON lines), decided first in order: their approved "
      "effects are the history the input is decided with, as the daemon's session memory "
      "keeps it; approved input proposals join the history too");
  cmd->add_option("input", a->input, "Proposal file (JSON or JSON lines), - for stdin")
      ->capture_default_str();
  cmd->add_option(
      "--principal", a->principal,
      "Decide as this authenticated principal (as the daemon does for a token's owner)");
  cmd->add_option("--group", a->groups, "A group of that principal (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--explain", a->explain, "Also print the facts the rules saw");
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_engine_flags(cmd, &a->engine);
  cmd->callback([=] {
    if (!a->groups.empty() && !a->principal) {
      std::fprintf(stderr, "warden: --group needs --principal (groups belong to a principal)\n");
      *exit_code = kExitUsage;
      return;
    }
    std::optional<std::int64_t> now;
    if (!a->now.empty()) {
      std::string why;
      now = local_time::parse_rfc3339(a->now, &why);
      if (!now) {
        std::fprintf(stderr, "warden: --now %s: %s\n", printable(a->now).c_str(),
                     printable(why).c_str());
        *exit_code = kExitUsage;
        return;
      }
    }
    warn_if_default_approve(a->engine.default_outcome);
    auto policy = load_rules(a->rules, a->format == "json");  // empty: the shipped rules
    if (!policy) {
      *exit_code = kExitUsage;
      return;
    }
    EngineOptions options = engine_options(a->engine);
    // Every decision of the run, the --session ones included, is made at that one time.
    if (now) options.clock = [t = *now] { return t; };
    if (!add_own_paths(a->engine, &options)) {
      *exit_code = kExitUsage;
      return;
    }
    int fd = open_input(a->input);
    if (fd < 0) {
      *exit_code = kExitUsage;
      return;
    }
    Engine engine(policy, options);
    // With --session, every proposal is decided in its session (principal, context.session).
    SessionMemory memory;
    const bool in_session = !a->session.empty();
    if (in_session && !replay_session(engine, memory, a->session, a->principal, a->groups)) {
      if (fd != STDIN_FILENO) ::close(fd);
      *exit_code = kExitUsage;
      return;
    }
    ProposalStream input(fd, options.max_input_bytes);
    RunStatus status;
    bool any = false;
    ProposalStream::Item item;
    // Each proposal is decided and printed before the next line is read, and the output is
    // flushed whenever reading the next would wait: a pipeline sees each answer before it writes
    // the next proposal, and a file of 50,000 is not 50,000 writes.
    while (input.next(&item)) {
      any = true;
      DecideRequest req;
      req.proposal_json = item.text;
      req.explain = a->explain;
      req.principal = a->principal;
      req.groups = a->groups;
      DecideResult r =
          in_session ? decide_in_session(engine, memory, req, session_key(item.text, a->principal))
                     : engine.decide(req);
      if (!r.ok) {
        status.add_invalid();
        if (a->format == "json") {
          std::string out =
              "{\"line\":" + std::to_string(item.line) + ",\"error\":" + r.error.to_json() + "}";
          std::printf("%s\n", json_for_terminal(out).c_str());
        } else {
          std::printf("line %ld: error %s: %s\n", item.line, printable(r.error.code).c_str(),
                      printable(r.error.message).c_str());
        }
      } else {
        status.add(r.decision.outcome);
        std::printf("%s\n",
                    (a->format == "json"
                         ? json_for_terminal(decision_to_json(r.decision, a->explain))
                         : text_line("line " + std::to_string(item.line), r.decision, a->explain))
                        .c_str());
      }
      if (!input.ready()) std::fflush(stdout);
    }
    if (fd != STDIN_FILENO) ::close(fd);
    if (input.read_error()) {
      std::fprintf(stderr, "warden: cannot read %s\n", printable(a->input).c_str());
      *exit_code = kExitUsage;
    } else if (!any) {
      std::fprintf(stderr, "warden: no proposal in input\n");
      *exit_code = kExitUsage;
    } else {
      *exit_code = status.exit_code();
    }
  });
}

// ---- test -----------------------------------------------------------------

void register_test(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("test", "Run rule test cases (*.jsonl, *.json beside the rules)");
  struct Args {
    std::vector<std::string> paths;
    std::vector<std::string> rules;
    std::string format = "text";
    bool verbose = false;
    bool fail_uncovered = false;
    EngineFlags engine;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("paths", a->paths, "Directories or files holding rules and cases")->required();
  cmd->add_option(
         "--rules", a->rules,
         "Rules loaded first, beside PATHS, whose cases are not run (repeatable): a team's "
         "overlay and cases in PATHS are tested against the effective pack, e.g. "
         "--rules rules team/")
      ->allow_extra_args(false);
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_flag("-v,--verbose", a->verbose, "Print passing cases too");
  cmd->add_flag("--fail-uncovered", a->fail_uncovered,
                "Fail (exit 1) when a rule under test fired in no case: a rule no case reaches is "
                "untested, or can never fire");
  add_engine_flags(cmd, &a->engine, 2000);
  cmd->callback([=] {
    const bool json = a->format == "json";
    warn_if_default_approve(a->engine.default_outcome);
    std::vector<std::string> rule_paths = a->rules;
    rule_paths.insert(rule_paths.end(), a->paths.begin(), a->paths.end());
    auto policy = load_rules(rule_paths, json);
    if (!policy) {
      *exit_code = kExitUsage;
      return;
    }
    Diagnostics diagnostics;
    std::vector<RuleCase> cases;
    for (const auto& file : list_files(a->paths, {".jsonl", ".json"})) {
      if (is_data_file(file)) continue;  // a *.data.json file is the rules' data, not cases
      std::string text;
      if (!read_input(file, &text)) {
        diagnostics.push_back({code::kRead, Severity::Error, file, 0, "", "cannot read"});
        continue;
      }
      auto more = read_cases(file, text, &diagnostics);
      cases.insert(cases.end(), more.begin(), more.end());
    }
    print_diagnostics(diagnostics, json, stderr);
    EngineOptions options = engine_options(a->engine);
    if (!add_own_paths(a->engine, &options)) {
      *exit_code = kExitUsage;
      return;
    }
    CaseReport report = run_cases(policy, cases, options);
    // Coverage is of the rules under test: with --rules, those of the files in PATHS.
    std::size_t rule_count = policy->rule_count();
    if (!a->rules.empty()) {
      const std::vector<std::string> files = list_files(a->paths, {".clp"});
      std::vector<std::string> tested = policy->rule_names(files);
      std::sort(tested.begin(), tested.end());
      rule_count = tested.size();
      auto& u = report.uncovered_rules;
      u.erase(std::remove_if(u.begin(), u.end(),
                             [&](const std::string& n) {
                               return !std::binary_search(tested.begin(), tested.end(), n);
                             }),
              u.end());
    }
    if (json) {
      std::string out = "{\"passed\":" + std::to_string(report.passed) +
                        ",\"failed\":" + std::to_string(report.failed) + ",\"cases\":[";
      for (std::size_t i = 0; i < report.results.size(); ++i) {
        const auto& r = report.results[i];
        out += i ? "," : "";
        out += "{\"name\":" + json_string(r.test->name) + ",\"file\":" + json_string(r.test->file) +
               ",\"line\":" + std::to_string(r.test->line) +
               ",\"passed\":" + (r.passed ? "true" : "false") +
               ",\"failure\":" + json_string(r.failure) + "}";
      }
      out += "],\"uncovered_rules\":[";
      for (std::size_t i = 0; i < report.uncovered_rules.size(); ++i)
        out += (i ? "," : "") + json_string(report.uncovered_rules[i]);
      out += "]}";
      std::printf("%s\n", json_for_terminal(out).c_str());
    } else {
      for (const auto& r : report.results) {
        if (r.passed && !a->verbose) continue;
        std::printf("%s %s (%s:%ld)\n", r.passed ? "PASS" : "FAIL", printable(r.test->name).c_str(),
                    printable(r.test->file).c_str(), r.test->line);
        if (!r.passed) std::printf("%s", printable_lines(r.failure).c_str());
      }
      std::printf("coverage: %zu of %zu rules fired by some case\n",
                  rule_count - report.uncovered_rules.size(), rule_count);
      for (const auto& name : report.uncovered_rules)
        std::printf("  not covered: %s\n", printable(name).c_str());
      std::printf("%zu passed, %zu failed\n", report.passed, report.failed);
    }
    const bool uncovered = a->fail_uncovered && !report.uncovered_rules.empty();
    if (uncovered && !json)
      std::printf("--fail-uncovered: %zu rule(s) fired in no case\n",
                  report.uncovered_rules.size());
    *exit_code = report.failed || uncovered || !diagnostics.empty() || cases.empty() ? kExitRejected
                                                                                     : kExitOk;
  });
}

}  // namespace

bool warn_if_default_approve(std::string_view default_outcome) {
  if (default_outcome != "approve") return false;
  std::fprintf(
      stderr,
      "warden: WARNING: default_outcome is \"approve\": every proposal that no rule decides "
      "is APPROVED (fail open). Use \"approval-required\" or \"reject\".\n");
  return true;
}

void register_rule_commands(CLI::App& app, int* exit_code) {
  register_check(app, exit_code);
  register_dry_run(app, exit_code);
  register_test(app, exit_code);
}

}  // namespace warden::cli
