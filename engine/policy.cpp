// Policy::compile: read → check → compile. The checker runs first over every file; every
// construct that passed is then compiled in a fresh environment to collect CLIPS's own
// errors, and the indexed patterns are compiled. *.toml files are the command-effects and
// path classes tables and overlays, *.data.toml and *.data.json files the data rules read.
// Any error anywhere means no policy: a set is never half-loaded.
#include <openssl/evp.h>
#include <toml++/toml.h>

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>

#include "bindings/text.h"
#include "engine/data_files.h"
#include "engine/effects.h"
#include "engine/engine.h"
#include "engine/overlay.h"
#include "engine/path_classes.h"
#include "engine/policy_impl.h"
#include "engine/toml_document.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

namespace warden {
namespace {

// The digest names what was loaded, not where it was read from: the file contents in load
// order (the order of `sources`, which is the order constructs are compiled in and so the
// order rules are defined in). Paths are left out, so `--rules rules`, `--rules /abs/rules`
// and a copy of the directory elsewhere give the same digest; read_rule_files orders the
// files of a directory by their names within it.
std::string sha256_of_sources(const RuleSources& sources) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  const std::string version = "warden-rules-v2\n";
  EVP_DigestUpdate(ctx, version.data(), version.size());
  for (const auto& s : sources) {
    // Length-prefixed text, so no two different sets (or splits into files) hash alike.
    std::string header = std::to_string(s.text.size()) + ":";
    EVP_DigestUpdate(ctx, header.data(), header.size());
    EVP_DigestUpdate(ctx, s.text.data(), s.text.size());
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  return "sha256:" + text::hex(md, len);
}

bool is_table_file(const std::string& path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".toml") == 0;
}

// A *.toml file is an effects table when it has [program.*] or [tool.*] tables, a path classes
// table when it has [[class]] entries and a rule overlay when it has [[rule]] entries; more
// than one kind or none is an error. The tables of several files are merged in load order.
struct Tables {
  std::shared_ptr<EffectsTable> effects;
  std::shared_ptr<PathClasses> classes;
  std::shared_ptr<RuleOverlay> overlay;
};

void load_table(const RuleSource& source, Tables* tables, Diagnostics* diagnostics) {
  // Parsed once, here; the parser of its kind reads the parsed document.
  std::optional<TomlDocument> document;
  try {
    document.emplace(TomlDocument{source, toml::parse(source.text, source.path)});
  } catch (const toml::parse_error& e) {
    // Reported as by the parser the file looks meant for, with its line.
    const bool looks_class = source.text.find("[[class]]") != std::string::npos;
    const bool looks_rule = !looks_class && source.text.find("[[rule]]") != std::string::npos;
    const long line = static_cast<long>(e.source().begin.line);
    const std::string description(e.description());
    if (looks_class)
      diagnostics->push_back(
          {code::kPathClasses, Severity::Error, source.path, line, "", description});
    else if (looks_rule)
      diagnostics->push_back({code::kOverlay, Severity::Error, source.path, line, "", description});
    else
      diagnostics->push_back(
          {code::kEffectsTable, Severity::Error, source.path, line, "", "TOML: " + description});
    return;
  }
  const toml::table& root = document->root;
  const bool has_program = root.contains("program") || root.contains("tool");
  const bool has_class = root.contains("class");
  const bool has_rule = root.contains("rule");
  const int kinds = int(has_program) + int(has_class) + int(has_rule);
  if (kinds != 1) {
    diagnostics->push_back(
        {code::kEffectsTable, Severity::Error, source.path, 1, "",
         kinds > 1
             ? "a .toml rules file holds one of [program.*] and [tool.*] tables (an effects table), "
               "[[class]] entries (path classes) or [[rule]] entries (a rule overlay), not several"
             : "a .toml rules file must hold [program.*] or [tool.*] tables (an effects table), "
               "[[class]] entries (path classes) or [[rule]] entries (a rule overlay)"});
    return;
  }
  if (has_program) {
    auto table = EffectsTable::parse(*document, diagnostics);
    if (!table) return;
    if (!tables->effects)
      tables->effects = std::move(table);
    else
      tables->effects->merge(*table, diagnostics);
  } else if (has_class) {
    auto table = PathClasses::parse(*document, diagnostics);
    if (!table) return;
    if (!tables->classes)
      tables->classes = std::move(table);
    else
      tables->classes->merge(*table);
  } else {
    auto overlay = RuleOverlay::parse(*document, diagnostics);
    if (!overlay) return;
    if (!tables->overlay)
      tables->overlay = std::move(overlay);
    else
      tables->overlay->merge(*overlay, diagnostics);
  }
}

// The outcomes a rule's actions assert in its decisions, as written: constants in order of
// appearance joined by '|', "?" for one computed at run time, "" when it asserts none.
std::string declared_outcomes(const Construct& rule) {
  const std::string& t = rule.text;
  std::vector<std::string> found;
  bool actions = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char ch = t[i];
    if (ch == '"') {  // skip the string
      for (++i; i < t.size() && t[i] != '"'; ++i)
        if (t[i] == '\\') ++i;
    } else if (ch == ';') {
      while (i + 1 < t.size() && t[i + 1] != '\n') ++i;
    } else if (!actions) {
      actions = ch == '=' && i + 1 < t.size() && t[i + 1] == '>';
    } else if (ch == '(' && t.compare(i + 1, 8, "outcome ") == 0) {
      std::size_t j = i + 9;
      while (j < t.size() && (t[j] == ' ' || t[j] == '\t' || t[j] == '\n')) ++j;
      std::size_t end = j;
      while (end < t.size() && t[end] != ')' && t[end] != ' ' && t[end] != '\n' && t[end] != '\t')
        ++end;
      std::string word = t.substr(j, end - j);
      if (!parse_outcome(word)) word = "?";
      if (std::find(found.begin(), found.end(), word) == found.end())
        found.push_back(std::move(word));
    }
  }
  std::string out;
  for (const auto& w : found) out += (out.empty() ? "" : "|") + w;
  return out;
}

