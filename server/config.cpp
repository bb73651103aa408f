#include "server/config.h"

#include <toml++/toml.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <re2/re2.h>
#include "audit/chain.h"
#include "audit/mask.h"
#include "engine/decision.h"
#include "reasoning/config_check.h"
#include "server/notifier.h"
#include "server/own_files.h"

namespace warden::server {

namespace {

namespace fs = std::filesystem;

std::string resolve(std::string_view base_dir, const std::string& path) {
  if (path.empty() || base_dir.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

const char* type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date/time";
  }
}

std::string fmt_number(double v);

// Reads one table against a list of known keys; anything else is an unknown key.
class TableReader {
 public:
  using Handler = std::function<void(const toml::node&, const std::string& key)>;

  TableReader(ConfigErrors* errors, std::string prefix)
      : errors_(errors), prefix_(std::move(prefix)) {}

  void on(const std::string& name, Handler handler) { handlers_[name] = std::move(handler); }

  // Errors of this table's keys name the line they are on, and *lines keeps each key's
  // line, for the checks made after reading (validate_config).
  void with_lines(std::map<std::string, int>* lines) { lines_ = lines; }

  void read(const toml::table& table) {
    for (auto&& [k, node] : table) {
      std::string key = prefix_ + std::string(k.str());
      const std::size_t before = errors_->size();
      auto it = handlers_.find(std::string(k.str()));
      if (it == handlers_.end()) {
        errors_->push_back({key, "unknown key"});
      } else {
        it->second(node, key);
      }
      if (lines_) {
        const int line = static_cast<int>(node.source().begin.line);
        (*lines_)[key] = line;
        for (std::size_t i = before; i < errors_->size(); ++i) (*errors_)[i].line = line;
      }
    }
  }

  void wrong_type(const toml::node& node, const std::string& key, const char* want) {
    errors_->push_back({key, std::string("must be ") + want + ", not " + type_name(node)});
  }

  Handler string(std::string* out) {
    return [this, out](const toml::node& node, const std::string& key) {
      if (auto v = node.value_exact<std::string>()) {
        *out = *v;
      } else {
        wrong_type(node, key, "a string");
      }
    };
  }

  Handler boolean(bool* out) {
    return [this, out](const toml::node& node, const std::string& key) {
      if (auto v = node.value_exact<bool>()) {
        *out = *v;
      } else {
        wrong_type(node, key, "a boolean");
      }
    };
  }

  template <typename T>
  Handler integer(T* out, std::int64_t min, std::int64_t max) {
    return [this, out, min, max](const toml::node& node, const std::string& key) {
      auto v = node.value_exact<std::int64_t>();
      if (!v) {
        wrong_type(node, key, "an integer");
      } else if (*v < min || *v > max) {
        errors_->push_back({key, "must be between " + std::to_string(min) + " and " +
                                     std::to_string(max) + ", not " + std::to_string(*v)});
      } else {
        *out = static_cast<T>(*v);
      }
    };
  }

  Handler millis(std::chrono::milliseconds* out, std::int64_t min, std::int64_t max) {
    return [this, out, min, max](const toml::node& node, const std::string& key) {
      std::int64_t ms = 0;
      integer(&ms, min, max)(node, key);
      if (ms != 0) *out = std::chrono::milliseconds(ms);
    };
  }

  // A number of either TOML kind (3 or 3.5), at least min.
  Handler number(double* out, double min, double max) {
    return [this, out, min, max](const toml::node& node, const std::string& key) {
      std::optional<double> v;
      if (auto f = node.value_exact<double>()) v = *f;
      if (auto i = node.value_exact<std::int64_t>()) v = static_cast<double>(*i);
      if (!v) {
        wrong_type(node, key, "a number");
      } else if (!(*v >= min && *v <= max)) {
        errors_->push_back({key, "must be between " + fmt_number(min) + " and " + fmt_number(max) +
                                     ", not " + fmt_number(*v)});
      } else {
        *out = *v;
      }
    };
  }

  Handler seconds(std::chrono::seconds* out, std::int64_t min, std::int64_t max) {
    return [this, out, min, max](const toml::node& node, const std::string& key) {
      std::int64_t s = -1;
      integer(&s, min, max)(node, key);
      if (s >= 0) *out = std::chrono::seconds(s);
    };
  }

  Handler string_array(std::vector<std::string>* out) {
    return [this, out](const toml::node& node, const std::string& key) {
      const toml::array* array = node.as_array();
      if (!array) {
        wrong_type(node, key, "an array of strings");
        return;
      }
      std::vector<std::string> values;
      for (std::size_t i = 0; i < array->size(); ++i) {
        auto v = (*array)[i].value_exact<std::string>();
        if (!v) {
          errors_->push_back({key + "[" + std::to_string(i) + "]", "must be a string"});
          return;
        }
        values.push_back(*v);
      }
      *out = std::move(values);
    };
  }

