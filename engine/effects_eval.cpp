// EffectsTable::effects_of: a simple command's effects, read from its program's spec the way
// the program reads its argv (getopt-like, one pass), with its redirects and wrappers.
#include "engine/effects.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "bindings/paths.h"
#include "bindings/urls.h"
#include "engine/effect_words.h"
#include "engine/effects_spec.h"

namespace warden {

using namespace effects_spec;
using namespace effect_words;

namespace {

// paths::normalize(w, cwd, home), without its work for clean words under a clean cwd.
// `cwd_dynamic`: the cwd was set by an option to a value known only at run time.
std::string normalize(std::string_view w, const std::string& cwd, bool cwd_clean, bool cwd_dynamic,
                      const std::string& home) {
  if (cwd_clean && w == ".") return cwd;
  if (cwd_dynamic && has_expansion(cwd) && !w.empty() && w[0] != '/' && w[0] != '~' &&
      w[0] != '$') {
    // Under a directory known only at run time (`-C "$D"`): "$D/w", left unnormalized.
    if (w == ".") return cwd;
    std::string out(cwd);
    out.push_back('/');
    out.append(w);
    return out;
  }
  if (!cwd_clean || !clean_path(w)) return paths::normalize(w, cwd, home);
  if (w[0] == '/') return std::string(w);
  std::string out;
  out.reserve(cwd.size() + 1 + w.size());
  if (cwd != "/") out.append(cwd);
  out.push_back('/');
  out.append(w);
  return out;
}

constexpr std::size_t kMaxDepth = kMaxSubDepth;

struct OperandRef {
  std::uint32_t word;
  std::uint32_t cwd;
  std::uint32_t segment;
};

// Per-thread buffers of the evaluator, reused from command to command (effects_of runs on
// every decision: after warm-up it allocates only the effects it returns).
struct Scratch {
  std::vector<const Spec*> segments;
  std::vector<std::string> cwds;  // the first `ncwd` are in use
  std::vector<char> cwd_clean;
  std::vector<char> cwd_dynamic;  // not an absolute path without expansions (`-C "$D"`)
  std::size_t ncwd = 0;
  std::vector<OperandRef> operands;
  std::vector<std::size_t> counts;
  std::vector<const Option*> turners;
  std::vector<const Option*> hits;
  std::vector<int> set_hits;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> match_hits;  // (entry, word)
  std::string subcommand;
  bool code_given = false;  // an option named code or a file to run (`python -c`, `bash -s`)
  std::string long_word;    // "-eval" read as "--eval"
  std::string backup;       // the value of a "backup" flag: "" none, "*" none either (no copy)
  std::string backup_name;  // one operand's backup copy

  void reset() {
    code_given = false;
    segments.clear();
    ncwd = 0;
    operands.clear();
    turners.clear();
    subcommand.clear();
    backup.clear();
  }
  void push_cwd(std::string_view cwd) {
    if (ncwd == cwds.size()) {
      cwds.emplace_back();
      cwd_clean.push_back(0);
      cwd_dynamic.push_back(0);
    }
    cwds[ncwd].assign(cwd);
    cwd_clean[ncwd] = clean_cwd(cwd) ? 1 : 0;
    cwd_dynamic[ncwd] = ncwd != 0 && (has_expansion(cwd) || cwd.empty() || cwd[0] != '/') ? 1 : 0;
    ++ncwd;
  }
};

thread_local Scratch t_scratch;

class Evaluator {
 public:
  Evaluator(const shell::SimpleCommand& cmd, const std::string& cwd, const std::string& home,
            std::vector<Effect>* out)
      : cmd_(cmd), home_(home), out_(out), s_(t_scratch) {
    s_.reset();
    s_.push_cwd(cwd);
  }

