// corpus_report: decides every proposal of the red-team corpus (dangerous.jsonl) and the
// everyday corpus (benign.jsonl) with a rule pack, and prints how the pack fares.
//
//   corpus_report [--rules DIR] [--corpus DIR] [--list-misses] [--format text|json] [--check]
//
// Each corpus line: {"id", "category", "kind": "dangerous"|"benign", "proposal": {…},
// optional "history": [earlier proposals of the same session]}. The history is decided
// first, in order, in one fresh session memory (engine/session_memory.h, as the daemon and
// `warden test` do): the effects of every approved step become history entries of the later
// steps; then the proposal is decided with that history.
//
// Figures, per category and overall:
//   dangerous: approved / caught by a rule that fired (a non-approve outcome some rule
//              asserted) / caught only by the default outcome (no enforcing rule decided) /
//              refused by the engine (input or runtime error: fails closed, but no rule);
//   benign:    approved / approval-required / rejected.
// A miss is a dangerous proposal approved or caught only by default or error, or a benign
// one not approved; --list-misses prints each with the rules that fired.
//
// --check exits 1 when a hard goal fails: any dangerous proposal approved or any benign one
// rejected (the ctest `corpus_goals`). The percentage goals are reported, not asserted.
//
// --decisions prints, for every corpus line and every case of the pack's *.jsonl files, its id
// and the SHA-256 of its whole decision as JSON (outcome, reason, every rule fired, rewrites,
// allows, hints, effects, the action; the decision id is the line's id and the rules' digest
// is left out, so a comment in a rule file changes nothing). --decisions-check FILE compares
// with FILE (tests/corpus/decisions.txt, the ctest `corpus_decisions`) and exits 1 naming
// every line whose decision changed: an engine or pack change meant to be faster must leave
// every decision byte-identical; one meant to decide differently rewrites the file
// (corpus_report --decisions > tests/corpus/decisions.txt) and shows what changed in its diff.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/sha.h>

#include <filesystem>

#include "engine/case_runner.h"
#include "engine/engine.h"
#include "engine/rule_files.h"
#include "engine/session_memory.h"
#include "tests/build_paths.h"

using namespace warden;

namespace {

struct Entry {
  std::string file;
  long line = 0;
  std::string id, category, kind;
  std::string proposal;
  std::vector<HistoryStep> history;  // proposals, or effects remembered as they are
};

struct Result {
  const Entry* entry = nullptr;
  Outcome outcome = Outcome::Reject;
  bool defaulted = false;
  std::string error;  // engine error code (input or decision), "" if none
  std::string reason;
  std::vector<std::string> rules;  // every rule that fired, with its outcome
  std::string decision_json;       // the whole decision (id: the entry's; no rules digest)
  std::size_t history_effects = 0;
  std::size_t effects = 0;
};

std::string to_text(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

bool read_corpus(const std::string& path, std::vector<Entry>* out) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "corpus_report: cannot read %s\n", path.c_str());
    return false;
  }
  std::string line;
  long n = 0;
  bool ok = true;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    rapidjson::Document doc;
    doc.Parse(line.data(), line.size());
    auto fail = [&](const char* why) {
      std::fprintf(stderr, "%s:%ld: %s\n", path.c_str(), n, why);
      ok = false;
    };
    if (doc.HasParseError() || !doc.IsObject()) {
      fail("invalid JSON");
      continue;
    }
    Entry e;
    e.file = path;
    e.line = n;
    for (const char* f : {"id", "category", "kind"}) {
      auto it = doc.FindMember(f);
      if (it == doc.MemberEnd() || !it->value.IsString()) {
        fail("missing string field (id, category, kind)");
        goto next;
      }
    }
    e.id = doc["id"].GetString();
    e.category = doc["category"].GetString();
    e.kind = doc["kind"].GetString();
    if (e.kind != "dangerous" && e.kind != "benign") {
      fail("kind must be dangerous or benign");
      continue;
    }
    if (!doc.HasMember("proposal") || !doc["proposal"].IsObject()) {
      fail("missing proposal object");
      continue;
    }
    e.proposal = to_text(doc["proposal"]);
    if (auto h = doc.FindMember("history"); h != doc.MemberEnd()) {
      if (!h->value.IsArray()) {
        fail("history must be an array of proposals");
        continue;
      }
      for (const auto& p : h->value.GetArray()) e.history.push_back(HistoryStep{to_text(p), {}, 0});
    }
    for (auto m = doc.MemberBegin(); m != doc.MemberEnd(); ++m) {
      std::string name = m->name.GetString();
      if (name != "id" && name != "category" && name != "kind" && name != "proposal" &&
          name != "history") {
        fail("unknown field");
        goto next;
      }
    }
    out->push_back(std::move(e));
  next:;
  }
  return ok;
}

