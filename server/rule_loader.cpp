#include "server/rule_loader.h"

#include <sys/stat.h>

#include "engine/rule_files.h"

namespace warden::server {

namespace {

void append_stat(std::string* out, const std::string& path) {
  struct stat st {};
  *out += path;
  if (::stat(path.c_str(), &st) == 0) {
    *out += ' ';
    *out += std::to_string(st.st_size);
    *out += ' ';
    *out += std::to_string(st.st_mtim.tv_sec);
    *out += '.';
    *out += std::to_string(st.st_mtim.tv_nsec);
    *out += ' ';
    *out += std::to_string(st.st_ino);
  } else {
    *out += " missing";
  }
  *out += '\n';
}

}  // namespace

std::vector<std::string> effective_rule_paths(const std::vector<std::string>& paths) {
  if (!paths.empty()) return paths;
  return {shipped_rules_dir()};
}

Policy::Loaded load_rules(const std::vector<std::string>& paths) {
  Diagnostics read_diagnostics;
  RuleSources sources = read_rule_files(effective_rule_paths(paths), &read_diagnostics);
  Policy::Loaded loaded;
  if (has_errors(read_diagnostics)) {
    loaded.diagnostics = std::move(read_diagnostics);
    return loaded;
  }
  loaded = Policy::compile(sources);
  read_diagnostics.insert(read_diagnostics.end(), loaded.diagnostics.begin(),
                          loaded.diagnostics.end());
  loaded.diagnostics = std::move(read_diagnostics);
  return loaded;
}

std::string files_fingerprint(const std::vector<std::string>& paths,
                              const std::vector<std::string>& extra_files) {
  std::string out;
  auto rule_paths = effective_rule_paths(paths);
  for (const std::string& root : rule_paths) append_stat(&out, root);
  for (const std::string& file : list_files(rule_paths, {".clp"})) append_stat(&out, file);
  for (const std::string& file : extra_files) append_stat(&out, file);
  return out;
}

}  // namespace warden::server