  // Appends the effects of the words of a known program.
  void run(const Spec* top) {
    chain_[0] = top;
    by_option_[0] = false;
    depth_ = 1;
    s_.segments.push_back(top);
    const auto& argv = cmd_.argv;
    const std::size_t n = argv.size();
    std::size_t i = 1;
    bool options_done = false;
    bool sub_pending = top->subcommands;
    while (i < n) {
      const std::string& w = argv[i++];
      const Spec* spec = chain_[depth_ - 1];
      if (!options_done && w.size() > 1 && w[0] == '-') {
        if (w == "--") {
          options_done = true;
          continue;
        }
        if (!option(spec, w, &i, &sub_pending)) return;  // unknown subcommand
        continue;
      }
      if (sub_pending) {
        sub_pending = false;
        if (const Spec* sub = spec->sub(w)) {
          enter(sub, w, false);
          sub_pending = sub->subcommands;
          continue;
        }
        if (!spec->unknown_subs_none) {
          unknown_sub(w);
          return;
        }
      }
      s_.operands.push_back({static_cast<std::uint32_t>(i - 1),
                             static_cast<std::uint32_t>(cwd_index()),
                             static_cast<std::uint32_t>(s_.segments.size() - 1)});
      if (spec->stop_at_operand) options_done = true;
    }
    flush_operands();
    const Spec* last = chain_[depth_ - 1];
    std::size_t own = 0;  // operands of the innermost spec
    for (const OperandRef& r : s_.operands) own += r.segment + 1 == s_.segments.size() ? 1 : 0;
    if (last->has_input && !s_.code_given)
      emit(effect_kind(last->input),
           last->input == K::ExecCode ? EffectObject::Code : EffectObject::None, std::string(),
           "input", false);
    // xargs and parallel append words read from their input: what they are to the program
    // (a file read, a script run) is known only at run time.
    for (const std::string& w : cmd_.wrappers) {
      if (w != "xargs" && w != "parallel") continue;
      // `parallel CMD ::: A B`: the words are on the line (`::::` FILE is judged by the rules)
      if (w == "parallel" &&
          std::find(cmd_.argv.begin(), cmd_.argv.end(), ":::") != cmd_.argv.end())
        break;
      if (sub_pending || last->operand_kind(own, own + 1) != K::None)
        emit(EffectKind::Unknown, EffectObject::None, w, "wrapper", true);
      break;
    }
    for (const RunEffect& r : last->run) run_effect(r);
    matches(last);
  }

  // Code text the program's safe-code regex matches in full (read-only debugger commands).
  bool safe_code(std::string_view w) const {
    for (std::size_t d = depth_; d-- > 0;) {
      if (chain_[d]->safe_code != nullptr) return RE2::FullMatch(w, *chain_[d]->safe_code);
      if (by_option_[d]) break;
    }
    return false;
  }

  // What an option no spec of the chain lists is: the nearest spec that says, else unknown.
  bool others_harmless() const {
    for (std::size_t d = depth_; d-- > 0;) {
      if (chain_[d]->others == Spec::Others::None) return true;
      if (chain_[d]->others == Spec::Others::Unknown) return false;
    }
    return false;
  }

  // A cluster word the harmless-match regex takes whole (`-O2`, `-Wall`): no letters split.
  bool unlisted_whole(std::string_view w) const {
    for (std::size_t d = depth_; d-- > 0;) {
      if (chain_[d]->harmless_match != nullptr && RE2::FullMatch(w, *chain_[d]->harmless_match))
        return true;
      if (by_option_[d]) break;
    }
    return false;
  }

  bool one_dash_long() const {
    for (std::size_t d = depth_; d-- > 0;) {
      if (chain_[d]->one_dash_long) return true;
      if (by_option_[d]) break;
    }
    return false;
  }

  // An option the table does not list: an unknown effect (closed world), unless the
  // program's other options were all reviewed as harmless.
  bool unlisted(std::string_view name, std::string_view word = {}) {
    if (word.empty()) word = name;
    for (std::size_t d = depth_; d-- > 0;) {
      if (chain_[d]->harmless_match != nullptr && RE2::FullMatch(word, *chain_[d]->harmless_match))
        return true;
      if (by_option_[d]) break;
    }
    if (!others_harmless())
      emit(EffectKind::Unknown, EffectObject::None, std::string(name), "option",
           cmd_.dynamic && has_dynamic_char(name));
    return true;
  }