 private:
  ConfigErrors* errors_;
  std::string prefix_;
  std::map<std::string, Handler> handlers_;
  std::map<std::string, int>* lines_ = nullptr;
};

std::string fmt_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// An environment variable's name: what api_key_env holds, never the key itself.
bool env_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char ch : name) {
    bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string ConfigError::to_text(std::string_view source) const {
  std::string out(source.empty() ? "config" : source);
  if (line > 0) out += ":" + std::to_string(line);
  out += ": ";
  if (!key.empty()) {
    out += key;
    out += ": ";
  }
  out += message;
  return out;
}

ConfigErrors parse_config(std::string_view text, std::string_view base_dir, Config* config) {
  ConfigErrors errors;
  toml::table root;
  try {
    root = toml::parse(text);
  } catch (const toml::parse_error& e) {
    std::ostringstream where;
    where << "line " << e.source().begin.line << ", column " << e.source().begin.column << ": "
          << e.description();
    errors.push_back({"", where.str()});
    return errors;
  }

  Config c = *config;
  TableReader top(&errors, "");
  top.on("listen", top.string(&c.listen));
  top.on("rules", top.string_array(&c.rules));
  top.on("tokens", top.string(&c.tokens));
  top.on("workspace_root", top.string(&c.workspace_root));
  top.on("home", top.string(&c.home));
  top.on("default_outcome", top.string(&c.default_outcome));
  top.on("workers", top.integer(&c.workers, 0, 256));
  top.on("watch_rules", top.boolean(&c.watch_rules));
  top.on("watch_interval_ms", top.millis(&c.watch_interval, 100, 3600000));
  top.on("state_dir", top.string(&c.state_dir));
  top.on("audit_log", top.string(&c.audit_log));
  top.on("state_db", top.string(&c.state_db));

  TableReader limits(&errors, "limits.");
  Limits& l = c.limits;
  limits.on("max_frame_bytes", limits.integer(&l.max_frame_bytes, 64, 0xFFFFFF));
  limits.on("max_connections", limits.integer(&l.max_connections, 1, 1000000));
  limits.on("max_connections_per_principal",
            limits.integer(&l.max_connections_per_principal, 1, 1000000));
  limits.on("reserved_connections", limits.integer(&l.reserved_connections, 0, 1000000));
  limits.on("auth_timeout_ms", limits.millis(&l.auth_timeout, 1, 3600000));
  limits.on("idle_timeout_ms", limits.millis(&l.idle_timeout, 1, 86400000));
  limits.on("max_in_flight", limits.integer(&l.max_in_flight, 1, 100000));
  limits.on("max_queue", limits.integer(&l.max_queue, 1, 10000000));
  limits.on("max_queue_per_principal", limits.integer(&l.max_queue_per_principal, 1, 10000000));
  limits.on("run_limit", limits.integer(&l.run_limit, 1, 1000000000));
  limits.on("deadline_ms", limits.millis(&l.deadline, 1, 600000));
  // SPEC §2: feedback deeper than 10 is dropped and a perception gets at most 3 model
  // attempts; a deployment may lower either, never raise it.
  limits.on("depth", limits.integer(&l.depth, 0, 10));
  limits.on("retries", limits.integer(&l.retries, 1, 3));
  limits.on("max_json_depth", limits.integer(&l.max_json_depth, 2, 1000));
  limits.on("shutdown_timeout_ms", limits.millis(&l.shutdown_timeout, 1, 3600000));

  TableReader log(&errors, "log.");
  log.on("level", log.string(&c.log_level));
  log.on("json", log.boolean(&c.log_json));

  auto section = [&](TableReader* reader) {
    return [&errors, reader](const toml::node& node, const std::string& key) {
      if (const toml::table* table = node.as_table()) {
        reader->read(*table);
      } else {
        errors.push_back({key, std::string("must be a table, not ") + type_name(node)});
      }
    };
  };
  top.on("limits", section(&limits));
  top.on("log", section(&log));

  // ---- transports and pre-auth budgets ----
  TableReader unix_socket(&errors, "unix.");
  unix_socket.on("enabled", unix_socket.boolean(&c.unix_socket.enabled));
  unix_socket.on("path", unix_socket.string(&c.unix_socket.path));
  unix_socket.on("mode", unix_socket.integer(&c.unix_socket.mode, 0, 0777));
  unix_socket.on("allow_uids", [&](const toml::node& node, const std::string& key) {
    const toml::array* array = node.as_array();
    if (!array) {
      unix_socket.wrong_type(node, key, "an array of integers");
      return;
    }
    c.unix_socket.allow_uids.clear();
    for (std::size_t i = 0; i < array->size(); ++i) {
      auto v = (*array)[i].value_exact<std::int64_t>();
      if (!v || *v < 0 || *v > 0xFFFFFFFE) {
        errors.push_back({key + "[" + std::to_string(i) + "]", "must be a uid (an integer)"});
        return;
      }
      c.unix_socket.allow_uids.push_back(static_cast<unsigned>(*v));
    }
  });
  TableReader tls(&errors, "tls.");
  tls.on("cert", tls.string(&c.tls.cert));
  tls.on("key", tls.string(&c.tls.key));
  tls.on("allow_plaintext", tls.boolean(&c.tls.allow_plaintext));
  TableReader preauth(&errors, "preauth.");
  preauth.on("max_connections", preauth.integer(&c.preauth.max_connections, 1, 1000000));
  preauth.on("max_per_peer", preauth.integer(&c.preauth.max_per_peer, 1, 1000000));
  preauth.on("max_frame_bytes", preauth.integer(&c.preauth.max_frame_bytes, 256, 0xFFFFFF));
  top.on("unix", section(&unix_socket));
  top.on("tls", section(&tls));
  top.on("preauth", section(&preauth));
  // ---- end of transports ----

  TableReader metrics(&errors, "metrics.");
  metrics.on("listen", metrics.string(&c.metrics.listen));
  metrics.on("max_connections", metrics.integer(&c.metrics.max_connections, 1, 1024));
  metrics.on("timeout_ms", metrics.millis(&c.metrics.timeout, 1, 600000));
  top.on("metrics", section(&metrics));

  TableReader session(&errors, "session.");
  session.on("ttl_seconds", session.integer(&c.session.ttl_seconds, 0, 30LL * 86400));
  // Bounded so that a session's history stays a fraction of a decision's deadline: every entry
  // a rule may match is a fact of the decision (engine/history_filter.h).
  session.on("max_entries", session.integer(&c.session.max_entries, 1, kMaxSessionEntries));
  session.on("max_sessions", session.integer(&c.session.max_sessions, 1, 10000000));
  session.on("max_bytes", session.integer(&c.session.max_bytes, 65536, 1LL << 36));
  session.on("store", session.string(&c.session.store));
  top.on("session", section(&session));

  TableReader approvals(&errors, "approvals.");
  ApprovalsConfig& ap = c.approvals;
  approvals.on("store", approvals.string(&ap.store));
  approvals.on("path", approvals.string(&ap.path));
  approvals.on("conninfo", approvals.string(&ap.conninfo));
  approvals.on("conninfo_env", approvals.string(&ap.conninfo_env));
  approvals.on("expiry_seconds", approvals.integer(&ap.expiry_seconds, 1, 30LL * 86400));
  approvals.on("max_wait_seconds", approvals.integer(&ap.max_wait_seconds, 0, 86400));
  approvals.on("max_scope_minutes", approvals.integer(&ap.max_scope_minutes, 1, 30LL * 1440));
  approvals.on("max_pending_per_principal",
               approvals.integer(&ap.max_pending_per_principal, 1, 1000000));
  approvals.on("retain_days", approvals.integer(&ap.retain_days, 1, 36500));
  // [approvals.notify]: its errors name their line (the URL itself is never repeated: it is
  // a secret).
  std::map<std::string, int> lines;
  TableReader notify(&errors, "approvals.notify.");
  notify.with_lines(&lines);
  NotifyConfig& nc = ap.notify;
  notify.on("url", notify.string(&nc.url));
  notify.on("url_env", notify.string(&nc.url_env));
  notify.on("events", notify.string_array(&nc.events));
  notify.on("format", notify.string(&nc.format));
  notify.on("timeout_ms", notify.millis(&nc.timeout, 1, 600000));
  notify.on("max_attempts", notify.integer(&nc.max_attempts, 1, 100));
  notify.on("backoff_ms", notify.millis(&nc.backoff, 1, 3600000));
  notify.on("backoff_max_ms", notify.millis(&nc.backoff_max, 1, 86400000));
  notify.on("max_queue", notify.integer(&nc.max_queue, 1, 1000000));
  approvals.on("notify", [&](const toml::node& node, const std::string& key) {
    section (&notify)(node, key);
    // The table is there: it asks for notifications, so it must say where to send them.
    if (node.is_table() && nc.url.empty() && nc.url_env.empty()) {
      errors.push_back({key, "needs url (or url_env, the variable holding it)",
                        static_cast<int>(node.source().begin.line)});
    }
  });
  top.on("approvals", section(&approvals));

  TableReader audit(&errors, "audit.");
  AuditConfig& a = c.audit;
  audit.on("enabled", audit.boolean(&a.enabled));
  audit.on("durability", audit.string(&a.durability));
  audit.on("group_commit_ms", [&](const toml::node& node, const std::string& key) {
    std::int64_t ms = 0;
    audit.integer(&ms, 0, 1000)(node, key);
    a.group_commit = std::chrono::milliseconds(ms);
  });
  audit.on("rotate_bytes", audit.integer(&a.rotate_bytes, 0, 1LL << 50));
  audit.on("rotate_seconds", audit.integer(&a.rotate_seconds, 0, 366LL * 86400));
  audit.on("checkpoint_records", audit.integer(&a.checkpoint_records, 1, 100000000));
  audit.on("checkpoint_seconds", audit.integer(&a.checkpoint_seconds, 1, 86400));
  audit.on("signing_key", audit.string(&a.signing_key));
  audit.on("mask_secrets", audit.boolean(&a.mask_secrets));
  audit.on("mask_key", audit.string(&a.mask_key));
  audit.on("daemon_id", audit.string(&a.daemon_id));
  top.on("audit", section(&audit));

  // ---- reasoning and actuators (the pipeline behind submit) ----
  PipelineConfig& pc = c.pipeline;
  reasoning::ReasoningConfig& rc = pc.reasoning;
  TableReader reasoning(&errors, "reasoning.");
  reasoning.on("threads", reasoning.integer(&pc.threads, 1, 256));
  reasoning.on("max_queue", reasoning.integer(&pc.max_queue, 1, 100000));
  reasoning.on("cool_off_seconds", reasoning.seconds(&rc.cool_off, 0, 86400));
  reasoning.on("consensus", reasoning.integer(&rc.consensus, 0, 16));
  reasoning.on("budget_per_session_usd", reasoning.number(&rc.budget_per_session_usd, 0, 1e9));
  reasoning.on("budget_per_principal_usd", reasoning.number(&rc.budget_per_principal_usd, 0, 1e9));
  reasoning.on("budget_window_seconds", reasoning.seconds(&rc.budget_window, 1, 366LL * 86400));
  reasoning.on("budget_max_entries", reasoning.integer(&rc.budget_max_entries, 1, 10000000));
  reasoning.on("identity", reasoning.string(&rc.identity));
  // Each element of an array of tables, read by `fill` with its own reader.
  auto table_array = [&errors](auto fill) {
    return [&errors, fill](const toml::node& node, const std::string& key) {
      const toml::array* array = node.as_array();
      if (!array) {
        errors.push_back({key, std::string("must be an array of tables ([[") + key + "]]), not " +
                                   type_name(node)});
        return;
      }
      for (std::size_t i = 0; i < array->size(); ++i) {
        std::string at = key + "[" + std::to_string(i) + "]";
        if (const toml::table* t = (*array)[i].as_table()) {
          fill(*t, at);
        } else {
          errors.push_back({at, std::string("must be a table, not ") + type_name((*array)[i])});
        }
      }
    };
  };
  rc.providers.clear();
  reasoning.on(
      "providers", table_array([&](const toml::table& t, const std::string& at) {
        reasoning::ProviderConfig p;
        TableReader r(&errors, at + ".");
        r.on("name", r.string(&p.name));
        r.on("kind", r.string(&p.kind));
        r.on("base_url", r.string(&p.base_url));
        r.on("model", r.string(&p.model));
        r.on("api_key_env", r.string(&p.api_key_env));
        r.on("connect_timeout_ms", r.millis(&p.connect_timeout, 1, 600000));
        r.on("timeout_ms", r.millis(&p.timeout, 1, 3600000));
        r.on("max_retries_429", r.integer(&p.max_retries_429, 0, 100));
        r.on("retry_after_max_ms", r.millis(&p.retry_after_max, 1, 3600000));
        r.on("max_response_bytes", r.integer(&p.max_response_bytes, 1024, 1LL << 30));
        r.on("price_input_per_mtok", r.number(&p.price_input_per_mtok, 0, 1e6));
        r.on("price_output_per_mtok", r.number(&p.price_output_per_mtok, 0, 1e6));
        r.on("native_tools", r.boolean(&p.native_tools));
        r.on("script", r.string(&p.script_path));
        r.on("max_tokens", r.integer(&p.max_tokens, 1, 10000000));
        // A key in the config file would sit in a file many people read and copy: refused,
        // without repeating it.
        for (const char* name : {"api_key", "key", "apikey", "token", "authorization"}) {
          r.on(name, [&errors](const toml::node&, const std::string& key) {
            errors.push_back({key,
                              "an API key is never read from the config file: put it in an "
                              "environment variable and name that variable with api_key_env"});
          });
        }
        r.read(t);
        p.script_path = resolve(base_dir, p.script_path);
        rc.providers.push_back(std::move(p));
      }));
  rc.selector.clear();
  reasoning.on("selector", table_array([&](const toml::table& t, const std::string& at) {
                 reasoning::SelectorRule rule;
                 TableReader r(&errors, at + ".");
                 r.on("sensor", r.string(&rule.sensor));
                 r.on("text_regex", r.string(&rule.text_regex));
                 r.on("min_chars", r.integer(&rule.min_chars, 0, 100000000));
                 r.on("provider", r.string(&rule.provider));
                 r.on("model", r.string(&rule.model));
                 r.read(t);
                 rc.selector.push_back(std::move(rule));
               }));
  top.on("reasoning", section(&reasoning));

  actuators::ActuatorsConfig& ac = pc.actuators;
  TableReader shell(&errors, "actuators.shell.");
  shell.on("workspace", shell.string(&ac.shell.workspace));
  shell.on("path", shell.string_array(&ac.shell.path));
  shell.on("timeout_ms", shell.millis(&ac.shell.timeout, 1, 86400000));
  shell.on("max_output_bytes", shell.integer(&ac.shell.max_output_bytes, 1, 1LL << 30));
  shell.on("cpu_seconds", shell.integer(&ac.shell.cpu_seconds, 1, 86400));
  shell.on("memory_bytes", shell.integer(&ac.shell.memory_bytes, 1LL << 20, 1LL << 46));
  shell.on("max_processes", shell.integer(&ac.shell.max_processes, 1, 100000));
  shell.on("max_file_bytes", shell.integer(&ac.shell.max_file_bytes, 1, 1LL << 46));
  shell.on("shell", shell.string(&ac.shell.shell));
  // Confinement: "on" (the default) or "off", spelled out so that turning it off is a
  // deliberate word in the file, not a stray false.
  shell.on("confine", [&errors, &ac](const toml::node& node, const std::string& key) {
    auto v = node.value_exact<std::string>();
    if (v && (*v == "on" || *v == "off")) {
      ac.shell.confine = *v == "on";
    } else {
      errors.push_back({key, "must be \"on\" or \"off\""});
    }
  });
  shell.on("hide", shell.string_array(&ac.shell.hide));
  shell.on("writable", shell.string_array(&ac.shell.writable));
  shell.on("read", shell.string_array(&ac.shell.read));
  shell.on("cache_dir", shell.string(&ac.shell.cache_dir));
  TableReader file(&errors, "actuators.file.");
  file.on("root", file.string(&ac.file.root));
  file.on("max_read_bytes", file.integer(&ac.file.max_read_bytes, 1, 1LL << 32));
  file.on("max_write_bytes", file.integer(&ac.file.max_write_bytes, 1, 1LL << 32));
  TableReader http(&errors, "actuators.http.");
  http.on("connect_timeout_ms", http.millis(&ac.http.connect_timeout, 1, 600000));
  http.on("timeout_ms", http.millis(&ac.http.timeout, 1, 3600000));
  http.on("max_response_bytes", http.integer(&ac.http.max_response_bytes, 1, 1LL << 32));
  http.on("resolve", http.string_array(&ac.http.resolve));
  TableReader actuators(&errors, "actuators.");
  actuators.on("default_target", actuators.string(&ac.default_target));
  actuators.on("silent", actuators.string_array(&ac.silent));
  actuators.on("shell", section(&shell));
  actuators.on("file", section(&file));
  actuators.on("http", section(&http));
  top.on("actuators", section(&actuators));

  top.read(root);

  for (auto& path : c.rules) path = resolve(base_dir, path);
  c.tokens = resolve(base_dir, c.tokens);
  c.state_dir = resolve(base_dir, c.state_dir);
  c.audit_log = resolve(base_dir, c.audit_log);
  c.state_db = resolve(base_dir, c.state_db);
  c.approvals.path = resolve(base_dir, c.approvals.path);
  c.audit.signing_key = resolve(base_dir, c.audit.signing_key);
  c.audit.mask_key = resolve(base_dir, c.audit.mask_key);
  c.unix_socket.path = resolve(base_dir, c.unix_socket.path);
  c.tls.cert = resolve(base_dir, c.tls.cert);
  c.tls.key = resolve(base_dir, c.tls.key);
  c.pipeline.actuators.shell.workspace = resolve(base_dir, c.pipeline.actuators.shell.workspace);
  c.pipeline.actuators.file.root = resolve(base_dir, c.pipeline.actuators.file.root);

  if (errors.empty()) {
    errors = validate_config(c);
    for (ConfigError& e : errors) {
      auto at = lines.find(e.key);
      if (e.line == 0 && at != lines.end()) e.line = at->second;
    }
  }
  if (errors.empty()) *config = std::move(c);
  return errors;
}

ConfigErrors load_config_file(const std::string& path, Config* config) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {{"", "cannot read the config file"}};
  std::ostringstream text;
  text << in.rdbuf();
  std::string base = fs::path(path).parent_path().string();
  if (base.empty()) base = ".";
  ConfigErrors errors = parse_config(text.str(), base, config);
  if (errors.empty()) config->source = path;
  return errors;
}

namespace {

void validate_pipeline(const PipelineConfig& pc, ConfigErrors* errors) {
  static const char* kKinds[] = {"openai", "openai-responses", "ollama", "anthropic", "script"};
  const auto& providers = pc.reasoning.providers;
  for (std::size_t i = 0; i < providers.size(); ++i) {
    const reasoning::ProviderConfig& p = providers[i];
    const std::string at = "reasoning.providers[" + std::to_string(i) + "].";
    if (p.name.empty())
      errors->push_back(
          {at + "name", "must be given (names the provider in errors, events and the audit log)"});
    for (std::size_t j = 0; j < i; ++j) {
      if (!p.name.empty() && providers[j].name == p.name) {
        errors->push_back({at + "name", "'" + p.name + "' is the name of providers[" +
                                            std::to_string(j) + "] too: names must be unique"});
      }
    }
    bool kind_ok = false;
    for (const char* k : kKinds) kind_ok = kind_ok || p.kind == k;
    if (!kind_ok) {
      errors->push_back({at + "kind",
                         "must be openai, openai-responses, ollama, anthropic or "
                         "script, not '" +
                             p.kind + "'"});
    }
    if (p.kind == "script") {
      if (p.script_path.empty())
        errors->push_back({at + "script", "must name the JSON-lines file of a script provider"});
    } else if (kind_ok) {
      if (p.base_url.rfind("http://", 0) != 0 && p.base_url.rfind("https://", 0) != 0) {
        errors->push_back({at + "base_url", "must be an http:// or https:// URL"});
      }
    }
    // Values are not repeated in these errors: they may hold the key.
    if (audit::holds_secret(p.base_url)) {
      errors->push_back({at + "base_url",
                         "holds what looks like a secret: keep API keys in "
                         "the environment and name the variable with api_key_env"});
    }
    if (!p.api_key_env.empty() &&
        (!env_name(p.api_key_env) || audit::holds_secret(p.api_key_env))) {
      errors->push_back({at + "api_key_env",
                         "must be the name of an environment variable "
                         "(letters, digits, _), never the key itself"});
    }
  }
  for (std::size_t i = 0; i < pc.reasoning.selector.size(); ++i) {
    const reasoning::SelectorRule& rule = pc.reasoning.selector[i];
    const std::string at = "reasoning.selector[" + std::to_string(i) + "].";
    bool known = false;
    for (const auto& p : providers) known = known || p.name == rule.provider;
    if (!known) {
      errors->push_back({at + "provider", "must name a provider of [[reasoning.providers]], not '" +
                                              rule.provider + "'"});
    }
    if (!rule.sensor.empty() && rule.sensor != "user-input" && rule.sensor != "chat-message") {
      errors->push_back({at + "sensor",
                         "must be user-input or chat-message (only they reach "
                         "the model), not '" +
                             rule.sensor + "'"});
    }
    if (!rule.text_regex.empty()) {
      re2::RE2::Options options;
      options.set_log_errors(false);
      re2::RE2 re(rule.text_regex, options);
      if (!re.ok())
        errors->push_back({at + "text_regex", "is not a valid RE2 pattern: " + re.error()});
    }
  }
  if (pc.reasoning.consensus == 1) {
    errors->push_back({"reasoning.consensus", "must be 0 (off) or at least 2"});
  } else if (pc.reasoning.consensus > 1 &&
             static_cast<std::size_t>(pc.reasoning.consensus) > providers.size()) {
    errors->push_back({"reasoning.consensus", "asks " + std::to_string(pc.reasoning.consensus) +
                                                  " providers to agree, but only " +
                                                  std::to_string(providers.size()) +
                                                  " are configured"});
  }
  if (errors->empty()) {
    // The reasoning layer's own checks (the same the daemon's cascade is built with).
    if (std::string problem = reasoning::check_config(pc.reasoning); !problem.empty()) {
      errors->push_back({"reasoning", problem});
    }
  }
  const actuators::ActuatorsConfig& ac = pc.actuators;
  if (!ac.shell.workspace.empty() && ac.shell.workspace[0] != '/') {
    errors->push_back({"actuators.shell.workspace", "must be an absolute path"});
  }
  if (!ac.file.root.empty() && ac.file.root[0] != '/') {
    errors->push_back({"actuators.file.root", "must be an absolute path"});
  }
  if (ac.shell.shell.empty() || ac.shell.shell[0] != '/') {
    errors->push_back({"actuators.shell.shell", "must be an absolute path"});
  }
  for (std::size_t i = 0; i < ac.shell.path.size(); ++i) {
    if (ac.shell.path[i].empty() || ac.shell.path[i][0] != '/') {
      errors->push_back(
          {"actuators.shell.path[" + std::to_string(i) + "]", "must be an absolute directory"});
    }
  }
  for (const auto& [key, list] :
       {std::pair<const char*, const std::vector<std::string>*>{"hide", &ac.shell.hide},
        {"writable", &ac.shell.writable},
        {"read", &ac.shell.read}}) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i].empty() || (*list)[i][0] != '/') {
        errors->push_back({"actuators.shell." + std::string(key) + "[" + std::to_string(i) + "]",
                           "must be an absolute path"});
      }
    }
  }
  if (!ac.shell.cache_dir.empty() && ac.shell.cache_dir[0] != '/') {
    errors->push_back({"actuators.shell.cache_dir", "must be an absolute path"});
  }
  if (ac.default_target.empty()) {
    errors->push_back({"actuators.default_target", "must name an actuator"});
  }
}