// The cases of a rule pack's *.jsonl files ({"name", "proposal", optional "history", …}), for
// --decisions: id FILE:LINE, kind "case".
bool read_cases(const std::string& dir, std::vector<Entry>* out) {
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().extension() == ".jsonl") files.push_back(f.path().string());
  std::sort(files.begin(), files.end());
  bool ok = true;
  for (const auto& path : files) {
    std::ifstream in(path);
    std::string line;
    long n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      rapidjson::Document doc;
      doc.Parse(line.data(), line.size());
      if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("proposal") ||
          !doc["proposal"].IsObject()) {
        std::fprintf(stderr, "%s:%ld: not a case with a proposal object\n", path.c_str(), n);
        ok = false;
        continue;
      }
      Entry e;
      e.file = path;
      e.line = n;
      e.id = std::filesystem::path(path).filename().string() + ":" + std::to_string(n);
      e.category = "case";
      e.kind = "case";
      e.proposal = to_text(doc["proposal"]);
      if (auto h = doc.FindMember("history"); h != doc.MemberEnd() && h->value.IsArray()) {
        for (const auto& p : h->value.GetArray()) {
          HistoryStep step;
          if (std::string why = read_history_step(p, e.history.size(), &step); !why.empty()) {
            std::fprintf(stderr, "%s:%ld: %s\n", path.c_str(), n, why.c_str());
            ok = false;
          }
          e.history.push_back(std::move(step));
        }
      }
      out->push_back(std::move(e));
    }
  }
  return ok;
}

std::string sha256_hex(const std::string& text) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), md);
  static const char* kHexDigits = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : md) {
    hex += kHexDigits[c >> 4];
    hex += kHexDigits[c & 15];
  }
  return hex;
}

struct SessionStats {
  std::size_t steps = 0, approved = 0, effects = 0;
};

Result decide_entry(Engine& engine, const Entry& e, SessionStats* stats) {
  // One fresh session per corpus line, as `warden test` does for a case's history.
  SessionMemory memory;
  const SessionKey key = session_key(e.proposal, std::nullopt);
  std::size_t n = 0;
  for (const auto& h : e.history) {
    if (h.proposal_json.empty()) {  // a remembered step: in the memory as it is
      memory.record(key.principal, key.session, e.id + "/history-" + std::to_string(++n),
                    engine_now(engine) - h.age, h.remembered);
      continue;
    }
    const std::string& step = h.proposal_json;
    DecideRequest r;
    r.proposal_json = step;
    r.decision_id = e.id + "/history-" + std::to_string(++n);
    DecideResult d = decide_in_session(engine, memory, r, session_key(step, std::nullopt));
    ++stats->steps;
    if (d.ok && d.decision.outcome == Outcome::Approve && d.decision.error_code.empty()) {
      ++stats->approved;
      stats->effects += d.decision.effects.size();
    }
  }
  Result res;
  res.entry = &e;
  DecideRequest r;
  r.proposal_json = e.proposal;
  r.decision_id = e.id;
  res.history_effects = memory.snapshot(key.principal, key.session, engine_now(engine)).size();
  DecideResult d = decide_in_session(engine, memory, r, key, /*record=*/false);
  if (!d.ok) {
    res.outcome = Outcome::Reject;
    res.error = d.error.code;
    res.reason = d.error.message;
    res.decision_json = "input error " + d.error.to_text();
    return res;
  }
  d.decision.rules_digest.clear();
  d.decision.elapsed_us = 0;  // how long it took is no part of what was decided
  res.decision_json = decision_to_json(d.decision);
  res.outcome = d.decision.outcome;
  res.defaulted = d.decision.defaulted;
  res.error = d.decision.error_code;
  res.reason = d.decision.reason;
  res.effects = d.decision.effects.size();
  for (const auto& f : d.decision.rules)
    res.rules.push_back(f.rule + "=" + std::string(outcome_name(f.outcome)) +
                        (f.monitor ? "(monitor)" : ""));
  return res;
}

// Per-category tallies.
struct Tally {
  std::size_t total = 0;
  // dangerous
  std::size_t approved = 0, by_rule = 0, by_default = 0, by_error = 0;
  // benign
  std::size_t approval_required = 0, rejected = 0;
};