  const std::string& subcommand() const { return s_.subcommand; }

  void emit(EffectKind kind, EffectObject object, std::string target, std::string_view via,
            bool dynamic) {
    Effect& e = out_->emplace_back();
    e.kind = kind;
    e.object = object;
    e.target = std::move(target);
    e.via.assign(via);
    e.dynamic = dynamic;
  }

  // A redirection's file ("-" is a file there, not standard input or output).
  void redirect(EffectKind kind, const std::string& target) {
    emit(kind, EffectObject::Path, path_of(target, 0), "redirect",
         cmd_.dynamic && has_dynamic_char(target));
  }

  // One word of kind `kind` (an operand, an option value, a match hit), relative to the
  // cwd of version `cwd_at`.
  void word(K kind, std::string_view w, std::string_view via, std::size_t cwd_at, bool remote) {
    const std::string& cwd = s_.cwds[cwd_at];
    const bool dyn = cmd_.dynamic && has_dynamic_char(w);
    switch (kind) {
      case K::None:
      case K::Patch:  // never a word's kind: only tool entries have it
        return;
      case K::Cwd: {
        s_.push_cwd(paths::normalize(w, cwd, home_));
        return;
      }
      case K::List:
        // The list is read; what it names (files, URLs, settings) is known only at run time.
        if (w != "-")
          emit(EffectKind::Read, EffectObject::Path, path_of(w, cwd_at), via,
               dyn || (s_.cwd_dynamic[cwd_at] != 0 && !w.starts_with("/")));
        emit(EffectKind::Unknown, EffectObject::None, std::string(via), via, dyn);
        return;
      case K::Exec:
        // "-": the program (a makefile, a script) is read from standard input.
        if (w == "-") {
          emit(EffectKind::Exec, EffectObject::Code, std::string(w), via, dyn);
          return;
        }
        [[fallthrough]];
      case K::Read:
      case K::Write:
      case K::Delete:
        if (w == "-") return;  // standard input or output
        if (remote && looks_remote(w)) {
          emit(EffectKind::Network, EffectObject::Host,
               has_expansion(w) ? std::string(w) : host_of(w), via, dyn);
          return;
        }
        emit(effect_kind(kind), EffectObject::Path, path_of(w, cwd_at), via,
             dyn || (s_.cwd_dynamic[cwd_at] != 0 && !w.starts_with("/")));
        return;
      case K::ExecProgram:
        emit(EffectKind::Exec, EffectObject::Program, first_program(w), via, dyn);
        return;
      case K::ExecCode: {
        // Code holding a string a wrapper replaces at run time (`xargs -I{} python3 -c
        // 'print("{}")'`) is known only then.
        const bool spliced = dyn || shell::holds_replacement(w, cmd_.replaced);
        if (!spliced && safe_code(w)) return;
        emit(EffectKind::Exec, EffectObject::Code, std::string(w), via, spliced);
        return;
      }
      case K::Network:
        if (std::string path; local_source(w, &path)) {
          emit(EffectKind::Read, EffectObject::Path, path_of(path, cwd_at), via,
               dyn || (s_.cwd_dynamic[cwd_at] != 0 && !path.starts_with("/")));
          return;
        }
        emit(EffectKind::Network, EffectObject::Host,
             has_expansion(w) ? std::string(w) : host_of(w), via, dyn);
        return;
      case K::EnvDump:
      case K::Privilege:
      case K::Unknown:
        emit(effect_kind(kind), EffectObject::None, std::string(), via, dyn);
        return;
    }
  }

 private:
  std::string path_of(std::string_view w, std::size_t cwd_at) const {
    return normalize(w, s_.cwds[cwd_at], s_.cwd_clean[cwd_at] != 0, s_.cwd_dynamic[cwd_at] != 0,
                     home_);
  }