void validate_notify(const NotifyConfig& n, ConfigErrors* errors) {
  if (!n.url.empty() && !n.url_env.empty()) {
    errors->push_back({"approvals.notify.url_env",
                       "give url or url_env, not both (url_env: the variable holding the URL)"});
  }
  if (!n.url.empty()) {
    if (std::string problem = notify_url_problem(n.url); !problem.empty()) {
      errors->push_back({"approvals.notify.url", problem});
    }
  }
  if (!n.url_env.empty() && !env_name(n.url_env)) {
    errors->push_back({"approvals.notify.url_env",
                       "must be the name of an environment variable (letters, digits, _), "
                       "never the URL itself"});
  }
  std::string names;
  for (std::string_view e : kNotifyEvents) names += (names.empty() ? "" : ", ") + std::string(e);
  if (n.events.empty()) {
    errors->push_back({"approvals.notify.events", "must name at least one event (" + names +
                                                      "); remove [approvals.notify] to send none"});
  }
  for (std::size_t i = 0; i < n.events.size(); ++i) {
    if (!is_notify_event(n.events[i])) {
      errors->push_back(
          {"approvals.notify.events", "'" + n.events[i] + "' is not an event: use " + names});
    }
  }
  if (n.format != "slack" && n.format != "json") {
    errors->push_back({"approvals.notify.format",
                       "must be \"slack\" ({\"text\":…}, for Slack, Mattermost, Rocket.Chat and "
                       "Google Chat incoming webhooks) or \"json\", not '" +
                           n.format + "'"});
  }
  if (n.backoff_max < n.backoff) {
    errors->push_back({"approvals.notify.backoff_max_ms",
                       "must be at least backoff_ms (" + std::to_string(n.backoff.count()) + ")"});
  }
}

}  // namespace