// A rule set whose rules match `effect` facts needs an effects table: without
// one no effect is ever derived, and a rule like "approve when no effect is harmful" would
// approve every command. Refused (E_EFFECTS_TABLE) at the first such rule. CLIPS knows
// which templates rule patterns use: a template's pattern network is empty otherwise.
void require_effects_table(ClipsEnv& env, const std::vector<Construct>& constructs,
                           Diagnostics* diagnostics) {
  for (const char* name : {"effect"}) {
    auto* tmpl = static_cast<struct deftemplate*>(EnvFindDeftemplate(env.get(), name));
    if (!tmpl || !tmpl->patternNetwork) continue;
    const std::string pattern = std::string("(") + name;
    const Construct* first = nullptr;
    for (const auto& c : constructs)
      if (c.kind == "defrule" && c.text.find(pattern) != std::string::npos) {
        first = &c;
        break;
      }
    diagnostics->push_back(
        {code::kEffectsTable, Severity::Error, first ? first->file : "", first ? first->line : 0,
         first ? first->name : "",
         std::string("rules match `") + name +
             "` facts but no effects table (a .toml file with [program.*] tables) is loaded: "
             "no effect would ever be derived"});
    return;
  }
}

// Every data set a construct names as a constant must be defined by a data file, and one
// that data-value reads must be a map: otherwise each call would fail its decision closed
// (a rule that only ever errs is a dead rule). E_DATA_SET at the name.
void check_data_references(const std::vector<DataReference>& references, const DataSets& data,
                           Diagnostics* diagnostics) {
  for (const auto& r : references) {
    const DataSets::Set* set = data.find(r.name);
    if (set && (r.function != "data-value" || set->kind == DataSets::Kind::Map)) continue;
    std::string message;
    if (set) {
      message = "data set \"" + r.name + "\" (" + set->at +
                ") is a list: data-value reads a map; use data-member";
    } else {
      std::string known;
      for (const auto& n : data.names()) known += (known.empty() ? "" : ", ") + n;
      if (known.size() > 200) known = known.substr(0, 200) + "…";
      message = "no data file defines a data set named \"" + r.name.substr(0, 80) + "\" (" +
                (known.empty() ? std::string("the rule set has no *.data.toml or *.data.json file")
                               : "defined: " + known) +
                ")";
    }
    diagnostics->push_back({code::kDataSet, Severity::Error, r.file, r.line, r.rule, message});
  }
}