  std::size_t cwd_index() const { return s_.ncwd - 1; }
  const std::string& cwd() const { return s_.cwds[s_.ncwd - 1]; }

  // Selects a sub; `subcommand` is the word as written (`npm i` gives "i"): a sub table's
  // aliases share its effects, they are not necessarily synonyms (`cargo publish` reads like
  // `cargo add` but is judged by its own name).
  void enter(const Spec* sub, std::string_view word, bool by_option) {
    if (!s_.subcommand.empty()) s_.subcommand.push_back(' ');
    s_.subcommand.append(word);
    if (depth_ < kMaxDepth) ++depth_;
    chain_[depth_ - 1] = sub;
    by_option_[depth_ - 1] = by_option;
    s_.segments.push_back(sub);
  }

  void unknown_sub(std::string_view name) {
    if (!s_.subcommand.empty()) s_.subcommand.push_back(' ');
    s_.subcommand.append(name);
    emit(EffectKind::Unknown, EffectObject::Program, cmd_.program, "subcommand",
         cmd_.dynamic && has_dynamic_char(name));
    flush_operands();
  }

  // The option named `name` in the spec or, failing that, in the specs it is a sub of
  // (global options after the subcommand: `npm install --prefix DIR`). Not across a sub
  // named by a subcommand option (`python -m pytest -c FILE`: the words are the module's),
  // and a subcommand option is not inherited.
  const Option* find(std::string_view name) const {
    for (std::size_t d = depth_; d-- > 0;) {
      const Option* o = chain_[d]->find(name);
      if (o != nullptr && (d + 1 == depth_ || !o->selects_sub)) return o;
      if (by_option_[d]) break;
    }
    return nullptr;
  }

  // GNU long-option abbreviation: the listed long options `prefix` begins, in the nearest
  // spec that lists any (searched as find() does).
  void abbreviations(std::string_view prefix, std::vector<const Option*>* hits) const {
    for (std::size_t d = depth_; d-- > 0;) {
      const auto& options = chain_[d]->options;
      auto it = std::lower_bound(options.begin(), options.end(), prefix,
                                 [](const Option& o, std::string_view n) { return o.name < n; });
      for (; it != options.end() && std::string_view(it->name).starts_with(prefix); ++it) {
        if (d + 1 == depth_ || !it->selects_sub) hits->push_back(&*it);
      }
      if (!hits->empty() || by_option_[d]) return;
    }
  }

