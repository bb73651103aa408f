#include "engine/shell_facts.h"

#include <algorithm>
#include <vector>

#include "bindings/paths.h"
#include "engine/clips_env.h"
#include "engine/diagnostic.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

#include "engine/fact_writer_inline.h"  // after bindings/clips.h: CLIPS's types

namespace warden {

ShellFacts::ShellFacts(ClipsEnv& env, FactWriter& writer, EffectFacts* effects)
    : env_(env),
      w_(writer),
      effects_(effects),
      shell_command_(writer.bind_template("shell-command")),
      shell_assignment_(writer.bind_template("shell-assignment")),
      shell_redirect_(writer.bind_template("shell-redirect")),
      shell_error_(writer.bind_template("shell-error")),
      shell_command_slots_{
          shell_command_["proposal"], shell_command_["index"],    shell_command_["program"],
          shell_command_["argv"],     shell_command_["flags"],    shell_command_["args"],
          shell_command_["paths"],    shell_command_["wrappers"], shell_command_["assignments"],
          shell_command_["depth"],    shell_command_["cwd"],      shell_command_["dynamic"],
          shell_command_["runs"]},
      shell_assignment_slots_{shell_assignment_["proposal"], shell_assignment_["index"],
                              shell_assignment_["name"], shell_assignment_["value"],
                              shell_assignment_["dynamic"]},
      shell_redirect_slots_{shell_redirect_["proposal"], shell_redirect_["index"],
                            shell_redirect_["op"],       shell_redirect_["fd"],
                            shell_redirect_["target"],   shell_redirect_["path"]},
      shell_error_slots_{shell_error_["proposal"], shell_error_["message"]} {}

bool ShellFacts::assert_command(long long index, const shell::SimpleCommand& cmd,
                                const std::string& cwd, const PatternIndex& patterns) {
  const BindingContext& c = env_.state();
  std::vector<std::string> normalized;
  normalized.reserve(cmd.args.size());
  for (const auto& arg : cmd.args) normalized.push_back(paths::normalize(arg, cwd, c.home));
  std::vector<std::string> names;
  names.reserve(cmd.assignments.size());
  for (const auto& a : cmd.assignments) names.push_back(a.name);
  void* f = w_.fact(shell_command_);
  if (!f) return false;
  w_.put(f, shell_command_slots_.proposal, STRING, w_.id());
  w_.put_integer(f, shell_command_slots_.index, index);
  w_.put_string(f, shell_command_slots_.program, cmd.program);
  w_.put_strings(f, shell_command_slots_.argv, cmd.argv);
  w_.put_strings(f, shell_command_slots_.flags, cmd.flags);
  w_.put_strings(f, shell_command_slots_.args, cmd.args);
  w_.put_strings(f, shell_command_slots_.paths, normalized);
  w_.put_strings(f, shell_command_slots_.wrappers, cmd.wrappers);
  w_.put_strings(f, shell_command_slots_.assignments, names);
  w_.put_integer(f, shell_command_slots_.depth, cmd.depth);
  w_.put_string(f, shell_command_slots_.cwd, cwd);
  w_.put_symbol(f, shell_command_slots_.dynamic, cmd.dynamic ? "TRUE" : "FALSE");
  // The file the first word runs when it names one by a path, as (path-normalize w cwd) reads
  // it: rules join the history on it (`./build.sh` after a write of build.sh).
  if (!cmd.argv.empty() && cmd.argv.front().find('/') != std::string::npos)
    w_.put_string(f, shell_command_slots_.runs,
                  paths::normalize_at(cmd.argv.front(), cwd, c.workspace_root, c.home));
  if (!w_.finish(f)) return false;
  if (!w_.assert_derived_hits(derived_key::kShellProgram, cmd.program, patterns)) return false;
  for (const auto& a : cmd.assignments) {
    void* af = w_.fact(shell_assignment_);
    if (!af) return false;
    w_.put(af, shell_assignment_slots_.proposal, STRING, w_.id());
    w_.put_integer(af, shell_assignment_slots_.index, index);
    w_.put_string(af, shell_assignment_slots_.name, a.name);
    w_.put_string(af, shell_assignment_slots_.value, a.value);
    w_.put_symbol(af, shell_assignment_slots_.dynamic, a.dynamic ? "TRUE" : "FALSE");
    if (!w_.finish(af)) return false;
  }
  for (const auto& r : cmd.redirects) {
    void* rf = w_.fact(shell_redirect_);
    if (!rf) return false;
    w_.put(rf, shell_redirect_slots_.proposal, STRING, w_.id());
    w_.put_integer(rf, shell_redirect_slots_.index, index);
    w_.put_string(rf, shell_redirect_slots_.op, r.op);
    w_.put_integer(rf, shell_redirect_slots_.fd, r.fd);
    w_.put_string(rf, shell_redirect_slots_.target, r.target);
    w_.put_string(rf, shell_redirect_slots_.path,
                  r.duplicates_fd() ? "" : paths::normalize(r.target, cwd, c.home).c_str());
    if (!w_.finish(rf)) return false;
  }
  if (effects_ && !effects_->assert_command(index, cmd, cwd)) return false;
  return true;
}

bool ShellFacts::assert_line(const std::string& command, const std::string& start_cwd,
                             const PatternIndex& patterns) {
  const BindingContext& c = env_.state();
  shell::ParseResult parsed = shell::parse(command, w_.limits().shell);
  if (!parsed.ok) {
    switch (parsed.failure) {
      case shell::Failure::Deadline:
        w_.stop(code::kDeadline, parsed.error);
        return false;
      case shell::Failure::Limit:
        w_.stop(code::kInputTooLarge, "shell command over a cap: " + parsed.error);
        return false;
      case shell::Failure::Internal:
        w_.stop(code::kFacts, "the shell parser failed: " + parsed.error);
        return false;
      case shell::Failure::Syntax:
      case shell::Failure::None:
        break;
    }
    void* f = w_.fact(shell_error_);
    if (!f) return false;
    w_.put(f, shell_error_slots_.proposal, STRING, w_.id());
    w_.put_string(f, shell_error_slots_.message, parsed.error);
    return w_.finish(f);
  }
  // Each command runs in every directory the parser says it may (`cd X; …` may have
  // failed; a subshell's cd stays inside it): its facts are asserted once per distinct
  // directory. A directory that cannot be told is "/", so relative paths after it count
  // as outside the workspace.
  long long index = 0;
  std::vector<std::string> cwds;
  // `shopt -s dotglob` or GLOBIGNORE anywhere in the line: `*` may match ".env".
  bool dotglob = false;
  for (const auto& cmd : parsed.commands) {
    if (cmd.program == "shopt" &&
        std::find(cmd.args.begin(), cmd.args.end(), "dotglob") != cmd.args.end())
      dotglob = true;
    for (const auto& a : cmd.assignments)
      if (a.name == "GLOBIGNORE") dotglob = true;
  }
  if (effects_) effects_->set_dotglob(dotglob);  // only effects read it
  for (const auto& cmd : parsed.commands) {
    cwds.clear();
    for (const shell::WorkingDir& d : cmd.cwds) {
      std::string cwd = start_cwd;
      // (assign: GCC 12 misreads `= "/"` here as an overlapping copy, -Wrestrict)
      if (!d.known) {
        cwd.assign(1, '/');
      } else {
        for (const std::string& step : d.steps) {
          cwd = paths::normalize(step, cwd, c.home);
          if (cwd.empty() || cwd[0] != '/') {
            cwd.assign(1, '/');
            break;
          }
        }
      }
      if (std::find(cwds.begin(), cwds.end(), cwd) == cwds.end()) cwds.push_back(std::move(cwd));
    }
    if (cwds.empty()) cwds.push_back(start_cwd);
    for (const std::string& cwd : cwds)
      if (!assert_command(index, cmd, cwd, patterns)) return false;
    ++index;
  }
  return true;
}

}  // namespace warden
