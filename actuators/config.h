// Configuration of the built-in actuators (`[actuators.*]` in warden.toml). Plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace warden::actuators {

struct ShellConfig {
  std::string workspace = ".";  // working directory root; payload.cwd must lie in it
  std::vector<std::string> path = {"/usr/local/bin", "/usr/bin",
                                   "/bin"};  // program lookup; never the proposal's PATH
  std::chrono::milliseconds timeout{30000};  // default; payload.timeout (seconds) may lower it
  std::size_t max_output_bytes = 64 * 1024;  // stdout and stderr together; the rest is dropped
  std::uint64_t cpu_seconds = 30;            // RLIMIT_CPU
  // RLIMIT_AS bounds address space reserved, not memory used: Node's V8 and glibc's per-thread
  // arenas reserve far more than they touch, and at 1 GiB an approved `npm ci` died out of heap
  // about one run in eight.
  std::uint64_t memory_bytes = 4ull << 30;
  std::uint64_t max_processes = 64;            // RLIMIT_NPROC
  std::uint64_t max_file_bytes = 64ull << 20;  // RLIMIT_FSIZE
  // Used only when a rule allowed shell syntax. bash, because the rules' parser reads lines as
  // bash does: a POSIX sh without $'…' splits `echo $'\' ; touch x ; # \''` into three commands.
  std::string shell = "/bin/bash";
  // Confinement (actuators/confine.h): on by default; off only when the operator says so,
  // and then status, health-check and the start-up log warn.
  bool confine = true;
  std::vector<std::string> hide;      // more paths the confined program cannot read
  std::vector<std::string> writable;  // roots outside the workspace where an approved
                                      // write may be granted (default: none)
  std::vector<std::string> read;      // read-only paths exposed to the confined program
                                      // even inside a home (toolchains)
  std::string cache_dir;              // bound at the private HOME's .cache ("" = none)
  // Warden's own files (tokens, keys, state, rules, config, socket, audit log), hidden from
  // the confined program wherever they are. Filled by the daemon, not by the config file.
  std::vector<std::string> own_files;
};

struct FileConfig {
  std::string root = ".";  // every path resolves beneath it
  std::size_t max_read_bytes = 1 << 20;
  std::size_t max_write_bytes = 8 << 20;
};

struct HttpConfig {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds timeout{30000};
  std::size_t max_response_bytes = 1 << 20;
  std::size_t max_redirects = 0;     // followed only to the approved host
  std::vector<std::string> resolve;  // CURLOPT_RESOLVE pins "host:port:address"
};

struct ActuatorsConfig {
  ShellConfig shell;
  FileConfig file;
  HttpConfig http;
  std::string default_target = "reply";
  std::vector<std::string> silent = {"reply", "log", "system"};
};

}  // namespace warden::actuators