  // Reads the option word `w` (argv[*i - 1]); may consume the next word as its value.
  // False when it selected an unknown subcommand (the rest of the command is unknown).
  bool option(const Spec* spec, const std::string& w, std::size_t* i, bool* sub_pending) {
    const auto& argv = cmd_.argv;
    auto next_value = [&](std::string_view* value) {
      if (*i >= argv.size()) return false;
      *value = argv[(*i)++];
      return true;
    };
    if (spec->single_dash) {
      std::string_view name = w;
      std::string_view value;
      bool inline_value = false;
      const Option* o = find(name);
      if (o == nullptr) {
        if (std::size_t eq = name.find('='); eq != std::string_view::npos) {
          value = name.substr(eq + 1);
          name = name.substr(0, eq);
          inline_value = true;
          o = find(name);
        }
        if (o == nullptr && name.starts_with("--")) o = find(name.substr(1));
      }
      if (o == nullptr) return unlisted(name, w);
      if (o->takes_value && !inline_value && !next_value(&value)) return true;
      return apply(*o, value, sub_pending);
    }
    if (w[1] != '-' && w.size() > 2 && one_dash_long()) {
      // getopt_long_only: "-eval" is "--eval" when a long option of that name is listed.
      s_.long_word.assign("-");
      s_.long_word.append(w);
      const std::size_t eq = s_.long_word.find('=');
      if (find(std::string_view(s_.long_word).substr(0, eq)) != nullptr)
        return long_option(s_.long_word, i, sub_pending);
    }
    if (w[1] == '-') return long_option(w, i, sub_pending);
    // A cluster of one-letter options: "-rf", "-oFILE", "-uo FILE".
    if (find(std::string_view(w).substr(0, 2)) == nullptr) {
      if (unlisted_whole(w)) return true;
      // "-5", "-20": a count (`head -20`, `git log -3`), not letters.
      if (w.find_first_not_of("0123456789", 1) == std::string::npos) return true;
    }
    char name[2] = {'-', 0};
    for (std::size_t j = 1; j < w.size(); ++j) {
      name[1] = w[j];
      const Option* o = find(std::string_view(name, 2));
      if (o == nullptr) {
        unlisted(std::string_view(name, 2));
        continue;
      }
      if (!o->takes_value) {
        // GNU optional argument glued to a flag (`sed -i.bak`, `-i''`): the rest is its value
        // (`-ibak` stays a cluster of letters, each one unknown unless listed).
        const bool glued =
            j + 1 < w.size() && std::isalnum(static_cast<unsigned char>(w[j + 1])) == 0;
        if (!apply(*o, glued ? std::string_view(w).substr(j + 1) : std::string_view(), sub_pending))
          return false;
        if (glued) return true;
        continue;
      }
      std::string_view value;
      if (j + 1 < w.size()) {
        value = std::string_view(w).substr(j + 1);
      } else if (!next_value(&value)) {
        return true;
      }
      return apply(*o, value, sub_pending);
    }
    return true;
  }

  // A long option word ("--name", "--name=value", a GNU abbreviation).
  bool long_option(std::string_view w, std::size_t* i, bool* sub_pending) {
    const auto& argv = cmd_.argv;
    auto next_value = [&](std::string_view* value) {
      if (*i >= argv.size()) return false;
      *value = argv[(*i)++];
      return true;
    };
    {
      std::string_view name = w;
      std::string_view value;
      bool inline_value = false;
      if (std::size_t eq = name.find('='); eq != std::string_view::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        inline_value = true;
      }
      if (const Option* o = find(name)) {
        if (o->takes_value && !inline_value && !next_value(&value)) return true;
        return apply(*o, value, sub_pending);
      }
      if (name.size() < 5) return unlisted(name, w);
      s_.hits.clear();
      abbreviations(name, &s_.hits);
      if (s_.hits.empty()) return unlisted(name, w);
      if (s_.hits.size() > 1) {
        // Ambiguous: it counts as every candidate with an effect (over-approximated).
        std::size_t kept = 0;
        for (const Option* o : s_.hits) {
          if (o->kind != K::None || o->operands || o->selects_sub) s_.hits[kept++] = o;
        }
        s_.hits.resize(kept);
        if (s_.hits.empty()) return true;
      }
      bool wants_value = false;
      for (const Option* o : s_.hits) wants_value = wants_value || o->takes_value;
      if (wants_value && !inline_value && !next_value(&value)) return true;
      for (const Option* o : s_.hits) {
        if (!apply(*o, value, sub_pending)) return false;
      }
      return true;
    }
  }

  bool apply(const Option& o, std::string_view value, bool* sub_pending) {
    if (o.selects_sub) {
      const Spec* spec = chain_[depth_ - 1];
      const std::string name(value);
      if (const Spec* sub = spec->sub(name)) {
        enter(sub, name, true);
        *sub_pending = sub->subcommands;
        return true;
      }
      if (spec->unknown_subs_none) return true;
      unknown_sub(name);
      return false;
    }
    if (o.kind == K::Exec || o.kind == K::ExecCode || o.kind == K::ExecProgram)
      s_.code_given = true;
    for (std::size_t d = depth_; d-- > 0 && !s_.code_given;) {
      for (const std::string& n : chain_[d]->no_input) s_.code_given = s_.code_given || n == o.name;
    }
    if (o.takes_value && o.path_list) {
      // java -cp A:B: each entry is a path of its own.
      for (std::size_t from = 0; from <= value.size();) {
        std::size_t to = value.find(':', from);
        if (to == std::string_view::npos) to = value.size();
        if (to > from) word(o.kind, value.substr(from, to - from), o.name, cwd_index(), false);
        from = to + 1;
      }
      return true;
    }
    if (o.takes_value) {
      word(o.kind, value, o.name, cwd_index(), false);
      return true;
    }
    if (o.backup) s_.backup.assign(value);
    if (o.operands) {
      s_.turners.push_back(&o);
      return true;
    }
    if (o.kind != K::None)
      emit(effect_kind(o.kind), EffectObject::None, std::string(), o.name, false);
    return true;
  }

