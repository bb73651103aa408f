#include "actuators/shell.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>

#include "actuators/action.h"
#include "actuators/beneath.h"
#include "actuators/confine.h"
#include "actuators/process.h"

namespace warden::actuators {
namespace {

// A conservative second reading of the line: only words separated by blanks, quoted or not,
// may run without a shell. Any operator, grouping, comment, expansion, glob, tilde or
// history character outside single quotes sends the line to a shell, whatever the parser
// made of it (a function definition `f() { ls; }` has one simple command too).
std::string plain_words_problem(std::string_view line) {
  bool word_start = true;
  for (std::size_t i = 0; i < line.size();) {
    char c = line[i];
    if (c == '\\') {
      if (i + 1 >= line.size()) return "a trailing backslash";
      if (line[i + 1] == '\n') return "a line continuation";
      i += 2;
      word_start = false;
      continue;
    }
    if (c == '\'') {
      std::size_t end = line.find('\'', i + 1);
      if (end == std::string_view::npos) return "an unterminated quote";
      i = end + 1;
      word_start = false;
      continue;
    }
    if (c == '"') {
      std::size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\')
          ++j;
        else if (line[j] == '$' || line[j] == '`')
          return "an expansion inside double quotes";
        else if (line[j] == '!')
          return "'!' inside double quotes";
      }
      if (j >= line.size()) return "an unterminated quote";
      i = j + 1;
      word_start = false;
      continue;
    }
    if (c == ' ' || c == '\t') {
      word_start = true;
      ++i;
      continue;
    }
    if (c == '\n') return "more than one line";
    static constexpr std::string_view kSyntax = ";&|<>(){}`$*?[]!";
    if (kSyntax.find(c) != std::string_view::npos)
      return std::string("the shell character '") + c + "'";
    if (word_start && (c == '#' || c == '~'))
      return std::string("a word starting with '") + c + "'";
    word_start = false;
    ++i;
  }
  return {};
}

bool is_reserved_word(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      "if",     "then",  "else",  "elif", "fi", "do",     "done",     "case",
      "esac",   "while", "until", "for",  "in", "select", "function", "time",
      "coproc", "[[",    "]]",    "{",    "}",  "!"};
  for (auto k : kWords)
    if (w == k) return true;
  return false;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string shell_absolute(const std::string& path) {
  if (!path.empty() && path.front() == '/') return path;
  char buf[PATH_MAX];
  if (!::getcwd(buf, sizeof buf)) return path;
  std::string base(buf);
  if (path.empty() || path == ".") return base;
  return base + "/" + path;
}

std::string shell_real(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : shell_absolute(path);
}

bool executable_file(int dir_fd, const std::string& path) {
  struct stat st;
  if (::fstatat(dir_fd, path.c_str(), &st, 0) != 0 || !S_ISREG(st.st_mode)) return false;
  return ::faccessat(dir_fd, path.c_str(), X_OK, AT_EACCESS) == 0;
}

// "" when `word` (a path with '/') may run as the program the rules named by its basename:
// no program of that name is in `path`, or it is the same file as one of them.
std::string not_the_named_program(int cwd_fd, const std::string& word,
                                  const std::vector<std::string>& path) {
  const std::string name = word.substr(word.rfind('/') + 1);
  struct stat run;
  if (name.empty() || ::fstatat(cwd_fd, word.c_str(), &run, 0) != 0)
    return "\"" + word + "\" cannot be examined";
  std::string others;
  for (const auto& dir : path) {
    if (dir.empty() || dir.front() != '/') continue;
    struct stat st;
    const std::string candidate = dir + "/" + name;
    if (::stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (st.st_dev == run.st_dev && st.st_ino == run.st_ino) return {};
    others += (others.empty() ? "" : ", ") + candidate;
  }
  if (others.empty()) return {};
  return "\"" + word + "\" is not the program " + name + " the rules judged (" + others +
         "): a file named like a known program runs only if it is that program";
}

Result denied_or_failed(int e, const std::string& what) {
  const bool escape = e == EXDEV || e == ELOOP || e == EACCES || e == EPERM;
  return failure(escape ? code::kDenied : code::kFailed, what + ": " + errno_text(e));
}

}  // namespace

ExecPlan plan_exec(std::string_view line, const shell::ParseResult& parsed) {
  ExecPlan plan;
  auto need = [&](std::string why) {
    plan.needs_shell = std::move(why);
    return plan;
  };
  if (!parsed.ok) return need("the line is not valid shell (" + parsed.error + ")");
  if (parsed.commands.size() != 1)
    return need(std::to_string(parsed.commands.size()) + " simple commands");
  const shell::SimpleCommand& cmd = parsed.commands.front();
  if (cmd.depth != 0) return need("a nested command");
  if (!cmd.wrappers.empty()) return need("the wrapper " + cmd.wrappers.front());
  if (!cmd.redirects.empty()) return need("a redirect " + cmd.redirects.front().op);
  if (cmd.glob) return need("a glob");
  if (cmd.expansion || cmd.dynamic) return need("an expansion");
  if (cmd.background) return need("a background command");
  if (cmd.runtime_operands) return need("operands known only at run time");
  for (const auto& a : cmd.assignments)
    if (a.dynamic) return need("a dynamic assignment to " + a.name);
  if (cmd.argv.empty()) return need("no program (assignments only)");
  if (is_reserved_word(cmd.argv.front())) return need("the reserved word " + cmd.argv.front());
  if (auto problem = plain_words_problem(line); !problem.empty()) return need(problem);
  for (const auto& w : cmd.argv)
    if (w.find('\0') != std::string::npos) return need("a NUL character");
  plan.direct = true;
  plan.argv = cmd.argv;
  plan.assignments = cmd.assignments;
  return plan;
}

std::string ShellActuator::description() const {
  return "Runs a command line in the workspace and returns its exit code and output "
         "(stdout and stderr, capped). A single plain command runs directly, without a shell; "
         "pipes, lists, redirects, globs and expansions need a rule that allows shell syntax.";
}

std::string ShellActuator::payload_schema_json() const {
  return R"({"type":"object","properties":{)"
         R"("command":{"type":"string","description":"the command line"},)"
         R"("cwd":{"type":"string","description":"working directory inside the workspace - default: the workspace"},)"
         R"("timeout":{"type":"number","description":"seconds; may only lower the configured limit"}},)"
         R"("required":["command"]})";
}

Result ShellActuator::act(std::string_view action_json, const Context& context) {
  ActionDoc doc(action_json);
  if (!doc.ok()) return failure(code::kBadAction, doc.error());
  std::string error;
  std::optional<std::string> line = doc.text("command", &error);
  if (!error.empty()) return failure(code::kBadAction, error);
  if (!line || line->empty()) return failure(code::kBadAction, "payload.command is missing");

  std::chrono::milliseconds timeout = config_.timeout;
  if (const rapidjson::Value* t = ActionDoc::member(doc.payload(), "timeout")) {
    if (!t->IsNumber() || !std::isfinite(t->GetDouble()) || t->GetDouble() <= 0)
      return failure(code::kBadAction, "payload.timeout is not a positive number of seconds");
    double ms = t->GetDouble() * 1000.0;
    if (ms < static_cast<double>(timeout.count()))
      timeout = std::chrono::milliseconds(static_cast<long long>(std::ceil(ms)));
  }

  // The workspace and the working directory beneath it.
  const std::string workspace = shell_absolute(config_.workspace);
  const std::string workspace_real = shell_real(config_.workspace);
  Fd root(::open(config_.workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root)
    return failure(code::kFailed, "the workspace " + config_.workspace +
                                      " cannot be opened: " + errno_text(errno));
  std::string cwd_text = ".";
  std::optional<std::string> cwd = doc.text("cwd", &error);
  if (!error.empty()) return failure(code::kBadAction, error);
  std::string relative;
  if (cwd) {
    cwd_text = *cwd;
    if (!cwd->empty() && cwd->front() == '~')
      return failure(code::kBadAction,
                     "a cwd starting with '~' (the home directory, not the workspace)");
    if (!relative_to_root(*cwd, workspace, workspace_real, &relative, &error))
      return failure(code::kDenied, "cwd " + error);
  }
  Fd cwd_fd(open_beneath(root.get(), relative, O_PATH | O_DIRECTORY));
  if (!cwd_fd)
    return denied_or_failed(errno,
                            "cwd \"" + cwd_text + "\" is not a directory beneath the workspace");

  // The same reading of the line the rules saw.
  shell::ParseResult parsed = shell::parse(*line);
  if (!parsed.ok && parsed.failure != shell::Failure::Syntax)
    return failure(code::kBadAction, "the command line cannot be read: " + parsed.error);
  ExecPlan plan = plan_exec(*line, parsed);

  ProcessSpec spec;
  spec.cwd_fd = cwd_fd.get();
  spec.timeout = timeout;
  spec.max_output_bytes = config_.max_output_bytes;
  spec.cpu_seconds = config_.cpu_seconds;
  spec.memory_bytes = config_.memory_bytes;
  spec.max_processes = config_.max_processes;
  spec.max_file_bytes = config_.max_file_bytes;
  spec.env = {"PATH=" + join(config_.path, ":"), "HOME=" + workspace_real, "LANG=C.UTF-8"};
  std::string mode;
  if (plan.direct) {
    mode = "exec";
    const std::string& word = plan.argv.front();
    if (word.find('/') != std::string::npos) {
      if (!executable_file(cwd_fd.get(), word))
        return failure(code::kFailed, "\"" + word + "\" is not an executable file");
      // The rules judged the program by its name (`./ls` is "ls"): a file of that name which
      // is not the configured path's program of the name (a copy of sh called ls) is refused.
      if (auto why = not_the_named_program(cwd_fd.get(), word, config_.path); !why.empty())
        return failure(code::kDenied, why);
      spec.program =
          word;  // absolute, or relative to the working directory (the child fchdir()s first)
    } else {
      for (const auto& dir : config_.path) {
        if (dir.empty() || dir.front() != '/') continue;
        std::string candidate = dir + "/" + word;
        if (executable_file(AT_FDCWD, candidate)) {
          spec.program = candidate;
          break;
        }
      }
      if (spec.program.empty())
        return failure(code::kFailed,
                       "program \"" + word + "\" not found in the configured path (" +
                           join(config_.path, ":") + "); a shell builtin needs shell syntax");
    }
    spec.argv = plan.argv;
    // The line's static assignments, the approved environment; PATH stays the configured one.
    for (const auto& a : plan.assignments) {
      if (a.name == "PATH") continue;
      std::string prefix = a.name + "=";
      std::erase_if(spec.env, [&](const std::string& e) { return e.starts_with(prefix); });
      spec.env.push_back(prefix + a.value);
    }
  } else {
    if (!parsed.ok)
      return failure(code::kBadAction, "the command line is not valid shell: " + parsed.error);
    if (!context.allows("shell-syntax"))
      return failure(code::kShellSyntax,
                     "needs a shell: " + plan.needs_shell + "; no rule allowed shell syntax");
    mode = "shell";
    spec.program = config_.shell;
    spec.argv = {config_.shell, "-c", *line};
  }

  ProcessOutcome run;
  if (config_.confine) {
    // The envelope of this decision: what its approved effects allow, nothing more.
    confine::Inputs inputs = confine::inputs_for(config_);
    inputs.workspace = workspace_real;
    confine::Envelope envelope = confine::derive(context.effects, inputs);
    envelope.private_network = context.allows("private-network");
    run = confine::run(envelope, spec);
    const bool unsupported = run.error.starts_with(confine::kUnsupported);
    if (!run.started && (unsupported || run.error.starts_with(confine::kSetup))) {
      // The envelope could not be built: the program did not run.
      Result r = failure(unsupported ? confine::kUnsupported : confine::kSetup,
                         "cannot run \"" + spec.argv.front() + "\" confined: " + run.error);
      r.details["mode"] = mode;
      r.details["confined"] = "yes";
      return r;
    }
  } else {
    run = run_process(spec);
  }
  Result r;
  r.details["mode"] = mode;
  r.details["program"] = spec.program;
  r.details["confined"] = config_.confine ? "yes" : "off";
  if (!run.started) {
    r = failure(code::kFailed, "cannot run \"" + spec.argv.front() + "\": " + run.error);
    r.details["mode"] = mode;
    return r;
  }
  r.output = std::move(run.output);
  r.truncated = run.truncated;
  r.exit_code = run.exit_code;
  if (run.signal) r.details["signal"] = std::to_string(run.signal);
  if (run.timed_out) {
    r.ok = false;
    r.error_code = code::kTimeout;
    r.error = "killed after " + std::to_string(timeout.count()) + " ms (the time limit)";
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace warden::actuators