actuators::ActuatorsConfig effective_actuators(const Config& config) {
  actuators::ActuatorsConfig a = config.pipeline.actuators;
  if (a.shell.workspace.empty()) a.shell.workspace = config.workspace_root;
  if (a.file.root.empty()) a.file.root = config.workspace_root;
  // The confined shell never sees Warden's own files, nor its socket, wherever they are.
  for (const OwnFile& f : own_files(config)) a.shell.own_files.push_back(f.path);
  if (config.unix_socket.enabled && !config.unix_socket.path.empty())
    a.shell.own_files.push_back(config.unix_socket.path);
  return a;
}

ConfigErrors validate_config(const Config& c) {
  ConfigErrors errors;
  std::string host;
  std::uint16_t port = 0;
  if (!split_host_port(c.listen, &host, &port)) {
    errors.push_back({"listen", "must be HOST:PORT (e.g. 127.0.0.1:9105 or [::1]:9105), not '" +
                                    c.listen + "'"});
  }
  if (!parse_outcome(c.default_outcome)) {
    errors.push_back({"default_outcome", "must be approve, reject or approval-required, not '" +
                                             c.default_outcome + "'"});
  }
  static const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "off"};
  bool level_ok = false;
  for (const char* level : kLevels) level_ok = level_ok || c.log_level == level;
  if (!level_ok) {
    errors.push_back(
        {"log.level", "must be trace, debug, info, warn, error or off, not '" + c.log_level + "'"});
  }
  if (c.workspace_root.empty() || c.workspace_root[0] != '/') {
    errors.push_back({"workspace_root", "must be an absolute path"});
  }
  if (c.home.empty() || c.home[0] != '/') {
    errors.push_back({"home", "must be an absolute path"});
  }
  if (c.approvals.store != "sqlite" && c.approvals.store != "postgres") {
    errors.push_back(
        {"approvals.store", "must be sqlite or postgres, not '" + c.approvals.store + "'"});
  }
  if (c.approvals.store == "postgres" && c.approvals.conninfo.empty() &&
      c.approvals.conninfo_env.empty()) {
    errors.push_back({"approvals.conninfo", "store = postgres needs conninfo or conninfo_env"});
  }
  validate_notify(c.approvals.notify, &errors);
  if (c.session.store != "auto" && c.session.store != "memory" && c.session.store != "postgres") {
    errors.push_back(
        {"session.store", "must be auto, memory or postgres, not '" + c.session.store + "'"});
  }
  if (c.session.store == "postgres" && c.approvals.store != "postgres") {
    errors.push_back({"session.store",
                      "postgres keeps session memory in the approvals store's database: it needs "
                      "approvals.store = \"postgres\""});
  }
  for (std::size_t i = 0; i < c.rules.size(); ++i) {
    if (c.rules[i].empty()) {
      errors.push_back({"rules[" + std::to_string(i) + "]", "must not be empty"});
    }
  }
  // ---- transports ----
  if ((c.unix_socket.mode & ~0660u) != 0 || (c.unix_socket.mode & 0600u) != 0600u) {
    errors.push_back({"unix.mode", "must be 0o600 or 0o660 (owner read-write, never other users)"});
  }
  if (c.tls.cert.empty() != c.tls.key.empty()) {
    errors.push_back({c.tls.cert.empty() ? "tls.cert" : "tls.key",
                      "tls.cert and tls.key must be given together"});
  }
  // ---- end of transports ----
  if (c.metrics.enabled() && !split_host_port(c.metrics.listen, &host, &port)) {
    errors.push_back({"metrics.listen",
                      "must be HOST:PORT (e.g. 127.0.0.1:9106), not '" + c.metrics.listen + "'"});
  }
  validate_pipeline(c.pipeline, &errors);
  const AuditConfig& a = c.audit;
  if (a.durability != "fsync" && a.durability != "group" && a.durability != "write") {
    errors.push_back(
        {"audit.durability", "must be fsync, group or write, not '" + a.durability + "'"});
  }
  if (!a.daemon_id.empty() && !valid_daemon_id(a.daemon_id)) {
    errors.push_back(
        {"audit.daemon_id",
         "must be 1 to 64 characters of A-Z a-z 0-9 . _ : -, not '" + a.daemon_id + "'"});
  }
  if (a.rotate_bytes != 0 && a.rotate_bytes < 4096) {
    errors.push_back({"audit.rotate_bytes",
                      "must be 0 (never) or at least 4096, not " + std::to_string(a.rotate_bytes)});
  }
  return errors;
}