  void flush_operands() {
    if (s_.operands.empty()) return;
    // Operand counts per segment, for `last`.
    s_.counts.assign(s_.segments.size(), 0);
    for (const OperandRef& r : s_.operands) ++s_.counts[r.segment];
    std::uint32_t seg = s_.operands.front().segment;
    std::size_t pos = 0;
    for (const OperandRef& r : s_.operands) {
      if (r.segment != seg) {
        seg = r.segment;
        pos = 0;
      }
      const Spec* spec = s_.segments[r.segment];
      const K kind = spec->operand_kind(pos++, s_.counts[r.segment]);
      if (r.segment + 1 == s_.segments.size() &&
          (kind == K::Exec || kind == K::ExecCode || kind == K::ExecProgram))
        s_.code_given = true;  // the program is named: it reads none from its input
      const std::string& w = cmd_.argv[r.word];
      if (!s_.turners.empty() && is_path_kind(kind)) {
        for (const Option* t : s_.turners) {
          word(t->kind, w, t->name, r.cwd, spec->remote);
          if (t->backup && backup_name(w)) word(K::Write, s_.backup_name, t->name, r.cwd, false);
        }
        continue;
      }
      word(kind, w, "operand", r.cwd, spec->remote);
    }
  }

  // The backup copy of the edited file `w` (GNU sed, perl -i): each `*` of the value is the
  // file's name as written, a value without one is a suffix; with a `/` it is a path of its
  // own (`-i'bak/*'`, `-i'/home/u/.bashr*'`). False when no copy is made.
  bool backup_name(std::string_view w) {
    const std::string& v = s_.backup;
    if (v.empty() || v == "*") return false;
    s_.backup_name.clear();
    if (v.find('*') == std::string::npos) {
      s_.backup_name.append(w);
      s_.backup_name.append(v);
      return true;
    }
    // Past a path's length, the name stays the value as written: a glob, a write known only
    // at run time (and no value of many `*` times a long name costs what it spells).
    const std::size_t stars = static_cast<std::size_t>(std::count(v.begin(), v.end(), '*'));
    if (stars * w.size() + v.size() > kMaxBackupName) {
      s_.backup_name = v;
      return true;
    }
    for (char c : v) {
      if (c == '*') {
        s_.backup_name.append(w);
      } else {
        s_.backup_name.push_back(c);
      }
    }
    return true;
  }
  static constexpr std::size_t kMaxBackupName = 16384;

  void run_effect(const RunEffect& r) {
    if (r.target.empty()) {
      emit(effect_kind(r.kind), EffectObject::None, std::string(), "program", false);
      return;
    }
    switch (r.kind) {
      case K::Network: {
        std::string host = r.target;
        lower_in_place(&host);
        emit(EffectKind::Network, EffectObject::Host, std::move(host), "program", false);
        return;
      }
      case K::ExecProgram:
        emit(EffectKind::Exec, EffectObject::Program, r.target, "program", false);
        return;
      case K::ExecCode:
        emit(EffectKind::Exec, EffectObject::Code, r.target, "program", false);
        return;
      default:
        emit(effect_kind(r.kind), EffectObject::Path, path_of(r.target, cwd_index()), "program",
             s_.cwd_dynamic[cwd_index()] != 0 && !r.target.starts_with("/"));
        return;
    }
  }

