// Confinement: the kernel envelope an approved shell action runs in, derived per decision
// from the effects the rules approved (docs/ACTUATORS.md, "Confinement"). derive() only
// looks at the file system (which paths exist);
// run() and run_attached() start the program in its own user, mount, PID, network, IPC and
// UTS namespaces, with a private HOME and /tmp, Warden's own files and credential paths
// hidden, Landlock holding writes to the envelope's writable paths, a seccomp filter,
// no_new_privs, no capabilities and a process cap. probe() says what the kernel offers.
// All functions are thread-safe; run()/run_attached() may be called from any thread of a
// multi-threaded process (the child makes only async-signal-safe calls).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "actuators/config.h"
#include "actuators/process.h"
#include "engine/decision.h"
#include "engine/diagnostic.h"

namespace warden::actuators::confine {

// Error codes (docs/ACTUATORS.md).
inline constexpr const char* kUnsupported =
    ::warden::code::kConfineUnsupported;  // the kernel lacks a part
inline constexpr const char* kSetup =
    ::warden::code::kConfineSetup;  // a run's envelope could not be built

// The uid and gid a confined program has (its user namespace maps them to the daemon's).
inline constexpr unsigned kSandboxId = 1000;

// What the kernel offers, probed once per process by calling (never by reading /sys).
struct Support {
  bool ok = false;          // everything the envelope needs is there
  std::string error;        // what is missing ("" when ok)
  int landlock_abi = 0;     // 0: no Landlock
  bool namespaces = false;  // user, mount, PID, network, IPC, UTS namespaces
  bool seccomp = false;     // a seccomp filter can be loaded
  bool pid_limit = false;   // the PID namespace's pid_max caps the number of processes
};
const Support& probe();

// Where the envelope comes from besides the decision: the operator's configuration and the
// daemon's own files. Paths are absolute.
struct Inputs {
  std::string workspace;                    // writable; the default working directory
  std::vector<std::string> own_files;       // Warden's files: tokens, keys, state, rules,
                                            // config, socket, audit log: hidden wherever they are
  std::vector<std::string> hide;            // more paths hidden (`[actuators.shell] hide`)
  std::vector<std::string> writable_roots;  // outside the workspace, an approved write is granted
                                            // only beneath one of these (`writable`); default none
  std::vector<std::string> read;            // more read-only paths, exposed even inside a masked
                                            // directory (toolchains: /root/.rustup …) (`read`)
  std::string cache_dir;                    // host directory bound at $HOME/.cache ("" = none)
  std::vector<std::string> path = {"/usr/local/bin", "/usr/bin", "/bin"};  // PATH
  std::uint64_t max_processes = 64;  // processes at once (pid_max of the PID namespace
                                     // when the sandbox's outer uid is 0)
};

// The inputs a shell configuration gives (workspace resolved to its real path).
Inputs inputs_for(const ShellConfig& config);

// The envelope of one run. Plain value; derive() builds it, tests and `warden exec` may
// inspect or narrow it. Paths are absolute, as the host sees them (the sandbox sees every
// exposed path at the same place).
struct Envelope {
  std::string workspace;               // writable (bind-mounted at its own path)
  std::vector<std::string> writable;   // further writable paths (approved writes beneath a
                                       // writable root)
  std::vector<std::string> readable;   // the trees that may be read (Landlock): the system's
                                       // (/usr, /etc, /opt, /var …), the private ones, the
                                       // workspace, `exposed`; nothing else (not /root, /boot,
                                       // /mnt, an unknown top-level directory)
  std::vector<std::string> exposed;    // read-only, bound back inside masked directories
  std::vector<std::string> read_only;  // inside writable trees, kept read-only: persistence
                                       // files (.git/config, .git/hooks, .envrc …) no
                                       // approved effect writes
  std::vector<std::string> hidden;     // unreadable: credential-class targets of the
                                       // decision's effects, system credential files,
                                       // Warden's own files, `hide`
  std::vector<std::string> masked;     // directories replaced by empty ones: every home
                                       // (/home, /root, the daemon's $HOME), /run, /tmp,
                                       // /var/tmp, /dev/shm (the workspace is bound back)
  std::string home = "/home/agent";    // private HOME: empty at each run, never the workspace
  std::string tmp = "/tmp";            // private temporary directory (a fresh tmpfs)
  std::string cache_dir;               // host directory bound at home + "/.cache" ("" = none)
  // Network: none, unless the decision approved network effects; then only `hosts`, through
  // an HTTP CONNECT proxy inside the sandbox (HTTPS_PROXY/HTTP_PROXY/ALL_PROXY point at it).
  bool network = false;
  std::vector<std::string> hosts;  // approved host names or addresses, lower case
  // The proxy connects to private, loopback and link-local addresses only with this (the
  // decision granted `private-network`; derive() leaves it false); never to the metadata
  // address unless the approved host is that address written out.
  bool private_network = false;
  std::vector<std::string> env;  // the whole environment ("NAME=value"): minimal,
                                 // never the daemon's (HOME, TMPDIR, PATH, LANG …)
  std::uint64_t max_processes = 64;
};

// The envelope of a decision: its approved effects (Decision::effects) within `inputs`.
// - writes: the workspace, the private HOME and /tmp, the cache dir, and approved write or
//   delete targets beneath a writable root (their nearest existing directory); never a credential,
//   persistence or system path outside the workspace, never Warden's files;
// - reads: everything not hidden or masked; every credential-class effect target is hidden
//   whatever the rules said;
// - network: hosts of approved `network` effects with object `host`; a network effect whose
//   host is unknown (dynamic) grants nothing.
Envelope derive(const std::vector<EffectRecord>& effects, const Inputs& inputs);

// Runs spec.argv under `envelope`: as run_process (capture, deadline, limits, cwd_fd), in
// the envelope's namespaces. spec.env is replaced by envelope.env plus the spec's entries
// for names the envelope does not set (HOME, TMPDIR, PATH and the proxy variables stay the
// envelope's). Fails closed: when probe() is not ok or the envelope cannot be set up, the
// program does not run (outcome.started false, outcome.error says why, prefixed by
// kUnsupported or kSetup).
ProcessOutcome run(const Envelope& envelope, const ProcessSpec& spec);

// For `warden exec`: runs argv under `envelope` with the caller's stdin, stdout and stderr
// (no capture), in `cwd` (must lie in the workspace or a writable path), waits, and returns
// the exit status (128 + signal when killed). -1 and *error when it could not start.
int run_attached(const Envelope& envelope, const std::vector<std::string>& argv,
                 const std::string& cwd, std::chrono::milliseconds timeout, std::string* error);

}  // namespace warden::actuators::confine
