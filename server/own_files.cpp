#include "server/own_files.h"

#include <filesystem>

#include "engine/file_modes.h"
#include "engine/rule_files.h"

namespace warden::server {

namespace {

namespace fs = std::filesystem;

// The forms a path can be reached by: as written (absolute, normalized) and resolved.
std::vector<fs::path> forms(const std::string& path) {
  std::error_code ec;
  fs::path written = fs::absolute(path, ec).lexically_normal();
  if (ec) written = fs::path(path).lexically_normal();
  std::vector<fs::path> out{written};
  fs::path resolved = fs::weakly_canonical(written, ec);
  if (!ec && resolved != written) out.push_back(resolved.lexically_normal());
  for (fs::path& p : out) {
    // "/a/b/" and "/a/b" are the same directory.
    if (p.has_parent_path() && p.filename().empty()) p = p.parent_path();
  }
  return out;
}

// True when `inner` is `outer` or lies below it, component by component.
bool within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

}  // namespace

std::string own_binary_path() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.string();
}

std::vector<OwnFile> own_files(const Config& config) {
  std::vector<OwnFile> out;
  for (const std::string& path : effective_rule_paths(config.rules)) {
    std::error_code ec;
    bool dir = fs::is_directory(path, ec);
    out.push_back({dir ? "rules directory" : "rules file", path, dir});
  }
  if (!config.tokens.empty()) out.push_back({"token file", config.tokens, false});
  if (!config.source.empty()) out.push_back({"config file", config.source, false});
  if (!config.state_dir.empty()) out.push_back({"state directory", config.state_dir, false});
  if (config.audit.enabled) {
    // Rotated files lie beside the live one, so a workspace holding one holds the other.
    if (!config.audit_log.empty()) out.push_back({"audit log", config.audit_log, false});
    if (!config.audit.signing_key.empty()) {
      out.push_back({"audit signing key", config.audit.signing_key, false});
    }
    if (config.audit.mask_secrets && !config.audit.mask_key.empty()) {
      out.push_back({"audit mask key", config.audit.mask_key, false});
    }
  }
  if (!config.state_db.empty()) out.push_back({"state database", config.state_db, false});
  // The approvals store: an agent that could write it could approve its own actions.
  if (!config.approvals.path.empty()) {
    out.push_back({"approvals database", config.approvals.path, false});
  }
  // An agent that reads the key can impersonate the daemon; one that rewrites the
  // certificate can make clients trust another server.
  if (!config.tls.key.empty()) out.push_back({"TLS key", config.tls.key, false});
  if (!config.tls.cert.empty()) out.push_back({"TLS certificate", config.tls.cert, false});
  // A model's script is what the model "says": an agent must not write its own answers.
  for (const auto& provider : config.pipeline.reasoning.providers) {
    if (!provider.script_path.empty()) {
      out.push_back({"script of provider " + provider.name, provider.script_path, false});
    }
  }
  if (std::string exe = own_binary_path(); !exe.empty()) {
    out.push_back({"warden binary", exe, false});
  }
  return out;
}

std::vector<std::string> own_paths(const Config& config) {
  std::vector<std::string> out;
  auto add = [&](const std::string& path) {
    if (path.empty()) return;
    std::error_code ec;
    std::string absolute = fs::absolute(path, ec).lexically_normal().string();
    if (ec) absolute = path;
    if (absolute.size() > 1 && absolute.back() == '/') absolute.pop_back();
    out.push_back(absolute);
  };
  for (const OwnFile& file : own_files(config)) add(file.path);
  if (config.audit.enabled && !config.audit_log.empty()) {
    // Rotated logs and the signing key's public half lie beside the live log.
    add(fs::path(config.audit_log).parent_path().string());
  }
  if (config.audit.enabled && !config.audit.signing_key.empty()) {
    add(config.audit.signing_key + ".pub");
  }
  if (config.unix_socket.enabled) {
    add(config.unix_socket.path.empty() && !config.state_dir.empty()
            ? (fs::path(config.state_dir) / "warden.sock").string()
            : config.unix_socket.path);
  }
  return out;
}

Diagnostics own_state_problems(const Config& config, bool audit_keys) {
  Diagnostics out;
  auto check = [&](const std::string& what, const std::string& path, bool private_file) {
    if (path.empty()) return;
    FileModePolicy policy;
    policy.private_file = private_file;
    // A path the daemon will create is judged by the directory it will be created in: the
    // nearest one that exists (whoever may write there may plant or swap it first).
    std::string checked = path;
    std::error_code ec;
    while (!fs::exists(fs::symlink_status(checked, ec))) {
      fs::path parent = fs::path(checked).parent_path();
      if (parent.empty() || parent == fs::path(checked)) break;
      checked = parent.string();
      policy.private_file = false;
    }
    for (const FileModeProblem& p : check_file_modes(checked, policy)) {
      Diagnostic d;
      d.code = code::kFileMode;
      d.file = p.path;
      d.message = p.path.rfind(path, 0) == 0
                      ? what + ": " + p.message
                      : "a directory above the " + what + " " + path + ": " + p.message;
      out.push_back(std::move(d));
    }
  };
  check("state directory", config.state_dir, false);
  if (config.approvals.store != "postgres") {
    // SQLite writes beside the database: whoever can change these can change the grants.
    const std::string db = config.approvals.path.empty() ? config.state_db : config.approvals.path;
    if (!db.empty()) {
      // SQLite creates its journal files beside the database: its directory as well, even
      // before the database exists.
      const std::string dir = fs::path(db).parent_path().string();
      if (!dir.empty()) check("approvals database directory", dir, false);
      check("approvals database", db, false);
      for (const char* suffix : {"-wal", "-shm", "-journal"}) {
        check("approvals database file", db + suffix, false);
      }
    }
  }
  if (config.audit.enabled && !config.audit_log.empty()) {
    const std::string dir = fs::path(config.audit_log).parent_path().string();
    if (!dir.empty()) check("audit directory", dir, false);
    check("audit log", config.audit_log, false);
    if (audit_keys) {
      check("audit signing key", config.audit.signing_key, true);
      if (config.audit.mask_secrets) check("audit mask key", config.audit.mask_key, true);
    }
  }
  check("TLS key", config.tls.key, true);
  check("TLS certificate", config.tls.cert, false);
  return out;
}

std::vector<std::string> workspace_conflicts(const std::string& workspace,
                                             const std::vector<OwnFile>& files) {
  std::vector<std::string> out;
  const auto workspace_forms = forms(workspace);
  for (const OwnFile& file : files) {
    const char* relation = nullptr;
    for (const fs::path& w : workspace_forms) {
      for (const fs::path& f : forms(file.path)) {
        if (relation) break;
        if (f == w) {
          relation = "is";
        } else if (within(f, w)) {
          relation = "contains";
        } else if (file.tree && within(w, f)) {
          relation = "lies inside";
        }
      }
    }
    if (relation) {
      out.push_back("the workspace " + workspace + " " + relation + " the " + file.what + " " +
                    file.path);
    }
  }
  return out;
}

}  // namespace warden::server
