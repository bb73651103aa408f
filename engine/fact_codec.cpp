#include "engine/fact_codec.h"

#include <string_view>

#include "bindings/paths.h"
#include "bindings/urls.h"
#include "engine/clips_env.h"
#include "engine/proposal_reader.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

#include "engine/fact_writer_inline.h"  // after bindings/clips.h: CLIPS's types

namespace warden {

namespace {

// Leaves already carried by slots of the proposal fact get no param fact of their own.
bool in_proposal_fact(std::string_view key) {
  return key == "target" || key == "action" || key == "explanation" || key == "context.agent" ||
         key == "context.session" || key == "context.source" || key == "context.principal";
}

}  // namespace

FactCodec::FactCodec(ClipsEnv& env, const EffectsTable* effects, const PathClasses* classes)
    : env_(env),
      writer_(env.get()),
      proposal_(writer_.bind_template("proposal")),
      param_(writer_.bind_template("param")),
      url_(writer_.bind_template("url")),
      proposal_slots_{proposal_["id"],          proposal_["target"],    proposal_["action"],
                      proposal_["explanation"], proposal_["agent"],     proposal_["session"],
                      proposal_["source"],      proposal_["principal"], proposal_["groups"],
                      proposal_["depth"],       proposal_["attempt"]},
      param_slots_{param_["proposal"], param_["key"], param_["value"]},
      url_slots_{url_["proposal"], url_["key"],      url_["raw"],  url_["valid"],
                 url_["scheme"],   url_["host"],     url_["port"], url_["path"],
                 url_["ip"],       url_["ip-class"], url_["error"]},
      paths_(env, writer_, classes),
      effects_(effects ? std::make_unique<EffectFacts>(env, writer_, paths_, *effects) : nullptr),
      shell_(env, writer_, effects_.get()),
      history_(writer_),
      results_(writer_) {}

bool FactCodec::assert_param(const Leaf& leaf) {
  void* f = writer_.fact(param_);
  if (!f) return false;
  writer_.put(f, param_slots_.proposal, STRING, writer_.id());
  writer_.put_string(f, param_slots_.key, leaf.key);
  const rapidjson::Value& v = *leaf.value;
  DATA_OBJECT d;
  if (v.IsString()) {
    SetType(d, STRING);
    SetValue(d, writer_.symbol(v.GetString()));
  } else if (v.IsBool()) {
    SetType(d, SYMBOL);
    SetValue(d, v.GetBool() ? EnvTrueSymbol(writer_.env()) : EnvFalseSymbol(writer_.env()));
  } else if (v.IsInt64()) {
    SetType(d, INTEGER);
    SetValue(d, EnvAddLong(writer_.env(), v.GetInt64()));
  } else if (v.IsNumber()) {
    SetType(d, FLOAT);
    SetValue(d, EnvAddDouble(writer_.env(), v.GetDouble()));
  } else {
    SetType(d, SYMBOL);
    SetValue(d, EnvAddSymbol(writer_.env(), "nil"));
  }
  writer_.put(f, param_slots_.value, GetType(d), GetValue(d));
  return writer_.finish(f);
}

// Every slot comes from urls::parse, the same reading `url-host` and `url-ip-class` use.
bool FactCodec::assert_url(const std::string& key, const std::string& raw,
                           const PatternIndex& patterns) {
  // A copy: the rules' url-* functions, run while the fact is matched, may refill the memo.
  const urls::Url url = env_.state().url(raw);
  void* f = writer_.fact(url_);
  if (!f) return false;
  writer_.put(f, url_slots_.proposal, STRING, writer_.id());
  writer_.put_string(f, url_slots_.key, key);
  writer_.put_string(f, url_slots_.raw, raw);
  writer_.put_symbol(f, url_slots_.valid, url.valid ? "TRUE" : "FALSE");
  if (url.valid) {
    writer_.put_string(f, url_slots_.scheme, url.scheme);
    writer_.put_string(f, url_slots_.host, url.host);
    writer_.put_integer(f, url_slots_.port, url.port);
    writer_.put_string(f, url_slots_.path, url.path);
    writer_.put_string(f, url_slots_.ip, url.ip);
    writer_.put_string(f, url_slots_.ip_class, url.ip_class);
  } else {
    writer_.put_string(f, url_slots_.error, url.error);
  }
  if (!writer_.finish(f)) return false;
  return !url.valid || writer_.assert_derived_hits(derived_key::kUrlHost, url.host, patterns);
}

bool FactCodec::assert_all(const ProposalFields& p, const rapidjson::Value& doc,
                           const std::vector<Leaf>& leaves, const PatternIndex& patterns,
                           const FactLimits& limits, FactError* error,
                           const std::vector<HistoryEntry>* history, std::int64_t now,
                           const HistoryFilter* filter, const HistoryFilter::Index* index) {
  writer_.begin(limits, patterns, p.id);
  paths_.begin();
  if (effects_) effects_->begin();
  bool ok = assert_derived(p, doc, leaves, patterns, error);
  history_.begin();
  if (ok && history && !history->empty())
    ok = history_.assert_entries(*history, now, filter, index, env_.state().workspace_root, error);
  if (!ok && !writer_.stopped().code.empty()) *error = writer_.stopped();
  writer_.end();
  return ok;
}

bool FactCodec::assert_derived(const ProposalFields& p, const rapidjson::Value& doc,
                               const std::vector<Leaf>& leaves, const PatternIndex& patterns,
                               FactError* error) {
  auto fail = [&](std::string why) {
    *error = FactError{code::kFacts, std::move(why)};
    return false;
  };
  void* f = writer_.fact(proposal_);
  if (!f) return fail("cannot create facts");
  writer_.put(f, proposal_slots_.id, STRING, writer_.id());
  writer_.put_symbol(f, proposal_slots_.target, p.target);
  writer_.put_symbol(f, proposal_slots_.action, p.action.empty() ? "nil" : p.action.c_str());
  writer_.put_string(f, proposal_slots_.explanation, p.explanation);
  writer_.put_string(f, proposal_slots_.agent, p.agent);
  writer_.put_string(f, proposal_slots_.session, p.session);
  writer_.put_symbol(f, proposal_slots_.source, p.source.empty() ? "nil" : p.source.c_str());
  writer_.put_string(f, proposal_slots_.principal, p.principal);
  writer_.put_strings(f, proposal_slots_.groups, p.groups);
  writer_.put_integer(f, proposal_slots_.depth, p.depth);
  writer_.put_integer(f, proposal_slots_.attempt, p.attempt);
  if (!writer_.finish(f)) return fail("cannot assert the proposal fact");

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
              hit_ok &= writer_.assert_hit(leaf.key, hit);
          });
      if (!ran) return fail("pattern matcher ran out of memory");
      if (forged)
        return fail("the proposal field \"" + leaf.key +
                    "\" has the name of a derived value and matches an indexed pattern");
      if (!hit_ok) return fail("cannot assert a pattern-hit fact");
      if (writer_.past_deadline()) {
        writer_.stop(code::kDeadline,
                     "the decision deadline passed while matching indexed patterns");
        return false;
      }
    }
  }

  // Derived facts read the document's structure: doc.payload.cwd, never a joined key.
  const BindingContext& c = env_.state();
  std::string cwd = c.workspace_root;
  if (const char* raw_cwd = payload_string(doc, "cwd")) {
    cwd = paths::normalize(raw_cwd, c.workspace_root, c.home);
    // (assign: GCC 12 misreads `= "/"` here as an overlapping copy, -Wrestrict)
    if (cwd.empty() || cwd[0] != '/') cwd.assign(1, '/');
    if (!paths_.assert_path("payload.cwd", raw_cwd, c.workspace_root, patterns))
      return fail("cannot assert a path fact");
  }
  if (const char* raw_path = payload_string(doc, "path")) {
    if (!paths_.assert_path("payload.path", raw_path, cwd, patterns))
      return fail("cannot assert a path fact");
  }
  if (const char* raw_url = payload_string(doc, "url")) {
    if (!assert_url("payload.url", raw_url, patterns)) return fail("cannot assert a url fact");
  }
  if (effects_ && !effects_->assert_proposal(p, doc, cwd))
    return fail("cannot assert an effect fact");
  if (p.target == "shell") {
    if (const char* command = payload_string(doc, "command")) {
      if (writer_.past_deadline()) {
        writer_.stop(code::kDeadline,
                     "the decision deadline passed before the shell line was parsed");
        return false;
      }
      if (!shell_.assert_line(command, cwd, patterns)) return fail("cannot assert shell facts");
    }
  }
  return true;
}

}  // namespace warden
