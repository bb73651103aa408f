// EffectFacts: the `effect` facts of what a proposal would do, from the policy's effects
// table: those of each simple command of a shell line, and those of a file, tool or HTTP
// proposal; each with its pattern hits, and kept in order for the decision.
// Part of FactCodec (engine/fact_codec.h); one environment, one thread.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "bindings/shell_parser.h"
#include "engine/decision.h"
#include "engine/effects.h"
#include "engine/fact_writer.h"
#include "engine/path_facts.h"

namespace warden {

class ClipsEnv;
struct ProposalFields;  // engine/fact_codec.h

class EffectFacts {
 public:
  // `table` and `paths` must outlive this.
  EffectFacts(ClipsEnv& env, FactWriter& writer, PathFacts& paths, const EffectsTable& table);

  // A new proposal: no effect facts yet, and no shell line that turned dotglob on.
  void begin() {
    records_.clear();
    dotglob_ = false;
  }

  // The effects of simple command `index` of a shell line run in `cwd`.
  bool assert_command(long long index, const shell::SimpleCommand& cmd, const std::string& cwd);
  // The effects of a proposal that is not a shell line (`doc` its document).
  bool assert_proposal(const ProposalFields& p, const rapidjson::Value& doc,
                       const std::string& cwd);

  // `shopt -s dotglob` or GLOBIGNORE in the proposal's shell line: `*` may match ".env".
  void set_dotglob(bool on) { dotglob_ = on; }

  // The effect facts asserted for the current proposal, in order.
  const std::vector<EffectRecord>& records() const { return records_; }

 private:
  bool assert_effect(long long index, const Effect& effect, const std::string& cwd);

  ClipsEnv& env_;
  FactWriter& w_;
  PathFacts& paths_;
  const EffectsTable& table_;
  FactWriter::Template effect_;
  struct EffectSlots {
    int proposal, index, kind, object, target, program, subcommand, via, path_class, in_workspace,
        dynamic;
  } effect_slots_;  // resolved once: effect facts are the most numerous derived facts
  std::vector<EffectRecord> records_;  // effect facts of the current proposal
  bool dotglob_ = false;               // the shell line turns dotglob on (or sets GLOBIGNORE)
  std::vector<Effect> buffer_;         // reused per command
};

}  // namespace warden
