// FactCodec: asserts one proposal as CLIPS facts through the fact API (never through text
// CLIPS parses): the proposal, a param per JSON leaf, and the derived facts (shell commands,
// redirects, paths, URLs, indexed pattern hits). Reads decisions and rewrites back.
// Bound to one environment; one thread at a time.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "engine/decision.h"
#include "engine/pattern_index.h"

namespace warden {

class ClipsEnv;

// A JSON leaf of the proposal: dotted key and the value in the document.
struct Leaf {
  std::string key;
  rapidjson::Value* value;
};

struct ProposalFields {
  std::string id;
  std::string target;  // lowercased name
  std::string action;  // lowercased name or empty
  std::string explanation, agent, session, source, principal;
  long long depth = 0, attempt = 0;
};

class FactCodec {
 public:
  explicit FactCodec(ClipsEnv& env);

  // Asserts every fact for the proposal. `leaves` are its JSON leaves. Returns false with
  // *error set if CLIPS refused a fact or a matcher failed (the caller fails closed).
  bool assert_all(const ProposalFields& fields, const std::vector<Leaf>& leaves,
                  const PatternIndex& patterns, std::string* error);

  // Decision and rewrite facts, in the order rules asserted them. Invalid outcome or mode
  // symbols are reported in *error.
  void read_results(std::vector<FiredRule>* rules, std::vector<Rewrite>* rewrites, std::string* error);

  // Every fact except decisions, in CLIPS syntax, as a JSON array (for --explain).
  std::string facts_json();

  // Retracts every fact asserted since the environment was reset.
  void retract_all();

 private:
  void* fact(void* tmpl);
  void put_string(void* f, const char* slot, const char* s);
  void put_symbol(void* f, const char* slot, const char* s);
  void put_integer(void* f, const char* slot, long long n);
  void put_strings(void* f, const char* slot, const std::vector<std::string>& items);
  bool finish(void* f);
  bool assert_param(const std::string& id, const Leaf& leaf);
  bool assert_shell(const ProposalFields& fields, const std::string& command, const std::string& cwd,
                    const PatternIndex& patterns);
  bool assert_path(const std::string& id, const std::string& key, const std::string& raw,
                   const std::string& cwd, const PatternIndex& patterns);
  bool assert_url(const std::string& id, const std::string& key, const std::string& raw);
  bool assert_hit(const std::string& id, std::string_view key, const PatternIndex::Hit& hit);

  ClipsEnv& env_;
  void* raw_;
  void* proposal_;
  void* param_;
  void* shell_command_;
  void* shell_redirect_;
  void* shell_error_;
  void* path_;
  void* url_;
  void* pattern_hit_;
  void* decision_;
  void* rewrite_;
  bool failed_ = false;
};

}  // namespace warden
