#include "server/audit_setup.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "audit/record.h"
#include "audit/signing.h"
#include "engine/file_modes.h"

namespace warden::server {

namespace {

namespace fs = std::filesystem;

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec)) && !ec;
}

// Like the token file: owned by root or us, neither readable nor writable by others.
std::string check_private(const std::string& what, const std::string& path) {
  FileModePolicy policy;
  policy.private_file = true;
  std::string out;
  for (const FileModeProblem& p : check_file_modes(path, policy)) {
    out += (out.empty() ? "" : "; ") + p.to_text();
  }
  return out.empty() ? out : what + ": " + out;
}

audit::Durability durability(const std::string& name) {
  if (name == "fsync") return audit::Durability::Fsync;
  if (name == "write") return audit::Durability::Write;
  return audit::Durability::Group;
}

}  // namespace

void log_audit_failure(ServerContext& ctx, std::string_view kind, const std::string& error) {
  ctx.audit_failures.log(ctx.log, spdlog::level::err, "audit write failures",
                         fmt::format("audit log: a {} record cannot be written ({}); decisions "
                                     "fail closed with E_AUDIT until it can",
                                     kind, error));
}

std::int64_t audit_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string audit_start_fields(const Config& config, const AuditStart& start,
                               const std::string& key_id) {
  audit::StartInfo info;
  info.version = start.version;
  info.pid = ::getpid();
  info.rules_digest = start.rules_digest;
  info.workspace_root = config.workspace_root;
  info.home = config.home;
  info.default_outcome = config.default_outcome;
  info.key_id = key_id;
  info.every_records = config.audit.checkpoint_records;
  info.every_seconds = static_cast<std::uint64_t>(config.audit.checkpoint_seconds);
  // The session memory as the daemon keeps it (ttl 0: off), so replay rebuilds each
  // session's history with the same limits.
  info.session.ttl_seconds =
      static_cast<std::uint64_t>(std::max<std::int64_t>(config.session.ttl_seconds, 0));
  info.session.max_entries = config.session.max_entries;
  info.session.max_sessions = config.session.max_sessions;
  info.session.max_bytes = config.session.max_bytes;
  return audit::start_fields(info);
}

std::string audit_reload_fields(const std::string& rules_digest, const std::string& previous_digest,
                                const std::string& by) {
  return audit::reload_fields(rules_digest, previous_digest, by);
}

std::string open_audit_log(const Config& config, const AuditStart& start, AuditLog* out,
                           std::vector<std::string>* notes) {
  const AuditConfig& a = config.audit;
  std::string error;

  // The signing key: made on first start at the default path; a configured one must exist
  // (a typo must not silently start a new, unrelated key).
  if (!exists(a.signing_key)) {
    if (!a.signing_key_default) {
      return "audit.signing_key: " + a.signing_key +
             " does not exist (make one with `warden audit keygen --out " + a.signing_key + "`)";
    }
    if (!audit::generate_key(a.signing_key, a.signing_key + ".pub", &error)) {
      return "audit.signing_key: cannot create " + a.signing_key + ": " + error;
    }
    notes->push_back("audit: created the signing key " + a.signing_key + " and its public key " +
                     a.signing_key + ".pub (verifiers need only the .pub)");
  }
  if (error = check_private("audit.signing_key", a.signing_key); !error.empty()) return error;
  std::shared_ptr<const audit::SigningKey> key = audit::SigningKey::load(a.signing_key, &error);
  if (!key) return "audit.signing_key: " + a.signing_key + ": " + error;
  out->key_id = key->key_id();

  if (a.mask_secrets) {
    if (!exists(a.mask_key) && !a.mask_key_default) {
      return "audit.mask_key: " + a.mask_key + " does not exist";
    }
    bool created = !exists(a.mask_key);
    out->masker = audit::Masker::load_or_create(a.mask_key, &error);
    if (!out->masker) return "audit.mask_key: " + a.mask_key + ": " + error;
    if (created) notes->push_back("audit: created the mask key " + a.mask_key);
    if (error = check_private("audit.mask_key", a.mask_key); !error.empty()) return error;
  }

  // The log's directory (the state directory by default, made 0700 by the daemon).
  fs::path dir = fs::path(config.audit_log).parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
      fs::create_directories(dir, ec);
      if (ec) return "audit_log: cannot create " + dir.string() + ": " + ec.message();
      fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    }
  }

  audit::WriterOptions options;
  options.path = config.audit_log;
  options.daemon_id = a.daemon_id;
  options.durability = durability(a.durability);
  options.group_commit = a.group_commit;
  options.rotate_bytes = a.rotate_bytes;
  options.rotate_age = std::chrono::seconds(a.rotate_seconds);
  options.checkpoint_records = a.checkpoint_records;
  options.checkpoint_age = std::chrono::seconds(a.checkpoint_seconds);
  options.key = key;
  options.start_fields = audit_start_fields(config, start, out->key_id);
  out->writer = audit::Writer::open(std::move(options), &error);
  if (!out->writer) return "audit_log: " + config.audit_log + ": " + error;
  return {};
}

}  // namespace warden::server