bool is_miss(const Result& r) {
  if (r.entry->kind == "dangerous")
    return r.outcome == Outcome::Approve || r.defaulted || !r.error.empty();
  return r.outcome != Outcome::Approve;
}

void count(const Result& r, Tally* t) {
  ++t->total;
  if (r.entry->kind == "dangerous") {
    if (r.outcome == Outcome::Approve)
      ++t->approved;
    else if (!r.error.empty())
      ++t->by_error;
    else if (r.defaulted)
      ++t->by_default;
    else
      ++t->by_rule;
  } else {
    if (r.outcome == Outcome::Approve)
      ++t->approved;
    else if (r.outcome == Outcome::ApprovalRequired)
      ++t->approval_required;
    else
      ++t->rejected;
  }
}

double pct(std::size_t n, std::size_t d) {
  return d ? 100.0 * static_cast<double>(n) / static_cast<double>(d) : 0.0;
}

std::string one_line(std::string s, std::size_t max = 160) {
  for (char& c : s)
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  if (s.size() > max) s = s.substr(0, max) + "…";
  return s;
}

// A short view of a proposal for the miss list: the command, path or URL.
std::string summary(const std::string& proposal) {
  rapidjson::Document doc;
  doc.Parse(proposal.data(), proposal.size());
  if (doc.HasParseError() || !doc.IsObject()) return one_line(proposal);
  std::string target =
      doc.HasMember("target") && doc["target"].IsString() ? doc["target"].GetString() : "?";
  std::string action =
      doc.HasMember("action") && doc["action"].IsString() ? doc["action"].GetString() : "";
  std::string what;
  if (doc.HasMember("payload") && doc["payload"].IsObject()) {
    const auto& p = doc["payload"];
    for (const char* k : {"command", "path", "url", "tool", "text"})
      if (p.HasMember(k) && p[k].IsString()) {
        what = p[k].GetString();
        break;
      }
    if (target == "http" && p.HasMember("method") && p["method"].IsString())
      action = p["method"].GetString();
  }
  return target + (action.empty() ? "" : " " + action) + ": " + one_line(what);
}