// Warns about a class constant in a rule's conditions (`(class credentials)` in a path,
// effect or history pattern) that no loaded path classes table defines: such a condition
// can never match, which for a rule that forbids something means it never fires.
void check_class_names(const std::vector<Construct>& constructs, const PathClasses* classes,
                       Diagnostics* diagnostics) {
  std::set<std::string, std::less<>> known = {"none", kOwnPathClass, kOwnDirClass};
  if (classes)
    for (auto& n : classes->names()) known.insert(std::move(n));
  auto is_space = [](char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f';
  };
  for (const auto& c : constructs) {
    if (c.kind != "defrule" || !c.ok) continue;
    const std::string& t = c.text;
    long line = c.line;
    int depth = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const char ch = t[i];
      if (ch == '\n') {
        ++line;
      } else if (ch == '"') {  // skip the string
        for (++i; i < t.size() && t[i] != '"'; ++i) {
          if (t[i] == '\\')
            ++i;
          else if (t[i] == '\n')
            ++line;
        }
      } else if (ch == ';') {  // comment to the end of the line
        while (i + 1 < t.size() && t[i + 1] != '\n') ++i;
      } else if (ch == ')') {
        --depth;
      } else if (ch == '=' && depth == 1 && i + 1 < t.size() && t[i + 1] == '>') {
        break;  // the conditions end here
      } else if (ch == '(') {
        ++depth;
        std::size_t j = i + 1;
        while (j < t.size() && is_space(t[j])) ++j;
        if (t.compare(j, 5, "class") != 0 || j + 5 >= t.size() || !is_space(t[j + 5])) continue;
        j += 5;
        long at = line;
        while (j < t.size() && is_space(t[j])) at += t[j++] == '\n';
        std::size_t end = j;
        while (end < t.size() && !is_space(t[end]) && t[end] != '(' && t[end] != ')' &&
               t[end] != '"')
          ++end;
        // A constraint: constants joined by | & ~, variables and :(…) / =(…) tests.
        const std::string constraint = t.substr(j, end - j);
        std::size_t k = 0;
        while (k <= constraint.size()) {
          std::size_t stop = constraint.find_first_of("|&~", k);
          if (stop == std::string::npos) stop = constraint.size();
          const std::string word = constraint.substr(k, stop - k);
          if (!word.empty() && word[0] != '?' && word[0] != '$' && word[0] != ':' &&
              word[0] != '=' && !known.count(word)) {
            std::string list;
            for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
            diagnostics->push_back({code::kPathClasses, Severity::Warning, c.file, at, c.name,
                                    "class \"" + word.substr(0, 60) +
                                        "\" is not defined by any path classes table (known: " +
                                        list + "): this condition never matches"});
          }
          k = stop + 1;
        }
      }
    }
  }
}

// The history patterns as the filter may use them. A pattern whose constraints call what may
// fail, print or assert (or member$ on a global that holds no list) has those calls evaluated
// by CLIPS on every history fact reaching them, rule firing or not: it keeps every entry the
// constants written before its first call accept, with no gates and no joins, so each
// decision sees the same failures as with every entry asserted.
std::vector<HistoryPattern> evaluated_patterns(
    std::vector<HistoryPattern> patterns,
    const std::map<std::string, std::set<std::string>>& functions, void* env) {
  for (auto& p : patterns) {
    auto all_total = [&](const std::vector<std::string>& calls) {
      return std::all_of(calls.begin(), calls.end(),
                         [&](const std::string& f) { return total_call(f, functions); });
    };
    bool total = all_total(p.calls) && all_total(p.rule_calls);
    for (const auto& g : p.multifield_globals) {
      const std::string name = g.size() > 3 ? g.substr(2, g.size() - 3) : "";  // ?*name*
      void* global = name.empty() ? nullptr : EnvFindDefglobal(env, name.c_str());
      DATA_OBJECT value;
      total = total && global &&
              (EnvGetDefglobalValue(env, name.c_str(), &value), GetType(value) == MULTIFIELD);
    }
    if (total) continue;
    // Its own calls run on the facts its earlier constants pass; its rule's other calls on
    // the facts it matches: those entries are asserted, whatever the proposal.
    if (!p.calls.empty()) p.slots = p.before_calls;
    p.gates.clear();
    p.joins.clear();
    p.predicates.clear();
  }
  return patterns;
}

}  // namespace

