#include "engine/fact_codec.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include "bindings/glob.h"
#include "bindings/paths.h"
#include "bindings/shell_parser.h"
#include "bindings/urls.h"
#include "engine/clips_env.h"
#include "engine/json_writer.h"
#include "engine/overlay.h"
#include "engine/proposal_reader.h"
#include "engine/script_effects.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

namespace warden {

namespace {

void* find_template(void* env, const char* name) {
  void* t = EnvFindDeftemplate(env, name);
  if (!t) throw std::runtime_error(std::string("template missing: ") + name);
  return t;
}

// The string at doc.payload.NAME, or null when absent or not a string.
const char* payload_string(const rapidjson::Value& doc, std::string_view name) {
  const rapidjson::Value* v = value_at(doc, {"payload", name});
  return v && v->IsString() ? v->GetString() : nullptr;
}

// Leaves already carried by slots of the proposal fact get no param fact of their own.
bool in_proposal_fact(std::string_view key) {
  return key == "target" || key == "action" || key == "explanation" || key == "context.agent" ||
         key == "context.session" || key == "context.source" || key == "context.principal";
}

}  // namespace

const unsigned short FactCodec::STRING_TYPE = STRING;
const unsigned short FactCodec::SYMBOL_TYPE = SYMBOL;

namespace {
constexpr std::size_t kPinnedMax = 4096;  // distinct short strings kept interned
constexpr std::size_t kPinnedLength = 64;
}  // namespace

int FactCodec::Template::operator[](const char* name) const {
  auto it = slots.find(std::string_view(name));
  if (it == slots.end()) throw std::runtime_error(std::string("slot missing: ") + name);
  return it->second;
}

FactCodec::Template FactCodec::bind_template(const char* name) {
  Template t;
  t.ptr = find_template(raw_, name);
  int i = 0;
  for (auto* slot = static_cast<struct deftemplate*>(t.ptr)->slotList; slot; slot = slot->next, ++i)
    t.slots[ValueToString(slot->slotName)] = i;
  return t;
}

FactCodec::FactCodec(ClipsEnv& env, const EffectsTable* effects, const PathClasses* classes)
    : env_(env),
      raw_(env.get()),
      proposal_(bind_template("proposal")),
      param_(bind_template("param")),
      shell_command_(bind_template("shell-command")),
      shell_assignment_(bind_template("shell-assignment")),
      shell_redirect_(bind_template("shell-redirect")),
      shell_error_(bind_template("shell-error")),
      path_(bind_template("path")),
      url_(bind_template("url")),
      pattern_hit_(bind_template("pattern-hit")),
      effect_(bind_template("effect")),
      history_(bind_template("history")),
      param_slots_{param_["proposal"], param_["key"], param_["value"]},
      pattern_hit_slots_{pattern_hit_["proposal"], pattern_hit_["key"], pattern_hit_["kind"],
                         pattern_hit_["pattern"]},
      path_slots_{path_["proposal"], path_["key"],          path_["raw"],  path_["normalized"],
                  path_["resolved"], path_["in-workspace"], path_["class"]},
      history_slots_{history_["proposal"], history_["decision"], history_["age"],
                     history_["kind"],     history_["object"],   history_["target"],
                     history_["program"],  history_["class"],    history_["in-workspace"]},
      url_slots_{url_["proposal"], url_["key"],      url_["raw"],  url_["valid"],
                 url_["scheme"],   url_["host"],     url_["port"], url_["path"],
                 url_["ip"],       url_["ip-class"], url_["error"]},
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
      shell_error_slots_{shell_error_["proposal"], shell_error_["message"]},
      proposal_slots_{proposal_["id"],          proposal_["target"],    proposal_["action"],
                      proposal_["explanation"], proposal_["agent"],     proposal_["session"],
                      proposal_["source"],      proposal_["principal"], proposal_["groups"],
                      proposal_["depth"],       proposal_["attempt"]},
      effect_slots_{effect_["proposal"],     effect_["index"],  effect_["kind"],
                    effect_["object"],       effect_["target"], effect_["program"],
                    effect_["subcommand"],   effect_["via"],    effect_["class"],
                    effect_["in-workspace"], effect_["dynamic"]},
      effects_(effects),
      classes_(classes),
      decision_(find_template(raw_, "decision")),
      rewrite_(find_template(raw_, "rewrite")),
      allow_(find_template(raw_, "allow")),
      hint_(find_template(raw_, "hint")),
      approval_(find_template(raw_, "approval")) {
  const Template decision = bind_template("decision"), rewrite = bind_template("rewrite"),
                 allow = bind_template("allow"), hint = bind_template("hint");
  result_slots_ = {decision["rule"], decision["reason"], decision["outcome"], decision["mode"],
                   rewrite["rule"],  rewrite["key"],     rewrite["value"],    rewrite["reason"],
                   rewrite["mode"],  allow["rule"],      allow["capability"], allow["reason"],
                   allow["mode"],    hint["rule"],       hint["text"]};
}

FactCodec::~FactCodec() {
  for (auto& [text, sym] : pinned_) DecrementSymbolCount(raw_, static_cast<SYMBOL_HN*>(sym));
}

void* FactCodec::fact(const Template& tmpl) {
  void* f = EnvCreateFact(raw_, tmpl.ptr);
  if (!f) failed_ = true;
  return f;
}

// Keys, programs, flags and other short strings repeat from one decision to the next:
// keeping them interned spares CLIPS re-creating and collecting them every time.
void* FactCodec::symbol(std::string_view s) {
  if (s.size() > kPinnedLength) return EnvAddSymbol(raw_, std::string(s).c_str());
  auto it = pinned_.find(s);
  if (it != pinned_.end()) return it->second;
  void* sym = EnvAddSymbol(raw_, std::string(s).c_str());
  if (pinned_.size() < kPinnedMax) {
    IncrementSymbolCount(sym);
    pinned_.emplace(std::string(s), sym);
  }
  return sym;
}

void* FactCodec::symbol(const char* s) {
  std::size_t n = std::strlen(s);
  if (n > kPinnedLength) return EnvAddSymbol(raw_, s);
  auto it = pinned_.find(std::string_view(s, n));
  if (it != pinned_.end()) return it->second;
  void* sym = EnvAddSymbol(raw_, s);
  if (pinned_.size() < kPinnedMax) {
    IncrementSymbolCount(sym);
    pinned_.emplace(std::string(s, n), sym);
  }
  return sym;
}

void* FactCodec::symbol(const std::string& s) {
  if (s.size() > kPinnedLength) return EnvAddSymbol(raw_, s.c_str());
  auto it = pinned_.find(std::string_view(s));
  if (it != pinned_.end()) return it->second;
  void* sym = EnvAddSymbol(raw_, s.c_str());
  if (pinned_.size() < kPinnedMax) {
    IncrementSymbolCount(sym);
    pinned_.emplace(s, sym);
  }
  return sym;
}

// What EnvPutFactSlot does for a single-field slot, without looking the slot up by name.
void FactCodec::put(void* f, int slot, unsigned short type, void* value) {
  auto* theFact = static_cast<struct fact*>(f);
  theFact->theProposition.theFields[slot].type = type;
  theFact->theProposition.theFields[slot].value = value;
}

void FactCodec::put_integer(void* f, int slot, long long n) {
  put(f, slot, INTEGER, EnvAddLong(raw_, n));
}

// What EnvPutFactSlot does for a multislot (a fresh multifield owned by the fact, never on
// CLIPS's garbage list), without the slot lookup by name and the intermediate copy.
void FactCodec::put_strings(void* f, int slot, const std::vector<std::string>& items) {
  auto* mf =
      static_cast<struct multifield*>(CreateMultifield2(raw_, static_cast<long>(items.size())));
  for (std::size_t i = 0; i < items.size(); ++i) {
    mf->theFields[i].type = STRING;
    mf->theFields[i].value = symbol(items[i]);
  }
  put(f, slot, MULTIFIELD, mf);
}

void FactCodec::stop(const char* code, std::string message) {
  if (stop_.code.empty()) stop_ = FactError{code, std::move(message)};
  failed_ = true;
}

bool FactCodec::past_deadline() const {
  return limits_ && limits_->deadline && std::chrono::steady_clock::now() > *limits_->deadline;
}

bool FactCodec::count_fact() {
  if (!failed_ && limits_ && ++asserted_ > limits_->max_facts)
    stop(code::kInputTooLarge, "the proposal needs more than " +
                                   std::to_string(limits_->max_facts) +
                                   " facts, the cap per proposal");
  return !failed_;
}

bool FactCodec::finish(void* f) {
  if (count_fact() && limits_ && (asserted_ & 15) == 0 && past_deadline())
    stop(code::kDeadline, "the decision deadline passed while asserting facts");
  if (failed_) {
    ReturnFact(raw_, static_cast<struct fact*>(f));
    return false;
  }
  EnvAssignFactSlotDefaults(raw_, f);
  EnvAssert(raw_, f);  // NULL for a duplicate fact, which is not an error
  return true;
}

bool FactCodec::assert_param(const Leaf& leaf) {
  void* f = fact(param_);
  if (!f) return false;
  put(f, param_slots_.proposal, STRING, id_symbol_);
  put_string(f, param_slots_.key, leaf.key);
  const rapidjson::Value& v = *leaf.value;
  DATA_OBJECT d;
  if (v.IsString()) {
    SetType(d, STRING);
    SetValue(d, symbol(v.GetString()));
  } else if (v.IsBool()) {
    SetType(d, SYMBOL);
    SetValue(d, v.GetBool() ? EnvTrueSymbol(raw_) : EnvFalseSymbol(raw_));
  } else if (v.IsInt64()) {
    SetType(d, INTEGER);
    SetValue(d, EnvAddLong(raw_, v.GetInt64()));
  } else if (v.IsNumber()) {
    SetType(d, FLOAT);
    SetValue(d, EnvAddDouble(raw_, v.GetDouble()));
  } else {
    SetType(d, SYMBOL);
    SetValue(d, EnvAddSymbol(raw_, "nil"));
  }
  put(f, param_slots_.value, GetType(d), GetValue(d));
  return finish(f);
}

bool FactCodec::assert_hit(std::string_view key, const PatternIndex::Hit& hit) {
  void* f = fact(pattern_hit_);
  if (!f) return false;
  put(f, pattern_hit_slots_.proposal, STRING, id_symbol_);
  put(f, pattern_hit_slots_.key, STRING, symbol(key));
  put(f, pattern_hit_slots_.kind, SYMBOL, symbol(hit.kind));
  put(f, pattern_hit_slots_.pattern, STRING, symbol(hit.pattern));
  return finish(f);
}

bool FactCodec::assert_derived_hits(std::string_view key, std::string_view value,
                                    const PatternIndex& patterns) {
  if (!patterns.uses(key)) return true;
  bool ok = true;
  if (!patterns.match_derived(key, value,
                              [&](const PatternIndex::Hit& hit) { ok &= assert_hit(key, hit); })) {
    stop(code::kFacts, "the pattern matcher failed on " + std::string(key));
    return false;
  }
  return ok;
}

// `normalized` is lexical; `resolved` follows symlinks on the host (see paths::resolve);
// in-workspace needs both inside the workspace root (itself resolved). Indexed path-within
// patterns run on both, so a forbidden directory is hit through a symlink too.
bool FactCodec::assert_path(const std::string& key, const std::string& raw, const std::string& cwd,
                            const PatternIndex& patterns) {
  BindingContext& c = env_.state();
  const paths::Location loc = c.resolver.locate(raw, cwd, c.home);
  const paths::Location& root = workspace_root();
  void* f = fact(path_);
  if (!f) return false;
  put(f, path_slots_.proposal, STRING, id_symbol_);
  put_string(f, path_slots_.key, key);
  put_string(f, path_slots_.raw, raw);
  put_string(f, path_slots_.normalized, loc.normalized);
  put_string(f, path_slots_.resolved, loc.resolved);
  put_symbol(f, path_slots_.in_workspace, paths::within(loc, root) ? "TRUE" : "FALSE");
  put_symbol(f, path_slots_.path_class, path_class(loc));
  if (!finish(f)) return false;
  bool ok = true;
  auto on_hit = [&](const PatternIndex::Hit& hit) { ok &= assert_hit(key, hit); };
  if (!patterns.empty()) {
    if (!patterns.match_path(key, loc.normalized, on_hit)) return false;
    if (!loc.resolved.empty() && loc.resolved != loc.normalized &&
        !patterns.match_path(key, loc.resolved, on_hit))
      return false;
  }
  return ok && assert_derived_hits(derived_key::kPathNormalized, loc.normalized, patterns);
}

// The workspace root located once per proposal (the resolver's cache would give the same
// answer for every path of the proposal; it is emptied between proposals, so is this).
const paths::Location& FactCodec::workspace_root() {
  if (!root_) {
    BindingContext& c = env_.state();
    root_ = c.resolver.locate(c.workspace_root, "", c.home);
  }
  return *root_;
}

namespace {

// The readings of a location that are known (resolved is "" when the walk failed).
bool any_within(const paths::Location& inner, const paths::Location& outer) {
  for (const std::string* i : {&inner.normalized, &inner.resolved}) {
    for (const std::string* o : {&outer.normalized, &outer.resolved}) {
      if (!i->empty() && !o->empty() && paths::within(*i, *o)) return true;
    }
  }
  return false;
}

// `path` as a match() pattern naming only itself: glob characters escaped.
std::string literal_pattern(const std::string& path) {
  std::string out;
  for (char ch : path) {
    if (ch == '*' || ch == '?' || ch == '[' || ch == ']' || ch == '\\' || ch == '{' || ch == '}')
      out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace

void FactCodec::set_own_paths(std::vector<paths::Location> own) {
  own_paths_ = std::move(own);
  own_patterns_.clear();
  own_dir_patterns_.clear();
  std::set<std::string> seen, dirs;
  for (const paths::Location& loc : own_paths_) {
    for (const std::string* form : {&loc.normalized, &loc.resolved}) {
      if (form->empty() || (*form)[0] != '/') continue;
      const std::string literal = literal_pattern(*form);
      // The path itself and everything below it.
      if (seen.insert(literal).second) own_patterns_.push_back(literal);
      const std::string below = literal + (literal == "/" ? "**" : "/**");
      if (seen.insert(below).second) own_patterns_.push_back(below);
      for (std::filesystem::path dir = std::filesystem::path(*form).parent_path();;
           dir = dir.parent_path()) {
        dirs.insert(literal_pattern(dir.string()));
        if (dir == dir.root_path() || !dir.has_parent_path()) break;
      }
    }
  }
  own_dir_patterns_.assign(dirs.begin(), dirs.end());
}

// The class of a path that is, lies in or holds one of the daemon's own files; null when
// it is none of them. Both readings of each side count, so neither a symlink to the state
// directory nor a `..` spelling escapes.
const char* FactCodec::own_class(const paths::Location& loc) const {
  const char* out = nullptr;
  for (const paths::Location& own : own_paths_) {
    if (any_within(loc, own)) return kOwnPathClass;
    if (any_within(own, loc)) out = kOwnDirClass;
  }
  return out;
}

// The class of a glob that may name an own path or something inside one (kOwnPathClass),
// or a directory holding one (kOwnDirClass); null otherwise. Decided on the patterns
// (glob::may_overlap, strict: any common path, dotglob), never on the files present.
const char* FactCodec::own_glob_class(const paths::Location& loc) const {
  const char* out = nullptr;
  for (const std::string* g : {&loc.normalized, &loc.resolved}) {
    if (g->empty() || !glob::has_shell_glob(*g)) continue;
    try {
      for (const std::string& pattern : own_patterns_) {
        if (glob::may_overlap(*g, pattern, false, true, true)) return kOwnPathClass;
      }
      if (!out) {
        for (const std::string& pattern : own_dir_patterns_) {
          if (glob::may_overlap(*g, pattern, false, true, true)) {
            out = kOwnDirClass;
            break;
          }
        }
      }
    } catch (const std::exception&) {
      return kOwnPathClass;  // a glob that cannot be read may name anything
    }
  }
  return out;
}

const char* FactCodec::path_class(const paths::Location& loc) {
  if (!own_paths_.empty()) {
    if (const char* own = own_class(loc)) return own;
  }
  if (!classes_) return "none";
  // Class names are NUL-free symbols owned by the table, which outlives the codec.
  return classes_->classify(loc.normalized, loc.resolved, env_.state().home).data();
}

// A glob is as sensitive as the most sensitive name it may expand to: its class is the
// earlier (in file order) of its own and the first class one of whose patterns it may
// match (any path both match outside the workspace; inside it the glob must spell the
// name, see PathClasses::classify_glob). A name pattern starting with "." that may match
// ".." (`.*`, `.?`) climbs out of
// where it stands: the rest of the path may then lie anywhere, outside the workspace.
void FactCodec::glob_class(const std::string& glob, EffectRecord* rec) {
  std::string pattern = glob;
  for (std::size_t end = glob.size(); end != std::string::npos && end > 0;) {
    const std::size_t slash = glob.rfind('/', end - 1);
    if (slash == std::string::npos) break;
    const std::string name = glob.substr(slash + 1, end - slash - 1);
    bool climbs = true;  // a glob that cannot be compiled is read as climbing
    try {
      climbs = glob::match(name, "..");
    } catch (const std::exception&) {
    }
    if (name.size() > 1 && name[0] == '.' && glob::has_shell_glob(name) && climbs) {
      pattern = "/**" + glob.substr(end);
      rec->in_workspace = false;
      break;
    }
    end = slash;
  }
  const std::string_view by_glob =
      classes_->classify_glob(pattern, env_.state().home, dotglob_, !rec->in_workspace);
  if (by_glob == "none") return;
  const std::vector<std::string> order = classes_->names();
  auto rank = [&](std::string_view name) {
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), name) - order.begin());
  };
  if (rank(by_glob) < rank(rec->path_class)) rec->path_class = std::string(by_glob);
}

// An effect fact. A path target is located like a `path` fact: class from both readings,
// in the workspace only if both lie within the (resolved) workspace root.
bool FactCodec::assert_effect(long long index, const Effect& e, const std::string& cwd) {
  BindingContext& c = env_.state();
  EffectRecord rec;
  rec.kind = effect_kind_name(e.kind);
  rec.object = effect_object_name(e.object);
  rec.target = e.target;
  rec.program = e.program;
  rec.path_class = "none";
  rec.subcommand = e.subcommand;
  rec.via = e.via;
  rec.dynamic = e.dynamic;
  if (e.object == EffectObject::Path) {
    const paths::Location loc = c.resolver.locate(e.target, cwd, c.home);
    const paths::Location& root = workspace_root();
    rec.in_workspace = paths::within(loc, root);
    rec.path_class = path_class(loc);
    if (classes_ && glob::has_shell_glob(loc.normalized) && rec.path_class != kOwnPathClass)
      glob_class(loc.normalized, &rec);
    if (!own_paths_.empty() && rec.path_class != kOwnPathClass &&
        (glob::has_shell_glob(loc.normalized) || glob::has_shell_glob(loc.resolved))) {
      if (const char* own = own_glob_class(loc)) rec.path_class = own;
    }
  }
  void* f = fact(effect_);
  if (!f) return false;
  const EffectSlots& k = effect_slots_;
  put(f, k.proposal, STRING, id_symbol_);
  put_integer(f, k.index, index);
  put_symbol(f, k.kind, rec.kind);
  put_symbol(f, k.object, rec.object);
  put_string(f, k.target, rec.target);
  put_string(f, k.program, rec.program);
  put_string(f, k.subcommand, rec.subcommand);
  put_string(f, k.via, rec.via);
  put_symbol(f, k.path_class, rec.path_class);
  put_symbol(f, k.in_workspace, rec.in_workspace ? "TRUE" : "FALSE");
  put_symbol(f, k.dynamic, rec.dynamic ? "TRUE" : "FALSE");
  if (!finish(f)) return false;
  if (!assert_derived_hits(derived_key::kEffectTarget, rec.target)) return false;
  effect_records_.push_back(std::move(rec));
  return true;
}

// The effects table's effects of one simple command, and its redirections: output to a
// file is a write, input from one a read (`<>` both); descriptor duplications (`2>&1`,
// `>&-`) and here-documents touch no file. (EffectsTable::effects_of may already list the
// redirections; they are added here only when it did not.)
bool FactCodec::assert_command_effects(long long index, const shell::SimpleCommand& cmd,
                                       const std::string& cwd) {
  const BindingContext& c = env_.state();
  effect_buffer_.clear();
  effects_->effects_of(cmd, cwd, c.home, &effect_buffer_);  // redirections included
  // Program text of awk and sed: its reads, writes and commands (engine/script_effects.h).
  script_effects(cmd, cwd, c.home, &effect_buffer_);
  // Text the shell evaluates as code when the command runs (`test -v 'a[$(id)]'`, a trap,
  // prompt expansion …): code nobody can review here.
  for (const std::string& code : cmd.code) {
    Effect e;
    e.kind = EffectKind::Exec;
    e.object = EffectObject::Code;
    e.target = code;
    e.program = cmd.program;
    e.via = "shell evaluation";
    e.dynamic = true;
    effect_buffer_.push_back(std::move(e));
  }
  for (const auto& e : effect_buffer_)
    if (!assert_effect(index, e, cwd)) return false;
  return true;
}

// Effects of a proposal that is not a shell line: the file actuator reads, writes or
// deletes payload.path (the verb from `action` or payload.action, either counting), and a
// read with a file-name glob reads what it names; the HTTP actuator reaches the host of
// payload.url; a tool call (action `call` or none) has the effects the table gives its
// arguments (EffectsTable::tool_effects).
bool FactCodec::assert_proposal_effects(const ProposalFields& p, const rapidjson::Value& doc,
                                        const std::string& cwd) {
  const BindingContext& c = env_.state();
  if (p.target == "file") {
    const char* raw_path = payload_string(doc, "path");
    if (!raw_path) return true;
    bool kinds[3] = {false, false, false};  // read, write, delete
    auto add = [&](std::string_view verb) {
      if (verb == "read")
        kinds[0] = true;
      else if (verb == "write" || verb == "append")
        kinds[1] = true;
      else if (verb == "delete")
        kinds[2] = true;
    };
    add(p.action);
    if (const char* verb = payload_string(doc, "action")) add(verb);
    static const EffectKind kKinds[3] = {EffectKind::Read, EffectKind::Write, EffectKind::Delete};
    const std::string target = paths::normalize(raw_path, cwd, c.home);
    for (int i = 0; i < 3; ++i) {
      if (!kinds[i]) continue;
      Effect e;
      e.kind = kKinds[i];
      e.object = EffectObject::Path;
      e.target = target;
      e.via = "payload.path";
      if (!assert_effect(-1, e, cwd)) return false;
    }
    // A search under payload.path (an agent's Grep or Glob): the file-name glob in
    // payload.glob, and payload.pattern unless the proposal is a content search (Grep's
    // pattern is a regex over file contents, not a name), are reads of the files they
    // name, relative to payload.path (an exclusion, "!GLOB", reads nothing).
    if (kinds[0]) {
      const rapidjson::Value* tool = value_at(doc, {"context", "tool"});
      const bool content_search =
          tool && tool->IsString() && std::string_view(tool->GetString()) == "Grep";
      for (const char* field : {"glob", "pattern"}) {
        if (content_search && std::string_view(field) == "pattern") continue;
        const char* glob = payload_string(doc, field);
        if (!glob || glob[0] == '!') continue;  // "!GLOB" excludes files (rg): reads nothing
        Effect e;
        e.kind = EffectKind::Read;
        e.object = EffectObject::Path;
        e.target = paths::normalize(glob, target, c.home);
        e.via = std::string("payload.") + field;
        e.dynamic = std::string_view(glob).find_first_of("*?[{") != std::string_view::npos;
        if (!assert_effect(-1, e, target)) return false;
      }
    }
  } else if (p.target == "tool" && (p.action.empty() || p.action == "call")) {
    const char* tool = payload_string(doc, "tool");
    if (!tool) return true;
    const char* server = payload_string(doc, "server");
    effect_buffer_.clear();
    effects_->tool_effects(server ? server : "", tool, value_at(doc, {"payload", "args"}), cwd,
                           c.home, &effect_buffer_);
    for (const auto& e : effect_buffer_)
      if (!assert_effect(-1, e, cwd)) return false;
  } else if (p.target == "http") {
    const char* raw_url = payload_string(doc, "url");
    if (!raw_url) return true;
    const urls::Url& url = env_.state().url(raw_url);  // read once for the url fact too
    Effect e;
    e.kind = EffectKind::Network;
    e.object = EffectObject::Host;
    e.target = url.valid ? url.host : "";
    e.via = "payload.url";
    if (!assert_effect(-1, e, cwd)) return false;
  }
  return true;
}

namespace {}  // namespace

// An effect of an earlier approved decision of the session. Symbols come from the engine's
// own records; anything else is shown as unknown/none rather than refused by CLIPS.
bool FactCodec::assert_history(const HistoryEntry& h, std::int64_t now) {
  const HistoryValues v = history_values(h);  // views of whole strings or literals: NUL-terminated
  void* f = fact(history_);
  if (!f) return false;
  put(f, history_slots_.proposal, STRING, id_symbol_);
  put_string(f, history_slots_.decision, h.decision_id);
  put_integer(f, history_slots_.age, now > h.time ? now - h.time : 0);
  put_symbol(f, history_slots_.kind, v.kind.data());
  put_symbol(f, history_slots_.object, v.object.data());
  put_string(f, history_slots_.target, h.effect.target);
  put_string(f, history_slots_.program, h.effect.program);
  put_symbol(f, history_slots_.path_class, v.path_class.data());
  put_symbol(f, history_slots_.in_workspace, v.in_workspace ? "TRUE" : "FALSE");
  return finish(f);
}

// Every slot comes from urls::parse, the same reading `url-host` and `url-ip-class` use.
bool FactCodec::assert_url(const std::string& key, const std::string& raw,
                           const PatternIndex& patterns) {
  // A copy: the rules' url-* functions, run while the fact is matched, may refill the memo.
  const urls::Url url = env_.state().url(raw);
  void* f = fact(url_);
  if (!f) return false;
  put(f, url_slots_.proposal, STRING, id_symbol_);
  put_string(f, url_slots_.key, key);
  put_string(f, url_slots_.raw, raw);
  put_symbol(f, url_slots_.valid, url.valid ? "TRUE" : "FALSE");
  if (url.valid) {
    put_string(f, url_slots_.scheme, url.scheme);
    put_string(f, url_slots_.host, url.host);
    put_integer(f, url_slots_.port, url.port);
    put_string(f, url_slots_.path, url.path);
    put_string(f, url_slots_.ip, url.ip);
    put_string(f, url_slots_.ip_class, url.ip_class);
  } else {
    put_string(f, url_slots_.error, url.error);
  }
  if (!finish(f)) return false;
  return !url.valid || assert_derived_hits(derived_key::kUrlHost, url.host, patterns);
}

bool FactCodec::assert_shell_command(long long index, const shell::SimpleCommand& cmd,
                                     const std::string& cwd, const PatternIndex& patterns) {
  const BindingContext& c = env_.state();
  std::vector<std::string> normalized;
  normalized.reserve(cmd.args.size());
  for (const auto& arg : cmd.args) normalized.push_back(paths::normalize(arg, cwd, c.home));
  std::vector<std::string> names;
  names.reserve(cmd.assignments.size());
  for (const auto& a : cmd.assignments) names.push_back(a.name);
  void* f = fact(shell_command_);
  if (!f) return false;
  put(f, shell_command_slots_.proposal, STRING, id_symbol_);
  put_integer(f, shell_command_slots_.index, index);
  put_string(f, shell_command_slots_.program, cmd.program);
  put_strings(f, shell_command_slots_.argv, cmd.argv);
  put_strings(f, shell_command_slots_.flags, cmd.flags);
  put_strings(f, shell_command_slots_.args, cmd.args);
  put_strings(f, shell_command_slots_.paths, normalized);
  put_strings(f, shell_command_slots_.wrappers, cmd.wrappers);
  put_strings(f, shell_command_slots_.assignments, names);
  put_integer(f, shell_command_slots_.depth, cmd.depth);
  put_string(f, shell_command_slots_.cwd, cwd);
  put_symbol(f, shell_command_slots_.dynamic, cmd.dynamic ? "TRUE" : "FALSE");
  // The file the first word runs when it names one by a path, as (path-normalize w cwd) reads
  // it: rules join the history on it (`./build.sh` after a write of build.sh).
  if (!cmd.argv.empty() && cmd.argv.front().find('/') != std::string::npos)
    put_string(f, shell_command_slots_.runs,
               paths::normalize_at(cmd.argv.front(), cwd, c.workspace_root, c.home));
  if (!finish(f)) return false;
  if (!assert_derived_hits(derived_key::kShellProgram, cmd.program, patterns)) return false;
  for (const auto& a : cmd.assignments) {
    void* af = fact(shell_assignment_);
    if (!af) return false;
    put(af, shell_assignment_slots_.proposal, STRING, id_symbol_);
    put_integer(af, shell_assignment_slots_.index, index);
    put_string(af, shell_assignment_slots_.name, a.name);
    put_string(af, shell_assignment_slots_.value, a.value);
    put_symbol(af, shell_assignment_slots_.dynamic, a.dynamic ? "TRUE" : "FALSE");
    if (!finish(af)) return false;
  }
  for (const auto& r : cmd.redirects) {
    void* rf = fact(shell_redirect_);
    if (!rf) return false;
    put(rf, shell_redirect_slots_.proposal, STRING, id_symbol_);
    put_integer(rf, shell_redirect_slots_.index, index);
    put_string(rf, shell_redirect_slots_.op, r.op);
    put_integer(rf, shell_redirect_slots_.fd, r.fd);
    put_string(rf, shell_redirect_slots_.target, r.target);
    put_string(rf, shell_redirect_slots_.path,
               r.duplicates_fd() ? "" : paths::normalize(r.target, cwd, c.home).c_str());
    if (!finish(rf)) return false;
  }
  if (effects_ && !assert_command_effects(index, cmd, cwd)) return false;
  return true;
}

bool FactCodec::assert_shell(const std::string& command, const std::string& start_cwd,
                             const PatternIndex& patterns) {
  const BindingContext& c = env_.state();
  shell::ParseResult parsed = shell::parse(command, limits_->shell);
  if (!parsed.ok) {
    switch (parsed.failure) {
      case shell::Failure::Deadline:
        stop(code::kDeadline, parsed.error);
        return false;
      case shell::Failure::Limit:
        stop(code::kInputTooLarge, "shell command over a cap: " + parsed.error);
        return false;
      case shell::Failure::Internal:
        stop(code::kFacts, "the shell parser failed: " + parsed.error);
        return false;
      case shell::Failure::Syntax:
      case shell::Failure::None:
        break;
    }
    void* f = fact(shell_error_);
    if (!f) return false;
    put(f, shell_error_slots_.proposal, STRING, id_symbol_);
    put_string(f, shell_error_slots_.message, parsed.error);
    return finish(f);
  }
  // Each command runs in every directory the parser says it may (`cd X; …` may have
  // failed; a subshell's cd stays inside it): its facts are asserted once per distinct
  // directory. A directory that cannot be told is "/", so relative paths after it count
  // as outside the workspace.
  long long index = 0;
  std::vector<std::string> cwds;
  // `shopt -s dotglob` or GLOBIGNORE anywhere in the line: `*` may match ".env".
  dotglob_ = false;
  for (const auto& cmd : parsed.commands) {
    if (cmd.program == "shopt" &&
        std::find(cmd.args.begin(), cmd.args.end(), "dotglob") != cmd.args.end())
      dotglob_ = true;
    for (const auto& a : cmd.assignments)
      if (a.name == "GLOBIGNORE") dotglob_ = true;
  }
  for (const auto& cmd : parsed.commands) {
    cwds.clear();
    for (const shell::WorkingDir& d : cmd.cwds) {
      std::string cwd = start_cwd;
      if (!d.known) {
        cwd = "/";
      } else {
        for (const std::string& step : d.steps) {
          cwd = paths::normalize(step, cwd, c.home);
          if (cwd.empty() || cwd[0] != '/') {
            cwd = "/";
            break;
          }
        }
      }
      if (std::find(cwds.begin(), cwds.end(), cwd) == cwds.end()) cwds.push_back(std::move(cwd));
    }
    if (cwds.empty()) cwds.push_back(start_cwd);
    for (const std::string& cwd : cwds)
      if (!assert_shell_command(index, cmd, cwd, patterns)) return false;
    ++index;
  }
  return true;
}

bool FactCodec::assert_all(const ProposalFields& p, const rapidjson::Value& doc,
                           const std::vector<Leaf>& leaves, const PatternIndex& patterns,
                           const FactLimits& limits, FactError* error,
                           const std::vector<HistoryEntry>* history, std::int64_t now,
                           const HistoryFilter* filter, const HistoryFilter::Index* index) {
  failed_ = false;
  limits_ = &limits;
  patterns_ = &patterns;
  asserted_ = 0;
  stop_ = {};
  root_.reset();
  // Every fact of the proposal names it: interned once, held until its facts hold it.
  id_symbol_ = symbol(p.id);
  IncrementSymbolCount(id_symbol_);
  effect_records_.clear();
  bool ok = assert_derived(p, doc, leaves, patterns, error);
  history_asserted_ = 0;
  if (ok && history && !history->empty()) {
    // Only the entries a rule that can fire for this proposal may match, now that its own
    // facts are in (engine/history_filter.h); every entry without a filter.
    const bool filtered = filter && index;
    std::vector<char> keep;
    if (filtered) keep = filter->select(raw_, *index, env_.state().workspace_root);
    for (std::size_t i = 0; i < history->size(); ++i) {
      if (filtered && !keep[i]) {
        // Not asserted, but counted: the fact cap refuses a history as it would with every
        // entry asserted, so a decision is the same with the filter or without.
        if (!count_fact()) {
          ok = false;
          break;
        }
        continue;
      }
      ++history_asserted_;
      if (!assert_history((*history)[i], now)) {
        *error = FactError{code::kFacts, "cannot assert a history fact"};
        ok = false;
        break;
      }
    }
  }
  if (!ok && !stop_.code.empty()) *error = stop_;
  limits_ = nullptr;
  patterns_ = nullptr;
  DecrementSymbolCount(raw_, static_cast<SYMBOL_HN*>(id_symbol_));
  id_symbol_ = nullptr;
  return ok;
}

bool FactCodec::assert_derived(const ProposalFields& p, const rapidjson::Value& doc,
                               const std::vector<Leaf>& leaves, const PatternIndex& patterns,
                               FactError* error) {
  auto fail = [&](std::string why) {
    *error = FactError{code::kFacts, std::move(why)};
    return false;
  };
  void* f = fact(proposal_);
  if (!f) return fail("cannot create facts");
  put(f, proposal_slots_.id, STRING, id_symbol_);
  put_symbol(f, proposal_slots_.target, p.target);
  put_symbol(f, proposal_slots_.action, p.action.empty() ? "nil" : p.action.c_str());
  put_string(f, proposal_slots_.explanation, p.explanation);
  put_string(f, proposal_slots_.agent, p.agent);
  put_string(f, proposal_slots_.session, p.session);
  put_symbol(f, proposal_slots_.source, p.source.empty() ? "nil" : p.source.c_str());
  put_string(f, proposal_slots_.principal, p.principal);
  put_strings(f, proposal_slots_.groups, p.groups);
  put_integer(f, proposal_slots_.depth, p.depth);
  put_integer(f, proposal_slots_.attempt, p.attempt);
  if (!finish(f)) return fail("cannot assert the proposal fact");

  // Param keys are the member names joined with `.`: unambiguous, as no key holds a `.`.
  for (const auto& leaf : leaves) {
    if (in_proposal_fact(leaf.key)) continue;
    if (!assert_param(leaf)) return fail("cannot assert a param fact");
    if (!patterns.empty() && leaf.value->IsString()) {
      bool hit_ok = true, forged = false;
      // A leaf named like a derived key ("url.host" from a top-level "url" object) gets no
      // hit: it would read as the derived value's hit, which an exception may wait for.
      const bool reserved = is_derived_key(leaf.key);
      bool ran = patterns.match_value(
          leaf.key, std::string_view(leaf.value->GetString(), leaf.value->GetStringLength()),
          [&](const PatternIndex::Hit& hit) {
            if (reserved)
              forged = true;
            else
              hit_ok &= assert_hit(leaf.key, hit);
          });
      if (!ran) return fail("pattern matcher ran out of memory");
      if (forged)
        return fail("the proposal field \"" + leaf.key +
                    "\" has the name of a derived value and matches an indexed pattern");
      if (!hit_ok) return fail("cannot assert a pattern-hit fact");
      if (past_deadline()) {
        stop(code::kDeadline, "the decision deadline passed while matching indexed patterns");
        return false;
      }
    }
  }

  // Derived facts read the document's structure: doc.payload.cwd, never a joined key.
  const BindingContext& c = env_.state();
  std::string cwd = c.workspace_root;
  if (const char* raw_cwd = payload_string(doc, "cwd")) {
    cwd = paths::normalize(raw_cwd, c.workspace_root, c.home);
    if (cwd.empty() || cwd[0] != '/') cwd = "/";
    if (!assert_path("payload.cwd", raw_cwd, c.workspace_root, patterns))
      return fail("cannot assert a path fact");
  }
  if (const char* raw_path = payload_string(doc, "path")) {
    if (!assert_path("payload.path", raw_path, cwd, patterns))
      return fail("cannot assert a path fact");
  }
  if (const char* raw_url = payload_string(doc, "url")) {
    if (!assert_url("payload.url", raw_url, patterns)) return fail("cannot assert a url fact");
  }
  if (effects_ && !assert_proposal_effects(p, doc, cwd))
    return fail("cannot assert an effect fact");
  if (p.target == "shell") {
    if (const char* command = payload_string(doc, "command")) {
      if (past_deadline()) {
        stop(code::kDeadline, "the decision deadline passed before the shell line was parsed");
        return false;
      }
      if (!assert_shell(command, cwd, patterns)) return fail("cannot assert shell facts");
    }
  }
  return true;
}

namespace {

std::string slot_text(void* env, void* f, const char* slot) {
  DATA_OBJECT v;
  if (!EnvGetFactSlot(env, f, slot, &v)) return {};
  if (GetType(v) == STRING || GetType(v) == SYMBOL) return DOToString(v);
  return {};
}

// The same for the slot at `slot` (its position in the template), as EnvGetFactSlot reads it.
std::string slot_text(void* f, int slot) {
  const struct field& v = static_cast<struct fact*>(f)->theProposition.theFields[slot];
  if (v.type == STRING || v.type == SYMBOL) return ValueToString(v.value);
  return {};
}

}  // namespace

void FactCodec::read_results(std::vector<FiredRule>* rules, std::vector<Rewrite>* rewrites,
                             std::vector<Grant>* allows, std::vector<Hint>* hints,
                             std::string* error) {
  const auto& k = result_slots_;
  for (void* f = EnvGetNextFactInTemplate(raw_, decision_, nullptr); f;
       f = EnvGetNextFactInTemplate(raw_, decision_, f)) {
    FiredRule r;
    r.rule = slot_text(f, k.decision_rule);
    r.reason = slot_text(f, k.decision_reason);
    std::string outcome = slot_text(f, k.decision_outcome);
    std::string mode = slot_text(f, k.decision_mode);
    auto parsed = parse_outcome(outcome);
    if (!parsed && error->empty())
      *error = "rule '" + r.rule + "' asserted an invalid outcome '" + outcome + "'";
    if (mode != "enforce" && mode != "monitor" && error->empty())
      *error = "rule '" + r.rule + "' asserted an invalid mode '" + mode + "'";
    r.outcome = parsed.value_or(Outcome::Reject);
    r.monitor = mode == "monitor";
    rules->push_back(std::move(r));
  }
  for (void* f = EnvGetNextFactInTemplate(raw_, rewrite_, nullptr); f;
       f = EnvGetNextFactInTemplate(raw_, rewrite_, f)) {
    Rewrite w;
    w.rule = slot_text(f, k.rewrite_rule);
    w.key = slot_text(f, k.rewrite_key);
    w.new_value = slot_text(f, k.rewrite_value);
    w.reason = slot_text(f, k.rewrite_reason);
    std::string mode = slot_text(f, k.rewrite_mode);
    if (mode != "enforce" && mode != "monitor" && error->empty())
      *error = "rule '" + w.rule + "' asserted an invalid mode '" + mode + "'";
    w.monitor = mode == "monitor";
    rewrites->push_back(std::move(w));
  }
  for (void* f = EnvGetNextFactInTemplate(raw_, allow_, nullptr); f;
       f = EnvGetNextFactInTemplate(raw_, allow_, f)) {
    Grant g;
    g.rule = slot_text(f, k.allow_rule);
    g.capability = slot_text(f, k.allow_capability);
    g.reason = slot_text(f, k.allow_reason);
    std::string mode = slot_text(f, k.allow_mode);
    if (mode != "enforce" && mode != "monitor" && error->empty())
      *error = "rule '" + g.rule + "' asserted an invalid mode '" + mode + "'";
    g.monitor = mode == "monitor";
    allows->push_back(std::move(g));
  }
  for (void* f = EnvGetNextFactInTemplate(raw_, hint_, nullptr); f;
       f = EnvGetNextFactInTemplate(raw_, hint_, f)) {
    hints->push_back(Hint{slot_text(f, k.hint_rule), slot_text(f, k.hint_text)});
  }
}

void FactCodec::read_approval(Decision* decision, std::string* error, const RuleOverlay* overlay) {
  for (void* f = EnvGetNextFactInTemplate(raw_, approval_, nullptr); f;
       f = EnvGetNextFactInTemplate(raw_, approval_, f)) {
    const std::string rule = slot_text(raw_, f, "rule");
    if (overlay && !overlay->approval_counts(rule)) continue;  // a disabled rule sets no terms
    DATA_OBJECT expires, approvers;
    const bool have_expires =
        EnvGetFactSlot(raw_, f, "expires-in", &expires) && GetType(expires) == INTEGER;
    const bool have_approvers =
        EnvGetFactSlot(raw_, f, "approvers", &approvers) && GetType(approvers) == INTEGER;
    const long long expires_in = have_expires ? DOToLong(expires) : -1;
    const long long needed = have_approvers ? DOToLong(approvers) : 0;
    if (expires_in < 0) {
      if (error->empty())
        *error = "rule '" + rule + "' asserted an approval with expires-in " +
                 std::to_string(expires_in) + "; it must be a positive number of seconds";
      continue;
    }
    if (needed < 1 || needed > 2) {
      if (error->empty())
        *error = "rule '" + rule + "' asserted an approval with approvers " +
                 std::to_string(needed) + "; it must be 1 or 2";
      continue;
    }
    decision->approval_set = true;
    if (expires_in > 0 &&
        (decision->approval_expires_s == 0 || expires_in < decision->approval_expires_s))
      decision->approval_expires_s = expires_in;
    if (needed > decision->approvers_needed) decision->approvers_needed = static_cast<int>(needed);
  }
}

std::string FactCodec::facts_json() {
  std::string out = "[";
  std::vector<char> buffer(64 * 1024);
  bool first = true;
  for (void* f = EnvGetNextFact(raw_, nullptr); f; f = EnvGetNextFact(raw_, f)) {
    void* tmpl = EnvFactDeftemplate(raw_, f);
    if (tmpl == decision_ || tmpl == rewrite_ || tmpl == allow_ || tmpl == hint_ ||
        tmpl == approval_)
      continue;
    const char* name = EnvGetDeftemplateName(raw_, tmpl);
    if (name && std::strcmp(name, "initial-fact") == 0) continue;
    EnvGetFactPPForm(raw_, buffer.data(), buffer.size(), f);
    if (!first) out += ',';
    first = false;
    append_json_string(out, buffer.data());
  }
  out += ']';
  return out;
}

}  // namespace warden
