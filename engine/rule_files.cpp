#include "engine/rule_files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace warden {
namespace fs = std::filesystem;

namespace {
constexpr std::uintmax_t kMaxRuleFileBytes = 16u << 20;

bool has_rule_extension(const fs::path& p, const std::vector<std::string>& extensions) {
  const std::string name = p.filename().string();
  for (const auto& ext : extensions) {
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
      return true;
  }
  return false;
}
}  // namespace

const std::vector<std::string>& rule_set_extensions() {
  static const std::vector<std::string>* extensions =
      new std::vector<std::string>{".clp", ".toml", ".data.json"};
  return *extensions;
}

std::vector<std::string> list_files(const std::vector<std::string>& paths,
                                    const std::vector<std::string>& extensions) {
  std::vector<std::string> out;
  for (const auto& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      // Ordered by the name within the directory, byte-wise: the load order (and so the
      // rules digest) does not depend on how the directory itself was named.
      std::vector<std::pair<std::string, std::string>> found;  // (relative name, path)
      for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec) && has_rule_extension(it->path(), extensions))
          found.emplace_back(it->path().lexically_relative(path).generic_string(),
                             it->path().string());
      }
      std::sort(found.begin(), found.end());
      for (auto& f : found) out.push_back(std::move(f.second));
    } else if (has_rule_extension(path, extensions)) {
      out.push_back(path);
    }
  }
  return out;
}

RuleSources read_rule_files(const std::vector<std::string>& paths, Diagnostics* diagnostics) {
  RuleSources sources;
  // Each file once, at its first place: a path given twice, a directory and a file inside it,
  // or a symlink to a file already read (a team directory linking the pack's tables, loaded
  // beside the pack) would otherwise define everything in it twice.
  std::set<std::string> read;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      diagnostics->push_back(
          {code::kRead, Severity::Error, path, 0, "", "no such file or directory"});
      continue;
    }
    std::vector<std::string> files = fs::is_directory(path, ec)
                                         ? list_files({path}, rule_set_extensions())
                                         : std::vector<std::string>{path};
    for (const auto& file : files) {
      const fs::path real = fs::canonical(file, ec);
      if (!ec && !read.insert(real.string()).second) continue;
      auto size = fs::file_size(file, ec);
      if (ec) {
        diagnostics->push_back({code::kRead, Severity::Error, file, 0, "", ec.message()});
        continue;
      }
      if (size > kMaxRuleFileBytes) {
        diagnostics->push_back(
            {code::kRead, Severity::Error, file, 0, "", "rule file larger than 16 MiB"});
        continue;
      }
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        diagnostics->push_back({code::kRead, Severity::Error, file, 0, "", "cannot open file"});
        continue;
      }
      std::ostringstream text;
      text << in.rdbuf();
      sources.push_back({file, text.str()});
    }
  }
  return sources;
}

std::vector<std::string> effective_rule_paths(const std::vector<std::string>& paths) {
  if (!paths.empty()) return paths;
  return {shipped_rules_dir()};
}

LoadedPolicy load_policy(const std::vector<std::string>& paths, const RuleLoadOptions& options) {
  LoadedPolicy out;
  const std::vector<std::string> effective = effective_rule_paths(paths);
  if (options.check_modes) {
    for (const auto& path : effective) {
      std::error_code ec;
      auto problems = fs::is_directory(path, ec)
                          ? check_tree_modes(path, rule_set_extensions(), options.modes)
                          : check_file_modes(path, options.modes);
      for (const auto& p : problems)
        out.diagnostics.push_back({code::kFileMode, Severity::Error, p.path, 0, "", p.message});
    }
  }
  RuleSources sources = read_rule_files(effective, &out.diagnostics);
  out.files = sources.size();
  if (has_errors(out.diagnostics)) return out;
  Policy::Loaded loaded = Policy::compile(sources);
  out.policy = std::move(loaded.policy);
  out.diagnostics.insert(out.diagnostics.end(), loaded.diagnostics.begin(),
                         loaded.diagnostics.end());
  return out;
}

std::string shipped_rules_dir() {
  if (const char* env = std::getenv("WARDEN_RULES"); env && *env) return env;
#ifdef WARDEN_INSTALLED_RULES
  // An installed binary (cmake --install): the rules installed beside it, found from where the
  // running binary is (BINDIR/../share/warden/rules), so a staged or relocated tree works too.
  std::error_code ec;
  const fs::path binary = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = (binary.parent_path() / WARDEN_INSTALLED_RULES).lexically_normal();
    if (fs::is_directory(installed, ec)) return installed.string();
  }
#endif
#ifdef WARDEN_SHIPPED_RULES
  return WARDEN_SHIPPED_RULES;
#else
  return "rules";
#endif
}

}  // namespace warden