ConfigErrors resolve_state_paths(Config* config) {
  if (config->state_dir.empty()) {
    config->state_dir = protocol::default_state_dir();
    if (config->state_dir.empty()) {
      return {{"state_dir",
               "not set, and neither $XDG_STATE_HOME nor $HOME is an absolute path: give "
               "state_dir (--state-dir)"}};
    }
  }
  if (config->audit_log.empty()) {
    config->audit_log = (fs::path(config->state_dir) / "audit.jsonl").string();
  }
  if (config->state_db.empty()) {
    config->state_db = (fs::path(config->state_dir) / "state.db").string();
  }
  AuditConfig& a = config->audit;
  if (a.signing_key.empty()) {
    a.signing_key = (fs::path(config->state_dir) / "audit-signing.pem").string();
    a.signing_key_default = true;
  }
  if (a.mask_key.empty()) {
    a.mask_key = (fs::path(config->state_dir) / "audit-mask.key").string();
    a.mask_key_default = true;
  }
  if (a.daemon_id.empty()) a.daemon_id = default_daemon_id();
  return {};
}

bool valid_daemon_id(std::string_view id) { return audit::valid_daemon_id(id); }

std::string default_daemon_id() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = 0;
  std::string id;
  for (const char* p = host; *p && id.size() < 64; ++p) {
    char ch = *p;
    bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == ':' || ch == '-';
    id += ok ? ch : '-';
  }
  return id.empty() ? "warden" : id;
}

std::vector<std::string> config_warnings(const Config& config) {
  std::vector<std::string> out;
  if (config.default_outcome == "approve") {
    out.push_back(
        "default_outcome is approve: every proposal no rule decides is APPROVED (fail open); "
        "use approval-required or reject");
  }
  if (!config.audit.enabled) {
    out.push_back(
        "audit.enabled is false: decisions are not recorded in an audit log (no trace once "
        "answered)");
  }
  if (!config.pipeline.actuators.shell.confine) out.push_back(kConfineOffWarning);
  if (config.approvals.store == "postgres" && effective_session_store(config) == "memory") {
    out.push_back(
        "session.store is memory while approvals are shared in PostgreSQL: each daemon of the "
        "fleet remembers only its own decisions, so history rules (\"no network after a "
        "credential read\") do not hold across daemons or restarts");
  }
  return out;
}

std::string effective_session_store(const Config& config) {
  if (config.session.ttl_seconds <= 0) return "";
  if (config.session.store == "auto") {
    return config.approvals.store == "postgres" ? "postgres" : "memory";
  }
  return config.session.store;
}

}  // namespace warden::server
