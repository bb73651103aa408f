#include "server/audit_setup.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "audit/signing.h"
#include "engine/file_modes.h"
#include "server/json_text.h"

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

std::int64_t audit_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string audit_start_fields(const Config& config, const AuditStart& start,
                               const std::string& key_id) {
  const AuditConfig& a = config.audit;
  std::string out = "\"version\":";
  append_json_string(out, start.version);
  out += ",\"pid\":" + std::to_string(::getpid());
  out += ",\"rules_digest\":";
  append_json_string(out, start.rules_digest);
  out += ",\"workspace_root\":";
  append_json_string(out, config.workspace_root);
  out += ",\"home\":";
  append_json_string(out, config.home);
  out += ",\"default_outcome\":";
  append_json_string(out, config.default_outcome);
  out += ",\"key_id\":";
  append_json_string(out, key_id);
  out += ",\"every_records\":" + std::to_string(a.checkpoint_records);
  out += ",\"every_seconds\":" + std::to_string(a.checkpoint_seconds);
  return out;
}

std::string audit_reload_fields(const std::string& rules_digest,
                                const std::string& previous_digest, const std::string& by) {
  std::string out = "\"rules_digest\":";
  append_json_string(out, rules_digest);
  out += ",\"previous_digest\":";
  append_json_string(out, previous_digest);
  out += ",\"by\":";
  append_json_string(out, by);
  return out;
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
