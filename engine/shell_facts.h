// ShellFacts: the facts of a proposal's shell line, parsed under the shell limits: a
// `shell-command` per simple command and directory it may run in, its `shell-assignment`
// and `shell-redirect` facts and its effects, or one `shell-error` for a line that does not
// parse. Part of FactCodec (engine/fact_codec.h); one environment, one thread.
#pragma once

#include <string>

#include "bindings/shell_parser.h"
#include "engine/effect_facts.h"
#include "engine/fact_writer.h"
#include "engine/pattern_index.h"

namespace warden {

class ClipsEnv;

class ShellFacts {
 public:
  // `effects` (null: no effect facts) must outlive this.
  ShellFacts(ClipsEnv& env, FactWriter& writer, EffectFacts* effects);

  // The facts of shell line `command`, run from `cwd`.
  bool assert_line(const std::string& command, const std::string& cwd,
                   const PatternIndex& patterns);

 private:
  bool assert_command(long long index, const shell::SimpleCommand& cmd, const std::string& cwd,
                      const PatternIndex& patterns);

  ClipsEnv& env_;
  FactWriter& w_;
  EffectFacts* effects_;
  FactWriter::Template shell_command_, shell_assignment_, shell_redirect_, shell_error_;
  struct {
    int proposal, index, program, argv, flags, args, paths, wrappers, assignments, depth, cwd,
        dynamic, runs;
  } shell_command_slots_;
  struct {
    int proposal, index, name, value, dynamic;
  } shell_assignment_slots_;
  struct {
    int proposal, index, op, fd, target, path;
  } shell_redirect_slots_;
  struct {
    int proposal, message;
  } shell_error_slots_;
};

}  // namespace warden