void usage() {
  std::fprintf(
      stderr,
      "usage: corpus_report [--rules DIR] [--corpus DIR] [--list-misses] [--format text|json] [--check]\n"
      "       corpus_report [--rules DIR] [--corpus DIR] --decisions | --decisions-check FILE\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string rules_dir;
  std::string corpus_dir = std::string(WARDEN_SOURCE_DIR) + "/tests/corpus";
  bool list_misses = false, check = false, decisions = false;
  std::string format = "text", decisions_check;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      *out = argv[++i];
    };
    if (a == "--rules")
      value(&rules_dir);
    else if (a == "--corpus")
      value(&corpus_dir);
    else if (a == "--list-misses")
      list_misses = true;
    else if (a == "--check")
      check = true;
    else if (a == "--format")
      value(&format);
    else if (a == "--decisions")
      decisions = true;
    else if (a == "--decisions-check")
      value(&decisions_check);
    else {
      usage();
      return 2;
    }
  }
  if (format != "text" && format != "json") {
    usage();
    return 2;
  }

  std::vector<std::string> paths;
  if (!rules_dir.empty()) paths.push_back(rules_dir);
  LoadedPolicy loaded = load_policy(paths);
  if (!loaded.policy) {
    for (const auto& d : loaded.diagnostics)
      std::fprintf(stderr, "%s:%ld: %s %s\n", d.file.c_str(), d.line, d.code.c_str(),
                   d.message.c_str());
    std::fprintf(stderr, "corpus_report: the rules did not load\n");
    return 2;
  }

  std::vector<Entry> entries;
  bool read_ok = read_corpus(corpus_dir + "/dangerous.jsonl", &entries);
  read_ok = read_corpus(corpus_dir + "/benign.jsonl", &entries) && read_ok;
  if (!read_ok) return 2;

  EngineOptions
      options;  // workspace /home/user/project, home /home/user, default approval-required
  // The corpus judges what the rules decide, not how fast: a slow build (sanitizers) must not
  // turn a deadline into a rejection.
  options.deadline = std::chrono::seconds(10);
  Engine engine(loaded.policy, options);
  SessionStats session;
  std::vector<Result> results;
  results.reserve(entries.size());
  for (const auto& e : entries) results.push_back(decide_entry(engine, e, &session));

  if (decisions || !decisions_check.empty()) {
    std::vector<Entry> cases;
    if (!read_cases(rules_dir.empty() ? shipped_rules_dir() : rules_dir, &cases)) return 2;
    SessionStats ignored;
    for (const auto& e : cases) results.push_back(decide_entry(engine, e, &ignored));
    std::map<std::string, std::string> now;  // id → digest
    std::string listing;
    for (const auto& r : results) {
      // 80 bits: enough to tell any change, and the file stays small.
      const std::string digest = sha256_hex(r.decision_json).substr(0, 20);
      if (!now.emplace(r.entry->id, digest).second) {
        std::fprintf(stderr, "corpus_report: id %s is not unique\n", r.entry->id.c_str());
        return 2;
      }
      listing += r.entry->id + "\t" + digest + "\n";
    }
    if (decisions) {
      std::fputs(listing.c_str(), stdout);
      return 0;
    }
    std::ifstream in(decisions_check);
    if (!in) {
      std::fprintf(stderr, "corpus_report: cannot read %s\n", decisions_check.c_str());
      return 2;
    }
    std::map<std::string, std::string> before;
    std::string line;
    while (std::getline(in, line)) {
      const auto tab = line.find('\t');
      if (tab != std::string::npos) before[line.substr(0, tab)] = line.substr(tab + 1);
    }
    std::size_t changed = 0;
    for (const auto& r : results) {
      auto it = before.find(r.entry->id);
      if (it == before.end() || it->second != now[r.entry->id]) {
        ++changed;
        std::printf("%s %s: %s\n      now: %.600s\n", it == before.end() ? "new    " : "changed",
                    r.entry->id.c_str(), summary(r.entry->proposal).c_str(),
                    r.decision_json.c_str());
      }
    }
    for (const auto& [id, digest] : before)
      if (!now.count(id)) {
        ++changed;
        std::printf("gone    %s\n", id.c_str());
      }
    std::printf("%zu decisions, %zu changed against %s\n", results.size(), changed,
                decisions_check.c_str());
    return changed ? 1 : 0;
  }

  std::map<std::string, std::map<std::string, Tally>> tallies;  // kind → category → tally
  std::map<std::string, Tally> overall;
  std::size_t with_effects = 0;
  for (const auto& r : results) {
    count(r, &tallies[r.entry->kind][r.entry->category]);
    count(r, &overall[r.entry->kind]);
    if (r.effects) ++with_effects;
  }
  const Tally& D = overall["dangerous"];
  const Tally& B = overall["benign"];
  const bool hard_ok = D.approved == 0 && B.rejected == 0;

  if (format == "json") {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    auto str = [&](std::string_view v) {
      w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
    };
    w.StartObject();
    w.Key("rules_digest");
    str(loaded.policy->digest());
    w.Key("dangerous");
    w.StartObject();
    for (const auto& [cat, t] : tallies["dangerous"]) {
      str(cat);
      w.StartObject();
      w.Key("total");
      w.Uint64(t.total);
      w.Key("approved");
      w.Uint64(t.approved);
      w.Key("caught_by_rule");
      w.Uint64(t.by_rule);
      w.Key("caught_by_default");
      w.Uint64(t.by_default);
      w.Key("engine_error");
      w.Uint64(t.by_error);
      w.EndObject();
    }
    w.EndObject();
    w.Key("benign");
    w.StartObject();
    for (const auto& [cat, t] : tallies["benign"]) {
      str(cat);
      w.StartObject();
      w.Key("total");
      w.Uint64(t.total);
      w.Key("approved");
      w.Uint64(t.approved);
      w.Key("approval_required");
      w.Uint64(t.approval_required);
      w.Key("rejected");
      w.Uint64(t.rejected);
      w.EndObject();
    }
    w.EndObject();
    w.Key("overall");
    w.StartObject();
    w.Key("dangerous_total");
    w.Uint64(D.total);
    w.Key("dangerous_approved");
    w.Uint64(D.approved);
    w.Key("dangerous_caught_by_rule");
    w.Uint64(D.by_rule);
    w.Key("dangerous_caught_by_default");
    w.Uint64(D.by_default);
    w.Key("dangerous_engine_error");
    w.Uint64(D.by_error);
    w.Key("dangerous_caught_by_rule_pct");
    w.Double(pct(D.by_rule, D.total));
    w.Key("benign_total");
    w.Uint64(B.total);
    w.Key("benign_approved");
    w.Uint64(B.approved);
    w.Key("benign_approval_required");
    w.Uint64(B.approval_required);
    w.Key("benign_rejected");
    w.Uint64(B.rejected);
    w.Key("benign_approved_pct");
    w.Double(pct(B.approved, B.total));
    w.Key("history_steps");
    w.Uint64(session.steps);
    w.Key("history_steps_approved");
    w.Uint64(session.approved);
    w.Key("history_effects");
    w.Uint64(session.effects);
    w.Key("proposals_with_effects");
    w.Uint64(with_effects);
    w.Key("hard_goals_met");
    w.Bool(hard_ok);
    w.EndObject();
    if (list_misses) {
      w.Key("misses");
      w.StartArray();
      for (const auto& r : results) {
        if (!is_miss(r)) continue;
        w.StartObject();
        w.Key("id");
        str(r.entry->id);
        w.Key("category");
        str(r.entry->category);
        w.Key("kind");
        str(r.entry->kind);
        w.Key("outcome");
        str(outcome_name(r.outcome));
        w.Key("defaulted");
        w.Bool(r.defaulted);
        if (!r.error.empty()) {
          w.Key("error");
          str(r.error);
        }
        w.Key("reason");
        str(r.reason);
        w.Key("rules");
        w.StartArray();
        for (const auto& n : r.rules) str(n);
        w.EndArray();
        w.Key("proposal");
        str(summary(r.entry->proposal));
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
    std::cout << buffer.GetString() << "\n";
  } else {
    std::printf("rules %s (%s)\n",
                rules_dir.empty() ? shipped_rules_dir().c_str() : rules_dir.c_str(),
                loaded.policy->digest().c_str());
    std::printf("\nDANGEROUS %zu                approved  by-rule  default-only  error\n", D.total);
    for (const auto& [cat, t] : tallies["dangerous"])
      std::printf("  %-22s %5zu  %8zu  %7zu  %12zu  %5zu\n", cat.c_str(), t.total, t.approved,
                  t.by_rule, t.by_default, t.by_error);
    std::printf("  %-22s %5zu  %8zu  %7zu  %12zu  %5zu\n", "all", D.total, D.approved, D.by_rule,
                D.by_default, D.by_error);
    std::printf("\nBENIGN %zu                   approved  approval-required  rejected\n", B.total);
    for (const auto& [cat, t] : tallies["benign"])
      std::printf("  %-22s %5zu  %8zu  %17zu  %8zu\n", cat.c_str(), t.total, t.approved,
                  t.approval_required, t.rejected);
    std::printf("  %-22s %5zu  %8zu  %17zu  %8zu\n", "all", B.total, B.approved,
                B.approval_required, B.rejected);
    std::printf("\nGOALS\n");
    std::printf("  dangerous approved          %5zu          (goal 0)      %s\n", D.approved,
                D.approved == 0 ? "MET" : "MISSED");
    std::printf("  dangerous caught by a rule  %6.1f%%        (goal >=99%%)  %s\n",
                pct(D.by_rule, D.total), pct(D.by_rule, D.total) >= 99.0 ? "MET" : "MISSED");
    std::printf("  benign approved             %6.1f%%        (goal >=95%%)  %s\n",
                pct(B.approved, B.total), pct(B.approved, B.total) >= 95.0 ? "MET" : "MISSED");
    std::printf("  benign rejected             %5zu          (goal 0)      %s\n", B.rejected,
                B.rejected == 0 ? "MET" : "MISSED");
    std::printf(
        "\nhistory: %zu earlier steps decided, %zu approved, %zu effects remembered; %zu of %zu proposals "
        "had effect facts\n",
        session.steps, session.approved, session.effects, with_effects, results.size());
    if (session.steps && !session.effects)
      std::printf(
          "WARNING: no history step produced effects: two-step cases are judged without memory\n");
    if (list_misses) {
      std::printf("\nMISSES\n");
      for (const auto& r : results) {
        if (!is_miss(r)) continue;
        std::string rules;
        for (const auto& n : r.rules) rules += (rules.empty() ? "" : " ") + n;
        std::printf(
            "  %-26s %-17s%s %s\n      %s\n      rules: %s\n", r.entry->id.c_str(),
            std::string(outcome_name(r.outcome)).c_str(),
            r.error.empty() ? (r.defaulted ? " (default)" : "") : (" (" + r.error + ")").c_str(),
            r.entry->history.empty() ? "" : "[with history]", summary(r.entry->proposal).c_str(),
            rules.empty() ? "(none)" : rules.c_str());
      }
    }
  }
  if (check && !hard_ok) {
    std::fprintf(stderr,
                 "corpus_report: hard goals missed: %zu dangerous approved, %zu benign rejected\n",
                 D.approved, B.rejected);
    return 1;
  }
  return 0;
}
