#include "server/rule_loader.h"

#include <sys/stat.h>

namespace warden::server {

namespace {

void append_stat(std::string* out, const std::string& path) {
  struct stat st {};
  *out += path;
  if (::stat(path.c_str(), &st) == 0) {
    for (long long v :
         {static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec),
          static_cast<long long>(st.st_mtim.tv_nsec), static_cast<long long>(st.st_ctim.tv_sec),
          static_cast<long long>(st.st_ctim.tv_nsec), static_cast<long long>(st.st_ino),
          static_cast<long long>(st.st_mode), static_cast<long long>(st.st_uid)}) {
      *out += ' ';
      *out += std::to_string(v);
    }
  } else {
    *out += " missing";
  }
  *out += '\n';
}

}  // namespace

LoadedPolicy load_rules(const std::vector<std::string>& paths) {
  RuleLoadOptions options;
  options.check_modes = true;
  return load_policy(paths, options);
}

std::string files_fingerprint(const std::vector<std::string>& paths,
                              const std::vector<std::string>& extra_files) {
  std::string out;
  auto rule_paths = effective_rule_paths(paths);
  for (const std::string& root : rule_paths) append_stat(&out, root);
  for (const std::string& file : list_files(rule_paths, rule_set_extensions()))
    append_stat(&out, file);
  for (const std::string& file : extra_files) append_stat(&out, file);
  return out;
}

}  // namespace warden::server