void PolicyImpl::load_into(ClipsEnv& env) const {
  env.state().data = data;  // before the constructs: a defglobal may read it
  Diagnostics diagnostics;
  for (const auto& c : constructs)
    if (!env.load(c.text, c.file, c.line, c.name, &diagnostics))
      throw std::runtime_error("rule set no longer loads: " + diagnostics.front().to_text());
  if (!env.reset()) throw std::runtime_error("rule set does not reset cleanly");
  // Globals are constants in Warden rules (the checker refuses every `bind ?*x*`), so the
  // reset after each decision need not evaluate them again: a pack's lists and allowlists
  // in defglobals cost nothing per decision.
  EnvSetResetGlobals(env.get(), FALSE);
}

std::unique_ptr<ClipsEnv> PolicyImpl::take_spare() const {
  std::lock_guard<std::mutex> lock(spare_mutex_);
  return std::move(spare_);
}

void PolicyImpl::set_spare(std::unique_ptr<ClipsEnv> env) const {
  std::lock_guard<std::mutex> lock(spare_mutex_);
  spare_ = std::move(env);
}

Policy::Policy(std::unique_ptr<PolicyImpl> impl) : impl_(std::move(impl)) {}
Policy::~Policy() = default;
const std::string& Policy::digest() const { return impl_->digest; }
std::vector<std::string> Policy::rule_names() const { return impl_->rule_names; }
std::size_t Policy::rule_count() const { return impl_->rule_names.size(); }
std::vector<std::string> Policy::rule_names(const std::vector<std::string>& files) const {
  std::vector<std::string> out;
  for (const auto& c : impl_->constructs)
    if (c.kind == "defrule" && std::find(files.begin(), files.end(), c.file) != files.end())
      out.push_back(c.name);
  return out;
}
std::vector<DataSetSummary> Policy::data_sets() const {
  std::vector<DataSetSummary> out;
  if (!impl_->data) return out;
  for (const auto& [name, set] : impl_->data->sets())
    out.push_back({name, set.kind == DataSets::Kind::Map ? "map" : "list", set.size(), set.at});
  return out;
}
const std::vector<OverlayEntry>& Policy::overlay() const {
  static const std::vector<OverlayEntry>* none = new std::vector<OverlayEntry>();
  return impl_->overlay ? impl_->overlay->entries() : *none;
}