  // The match entries of `spec`: hits in entry order, then word order.
  void matches(const Spec* spec) {
    if (spec->matches.empty()) return;
    s_.match_hits.clear();
    collect_matches(spec, spec->argv_set, true);
    collect_matches(spec, spec->operand_set, false);
    std::stable_sort(s_.match_hits.begin(), s_.match_hits.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [entry, word_index] : s_.match_hits) {
      const Match& m = spec->matches[entry];
      const std::string& w = cmd_.argv[word_index];
      std::string_view target = w;
      re2::StringPiece group;
      if (m.groups && RE2::PartialMatch(w, *m.re, &group) && group.data() != nullptr) {
        target = std::string_view(group.data(), group.size());
      }
      word(m.kind, target, "match", cwd_index(), false);
    }
  }

  void collect_matches(const Spec* spec, const Spec::MatchSet& ms, bool argv) {
    if (ms.ids.empty()) return;
    auto one = [&](std::uint32_t word_index) {
      const std::string& w = cmd_.argv[word_index];
      re2::RE2::Set::ErrorInfo info;
      if (ms.set != nullptr && ms.set->Match(w, &s_.set_hits, &info)) {
        for (int k : s_.set_hits) s_.match_hits.emplace_back(ms.ids[k], word_index);
        return;
      }
      if (ms.set != nullptr && info.kind == re2::RE2::Set::kNoError) return;  // no hit
      for (std::uint32_t entry : ms.ids) {
        if (RE2::PartialMatch(w, *spec->matches[entry].re))
          s_.match_hits.emplace_back(entry, word_index);
      }
    };
    if (argv) {
      for (std::size_t i = 1; i < cmd_.argv.size(); ++i) one(static_cast<std::uint32_t>(i));
      return;
    }
    for (const OperandRef& r : s_.operands) one(r.word);
  }

 private:
  const shell::SimpleCommand& cmd_;
  const std::string& home_;
  std::vector<Effect>* out_;
  std::array<const Spec*, kMaxDepth> chain_{};
  std::array<bool, kMaxDepth> by_option_{};  // chain_[d] was named by a subcommand option
  std::size_t depth_ = 0;
  Scratch& s_;
};

}  // namespace

void EffectsTable::effects_of(const shell::SimpleCommand& cmd, const std::string& cwd,
                              const std::string& home, std::vector<Effect>* out) const {
  const std::size_t start = out->size();
  Evaluator ev(cmd, cwd, home, out);
  for (const std::string& w : cmd.wrappers) {
    if (is_privilege_wrapper(w))
      ev.emit(EffectKind::Privilege, EffectObject::Program, w, "wrapper", false);
  }
  for (const shell::Redirect& r : cmd.redirects) {
    if (r.duplicates_fd() || r.op == "<<" || r.op == "<<<" || r.op == "<<-") continue;
    // Any other operator writes (fail safe for operators this list does not know).
    if (r.op == "<" || r.op == "<&" || r.op == "<>") ev.redirect(EffectKind::Read, r.target);
    if (r.op != "<" && r.op != "<&") ev.redirect(EffectKind::Write, r.target);
  }
  if (!cmd.program.empty()) {
    const bool dynamic_name =
        has_expansion(cmd.program) || (cmd.dynamic && has_dynamic_char(cmd.program));
    auto it = dynamic_name ? index_->by_name.end() : index_->by_name.find(cmd.program);
    if (it == index_->by_name.end()) {
      ev.emit(EffectKind::Unknown, EffectObject::Program, cmd.program, "program", dynamic_name);
    } else {
      ev.run(&it->second->spec);
    }
  }
  for (std::size_t k = start; k < out->size(); ++k) {
    Effect& e = (*out)[k];
    e.program = cmd.program;
    e.subcommand = ev.subcommand();
  }
}

}  // namespace warden