Policy::Loaded Policy::compile(const RuleSources& sources) {
  Loaded loaded;
  Diagnostics& diagnostics = loaded.diagnostics;
  if (sources.empty()) {
    diagnostics.push_back({code::kNoRules, Severity::Error, "", 0, "", "no rule files to load"});
    return loaded;
  }
  RuleSources rule_sources;
  Tables tables;
  std::shared_ptr<DataSets> data;
  bool data_ok = true;
  for (const auto& s : sources) {
    if (is_data_file(s.path)) {
      if (!data) data = std::make_shared<DataSets>();
      data_ok &= read_data_file(s, data.get(), &diagnostics);
    } else if (is_table_file(s.path)) {
      load_table(s, &tables, &diagnostics);
    } else {
      rule_sources.push_back(s);
    }
  }
  std::shared_ptr<EffectsTable>& effects = tables.effects;
  std::shared_ptr<PathClasses>& classes = tables.classes;
  // The environment first: made fresh, it tells the checker CLIPS's own function names
  // (sandbox::note_builtins), which it would otherwise read from an environment of its own.
  std::unique_ptr<ClipsEnv> env;
  std::string env_error;
  try {
    env = std::make_unique<ClipsEnv>();
  } catch (const std::exception& e) {
    env_error = e.what();
  }
  CheckedSources checked = check_sources(rule_sources, &diagnostics);
  // Names checked only against data that loaded: a broken file is its own error.
  if (data_ok)
    check_data_references(checked.data_references, data ? *data : DataSets(), &diagnostics);

  auto impl = std::make_unique<PolicyImpl>();
  // Functions and globals first (rules call them), then rules; file order within each.
  for (const auto& c : checked.constructs)
    if (c.kind != "defrule") impl->constructs.push_back(c);
  for (const auto& c : checked.constructs)
    if (c.kind == "defrule") impl->constructs.push_back(c);

  if (!env) {
    diagnostics.push_back({code::kCompile, Severity::Error, "", 0, "", env_error});
    return loaded;
  }
  env->state().data = data;  // before the constructs: a defglobal may read it
  for (const auto& c : impl->constructs) {
    if (!c.ok) continue;  // never hand CLIPS a construct that failed the checks
    env->load(c.text, c.file, c.line, c.name, &diagnostics);
  }
  if (checked.constructs.empty() && !has_errors(diagnostics))
    diagnostics.push_back({code::kNoRules, Severity::Error,
                           rule_sources.empty() ? sources.front().path : rule_sources.front().path,
                           0, "", "no constructs found"});
  // Every indexed pattern compiles or is an error here: a rule set never loads with a
  // pattern-hit rule that could not fire.
  impl->patterns = std::make_unique<PatternIndex>(checked.patterns, &diagnostics);
  if (!has_errors(diagnostics)) check_class_names(impl->constructs, classes.get(), &diagnostics);
  if (!has_errors(diagnostics) && !effects)
    require_effects_table(*env, impl->constructs, &diagnostics);
  if (tables.overlay) {
    std::vector<std::string> names;
    for (const auto& c : impl->constructs)
      if (c.kind == "defrule" && c.ok) names.push_back(c.name);
    tables.overlay->keep_loaded(names, &diagnostics);
    for (auto& e : tables.overlay->mutable_entries())
      for (const auto& c : impl->constructs)
        if (c.kind == "defrule" && c.name == e.rule) e.declared = declared_outcomes(c);
  }

  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return a.file != b.file ? a.file < b.file : a.line < b.line;
                   });
  // The checker and the index may both refuse the same bad regex at the same place.
  diagnostics.erase(std::unique(diagnostics.begin(), diagnostics.end(),
                                [](const Diagnostic& a, const Diagnostic& b) {
                                  return a.code == b.code && a.file == b.file && a.line == b.line &&
                                         a.rule == b.rule;
                                }),
                    diagnostics.end());
  if (has_errors(diagnostics)) return loaded;

  for (const auto& c : impl->constructs)
    if (c.kind == "defrule") impl->rule_names.push_back(c.name);
  impl->digest = sha256_of_sources(sources);  // the tables too: they change decisions
  impl->effects = std::move(effects);
  impl->path_classes = std::move(classes);
  impl->data = std::move(data);
  // An overlay whose every entry named no loaded rule changes nothing: no per-decision lookup.
  if (tables.overlay && !tables.overlay->entries().empty())
    impl->overlay = std::move(tables.overlay);
  if (!env->reset()) {
    diagnostics.push_back({code::kCompile, Severity::Error, "", 0, "",
                           "initializing globals failed or ran past the deadline"});
    return loaded;
  }
  impl->history_filter = std::make_unique<HistoryFilter>(
      evaluated_patterns(std::move(checked.history_patterns), checked.function_calls, env->get()));
  // The spare is the first engine's environment: its resets leave globals alone, as
  // load_into() makes every other engine's.
  EnvSetResetGlobals(env->get(), FALSE);
  impl->set_spare(std::move(env));
  loaded.policy = std::shared_ptr<const Policy>(new Policy(std::move(impl)));
  return loaded;
}

}  // namespace warden
