#include "actuators/confine.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "actuators/beneath.h"
#include "actuators/egress.h"

namespace warden::actuators::confine {
namespace {

// Landlock, as the kernel defines it (the installed headers may predate ABI 4).
struct LandlockRulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};
struct LandlockPathBeneath {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
} __attribute__((packed));
struct LandlockNetPort {
  std::uint64_t allowed_access;
  std::uint64_t port;
};
constexpr int kRulePathBeneath = 1;
constexpr int kRuleNetPort = 2;
constexpr std::uint64_t kFsExecute = 1ull << 0;
constexpr std::uint64_t kFsWriteFile = 1ull << 1;
constexpr std::uint64_t kFsReadFile = 1ull << 2;
constexpr std::uint64_t kFsReadDir = 1ull << 3;
constexpr std::uint64_t kFsAbi1 = (1ull << 13) - 1;      // execute … make_sym
constexpr std::uint64_t kFsRefer = 1ull << 13;           // ABI 2
constexpr std::uint64_t kFsTruncate = 1ull << 14;        // ABI 3
constexpr std::uint64_t kFsIoctlDev = 1ull << 15;        // ABI 5
constexpr std::uint64_t kNetBindTcp = 1ull << 0;         // ABI 4
constexpr std::uint64_t kNetConnectTcp = 1ull << 1;      // ABI 4
constexpr std::uint64_t kScopeAbstractUnix = 1ull << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ull << 1;        // ABI 6
constexpr std::uint64_t kFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate |
                                      kFsIoctlDev;  // the rights a rule on a file may hold

int landlock_abi() {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1u /* VERSION */);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

std::uint64_t fs_handled(int abi) {
  std::uint64_t all = kFsAbi1;
  if (abi >= 2) all |= kFsRefer;
  if (abi >= 3) all |= kFsTruncate;
  if (abi >= 5) all |= kFsIoctlDev;
  return all;
}

// The egress proxy's port on the sandbox's loopback interface (the namespace is private).
constexpr int kProxyPort = 3128;
// The smallest pid_max the kernel accepts (RESERVED_PIDS + 1).
constexpr std::uint64_t kPidMaxFloor = 301;

// ---- derive ---------------------------------------------------------------------------------

std::string resolved(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// `inner` is `outer` or lies below it (both normalized absolute paths).
bool within(const std::string& inner, const std::string& outer) {
  if (outer == "/") return !inner.empty() && inner.front() == '/';
  return inner == outer ||
         (inner.size() > outer.size() && inner.starts_with(outer) && inner[outer.size()] == '/');
}

bool has_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// Every existing path a word names: its glob matches, resolved; itself resolved otherwise.
std::vector<std::string> existing(const std::string& word) {
  std::vector<std::string> out;
  if (word.empty() || word.front() != '/') return out;
  if (has_glob(word)) {
    glob_t g{};
    if (::glob(word.c_str(), GLOB_NOSORT, nullptr, &g) == 0)
      for (std::size_t i = 0; i < g.gl_pathc; ++i)
        if (auto r = resolved(g.gl_pathv[i]); !r.empty()) out.push_back(r);
    ::globfree(&g);
    return out;
  }
  // A symlink is hidden where it points; a dangling one hides nothing.
  if (auto r = resolved(word); !r.empty()) out.push_back(r);
  return out;
}

void add_unique(std::vector<std::string>& list, const std::string& path) {
  if (!path.empty() && std::find(list.begin(), list.end(), path) == list.end())
    list.push_back(path);
}

// System files that hold secrets, hidden in every envelope (their class is credential in
// rules/paths.toml; a root-owned 0600 file is readable by the daemon's uid).
const char* const kSystemSecrets[] = {
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssh/ssh_host_*_key",
    "/etc/ssl/private",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/var/lib/docker",
    "/var/lib/kubelet",
    "/var/lib/containers",
    "/var/run/secrets",
    "/var/log",
    "/var/spool",
    "/var/backups",
    "/var/mail",
    "/var/lib/sss",
    "/etc/krb5.keytab",
    "/etc/security/opasswd",
};

// Directories replaced by an empty tmpfs: every home, runtime and temporary directory.
const char* const kMasked[] = {"/home", "/root", "/run", "/tmp", "/var/tmp", "/mnt", "/media"};

// The system trees a confined program may read (Landlock); anything else it may not, even
// where the daemon's uid could (an unknown top-level directory, /boot, /root).
const char* const kReadable[] = {"/usr",   "/bin",    "/sbin", "/lib", "/lib32",
                                 "/lib64", "/libx32", "/etc",  "/opt", "/srv",
                                 "/var",   "/sys",    "/proc", "/nix", "/snap"};

// Files in a workspace that make code run later, outside the command (persistence class in
// rules/paths.toml): kept read-only unless an approved effect writes them.
const char* const kWorkspacePersistence[] = {".git/config",
                                             ".git/hooks",
                                             ".git/info/attributes",
                                             ".git/objects/info/alternates",
                                             ".envrc",
                                             ".husky",
                                             ".vscode",
                                             ".idea",
                                             ".devcontainer",
                                             ".devcontainer.json",
                                             ".claude",
                                             ".mcp.json",
                                             ".cursor",
                                             ".gemini",
                                             ".continue",
                                             ".mise.toml",
                                             "mise.toml",
                                             ".exrc",
                                             ".gdbinit",
                                             ".lldbinit"};

// The file names of the credential class (rules/paths.toml) without their directories: a
// glob the rules could not resolve hides the matches that carry one of these names.
const char* const kCredentialNames[] = {"id_rsa",
                                        "id_rsa.*",
                                        "id_dsa",
                                        "id_dsa.*",
                                        "id_ecdsa",
                                        "id_ecdsa.*",
                                        "id_ecdsa_sk",
                                        "id_ed25519",
                                        "id_ed25519.*",
                                        "id_ed25519_sk",
                                        "*.key",
                                        "*key*.pem",
                                        "privkey*.pem",
                                        "*.p12",
                                        "*.pfx",
                                        "*.ppk",
                                        "*.jks",
                                        "*.keystore",
                                        "*.kdbx",
                                        ".env",
                                        ".env.*",
                                        ".env~",
                                        ".env-*",
                                        ".env_*",
                                        "*.env",
                                        ".dev.vars",
                                        "credentials",
                                        "*.credentials",
                                        "credentials.json",
                                        "client_secret*.json",
                                        "service-account*.json",
                                        "kubeconfig",
                                        "*.kubeconfig",
                                        ".dockercfg",
                                        ".npmrc",
                                        ".pypirc",
                                        ".git-credentials",
                                        ".netrc",
                                        ".pgpass",
                                        ".htpasswd",
                                        ".vault-token",
                                        "secrets.yml",
                                        "secrets.yaml",
                                        "secrets.json",
                                        "secrets.toml",
                                        ".secrets",
                                        "*.tfstate",
                                        "*.tfstate.backup",
                                        "*_key",
                                        "*-key",
                                        "api_key*",
                                        "apikey*",
                                        "*.secret",
                                        "token.txt",
                                        ".token",
                                        "password.txt",
                                        "passwords.txt",
                                        "key.txt",
                                        "secret.txt",
                                        "secrets.txt",
                                        "*deploy_key*",
                                        "*deploy-key*",
                                        ".ssh",
                                        ".aws",
                                        ".gnupg"};
const char* const kCredentialExceptions[] = {"*.pub",         ".env.example", ".env.sample",
                                             ".env.template", ".env.dist",    ".env.defaults",
                                             "*.pub.key"};

bool credential_name(const std::string& path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  for (const char* x : kCredentialExceptions)
    if (::fnmatch(x, name.c_str(), FNM_CASEFOLD) == 0) return false;
  for (const char* c : kCredentialNames)
    if (::fnmatch(c, name.c_str(), FNM_CASEFOLD) == 0) return true;
  return false;
}

bool is_path_write(const EffectRecord& e) {
  return e.object == "path" && (e.kind == "write" || e.kind == "delete");
}

}  // namespace

Inputs inputs_for(const ShellConfig& config) {
  Inputs in;
  in.workspace = config.workspace;
  in.own_files = config.own_files;
  in.hide = config.hide;
  in.writable_roots = config.writable;
  in.read = config.read;
  in.cache_dir = config.cache_dir;
  in.path = config.path;
  in.max_processes = config.max_processes;
  return in;
}

Envelope derive(const std::vector<EffectRecord>& effects, const Inputs& inputs) {
  Envelope e;
  e.workspace = resolved(inputs.workspace);
  if (e.workspace.empty()) e.workspace = inputs.workspace;  // run() fails on it
  e.max_processes = inputs.max_processes;

  // Masks: the homes (also the daemon's, wherever it is) and the runtime directories.
  for (const char* m : kMasked)
    if (is_dir(m)) add_unique(e.masked, m);
  if (const char* h = ::getenv("HOME"); h && *h) {
    std::string r = resolved(h);
    if (!r.empty() && r != "/" && is_dir(r))
      add_unique(e.masked, r);  // the workspace is bound back
  }
  {
    struct passwd pw, *found = nullptr;
    char buf[4096];
    if (::getpwuid_r(::geteuid(), &pw, buf, sizeof buf, &found) == 0 && found && pw.pw_dir) {
      std::string r = resolved(pw.pw_dir);
      if (!r.empty() && r != "/" && is_dir(r))
        add_unique(e.masked, r);  // the workspace is bound back
    }
  }
  if (is_dir("/var/run")) add_unique(e.masked, "/var/run");  // not a symlink to /run here
  e.home = is_dir("/home") ? "/home/agent" : "/tmp/home";
  e.tmp = "/tmp";

  auto masked_only = [&](const std::string& p) {
    bool in_mask = false;
    for (const auto& m : e.masked) in_mask = in_mask || within(p, m);
    if (!in_mask) return false;
    if (within(p, e.workspace)) return false;
    for (const auto& x : e.exposed)
      if (within(p, x)) return false;
    for (const auto& w : e.writable)
      if (within(p, w)) return false;
    if (!e.cache_dir.empty() && within(p, e.cache_dir)) return false;
    return true;
  };
  auto forbidden_write = [&](const std::string& p) {
    for (const auto& own : inputs.own_files)
      for (const auto& o : existing(own))
        if (within(p, o) || within(o, p)) return true;
    return false;
  };

  // Writes beyond the workspace: approved write or delete targets beneath a writable root,
  // never of a class that matters, never Warden's own.
  for (const auto& eff : effects) {
    if (!is_path_write(eff) || eff.dynamic || eff.in_workspace) continue;
    if (eff.path_class != "none" && !eff.path_class.empty()) continue;
    std::string target = eff.target;
    if (target.empty() || target.front() != '/') continue;
    // The nearest existing directory of the target.
    std::string dir = target;
    while (!dir.empty() && !is_dir(dir)) {
      auto slash = dir.rfind('/');
      dir = slash == 0 ? "/" : dir.substr(0, slash);
    }
    std::string real = resolved(dir);
    if (real.empty() || real == "/") continue;
    bool beneath_root = false;
    for (const auto& root : inputs.writable_roots) {
      std::string r = resolved(root);
      if (!r.empty() && within(real, r)) beneath_root = true;
    }
    if (!beneath_root || forbidden_write(real)) continue;
    add_unique(e.writable, real);
  }
  for (const auto& r : inputs.read)
    if (auto p = resolved(r); !p.empty()) add_unique(e.exposed, p);
  // The configured program path is the operator's: readable, and bound back where a mask
  // covers it (a toolchain's bin in a home).
  for (const auto& dir : inputs.path) {
    std::string p = resolved(dir);
    if (p.empty() || !is_dir(p)) continue;
    if (masked_only(p)) add_unique(e.exposed, p);
  }
  if (!inputs.cache_dir.empty()) {
    e.cache_dir = inputs.cache_dir;
    if (auto r = resolved(inputs.cache_dir); !r.empty()) e.cache_dir = r;
  }

  // Readable trees: the system's, then the private ones and what is bound back.
  for (const char* r : kReadable)
    if (is_dir(r)) add_unique(e.readable, r);
  add_unique(e.readable, e.workspace);
  for (const auto& x : e.exposed) add_unique(e.readable, x);
  for (const auto& dir : inputs.path)
    if (auto p = resolved(dir); !p.empty() && is_dir(p)) add_unique(e.readable, p);

  // Hidden: system secrets, Warden's own files, `hide`, every credential target the
  // decision's effects name (whatever the rules said of them).
  std::vector<std::string> hide_words(std::begin(kSystemSecrets), std::end(kSystemSecrets));
  for (const auto& own : inputs.own_files) hide_words.push_back(own);
  for (const auto& h : inputs.hide) hide_words.push_back(h);
  for (const auto& eff : effects)
    if (eff.object == "path" && eff.path_class == "credential") hide_words.push_back(eff.target);
  for (const auto& word : hide_words)
    for (const auto& p : existing(word))
      if (p != "/" && !masked_only(p) && p != e.workspace) add_unique(e.hidden, p);
  // A glob the rules saw only as a word: its matches with a credential's name.
  for (const auto& eff : effects) {
    if (eff.object != "path" || !eff.dynamic || !has_glob(eff.target)) continue;
    for (const auto& p : existing(eff.target))
      if (credential_name(p) && !masked_only(p) && p != e.workspace) add_unique(e.hidden, p);
  }

  // Persistence files of the workspace no approved effect writes stay read-only.
  for (const char* rel : kWorkspacePersistence) {
    std::string p = e.workspace + "/" + rel;
    if (!exists(p)) continue;
    bool approved = false;
    for (const auto& eff : effects)
      if (is_path_write(eff) && !eff.dynamic && within(eff.target, p)) approved = true;
    if (!approved) add_unique(e.read_only, p);
  }

  // Network: only named hosts of approved network effects.
  for (const auto& eff : effects) {
    if (eff.kind != "network") continue;
    if (eff.object != "host" || eff.dynamic || eff.target.empty()) continue;
    std::string host = eff.target;
    std::transform(host.begin(), host.end(), host.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    add_unique(e.hosts, host);
  }
  e.network = !e.hosts.empty();

  std::string path;
  for (const auto& p : inputs.path) path += (path.empty() ? "" : ":") + p;
  e.env = {"PATH=" + path, "HOME=" + e.home, "TMPDIR=" + e.tmp, "LANG=C.UTF-8", "USER=agent",
           "LOGNAME=agent", "XDG_CACHE_HOME=" + e.home + "/.cache",
           "npm_config_cache=" + e.home + "/.cache/npm", "npm_config_update_notifier=false",
           // git uses a bare repository only when named (--git-dir, GIT_DIR): one planted in
           // the workspace (config, HEAD, objects/) would otherwise be found from a
           // directory inside it, and its core.fsmonitor or hooks would run.
           "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.bareRepository",
           "GIT_CONFIG_VALUE_0=explicit"};
  if (e.network) {
    const std::string proxy = "http://127.0.0.1:" + std::to_string(kProxyPort);
    for (const char* n :
         {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"})
      e.env.push_back(std::string(n) + "=" + proxy);
    e.env.push_back("NO_PROXY=");
    e.env.push_back("no_proxy=");
  }
  return e;
}

namespace {

// ---- the child's plan: everything prepared before the fork ----------------------------------

enum class Op : int {
  Mask,     // tmpfs over target
  Bind,     // bind fd[source] at target (mkdir -p the mount point), writable
  BindRo,   // same, then read-only
  Protect,  // bind target onto itself, read-only
  Hide,     // bind the hider (a mode-0 file or directory) over target, read-only
  DevNode,  // bind fd[source] at target (a file mount point in the private /dev)
};

struct MountStep {
  Op op;
  int source = -1;  // index into Plan::sources
  std::string target;
  std::string data;  // tmpfs options
};

struct Plan {
  std::string setgroups = "deny";
  std::string uid_map, gid_map;
  std::vector<std::string> sources;  // opened O_PATH by the keeper before anything is masked
  std::vector<MountStep> steps;      // in order
  std::vector<std::string> writable_mounts;  // made writable again after "/" became read-only
  std::string dev_hider_file = "/dev/.hidden";
  std::string dev_hider_dir = "/dev/.hidden.d";
  std::string home, cache_mount;  // mkdir -p (home), bind target of the cache
  std::string pid_max;            // written to the new /proc/sys/kernel/pid_max ("" = no)
  bool loopback = false;          // bring lo up (the proxy listens there)
  std::string cwd_base;           // absolute path, opened in the new view
  std::string cwd_rel;            // beneath it
  // Landlock, for the program.
  int abi = 0;
  std::vector<std::string> read_paths, write_paths, dev_paths;
  int proxy_port = 0;
  // Seccomp filter (prepared once).
  const sock_fprog* filter = nullptr;
  // Set by the keeper: the listening proxy socket, passed back to the parent.
  int proxy_channel = -1;  // the keeper's end of a socketpair (SCM_RIGHTS), -1 when none
};

// ---- async-signal-safe helpers for the child --------------------------------------------------

bool write_file(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = ::write(fd, text.data(), text.size());
  ::close(fd);
  return n == static_cast<ssize_t>(text.size());
}

// mkdir -p of `path` (absolute) into a writable tmpfs; the last component as a file when
// `file`. `buf` holds a copy (no allocation).
bool make_mount_point(const std::string& path, bool file) {
  char buf[PATH_MAX];
  if (path.size() >= sizeof buf) return false;
  ::memcpy(buf, path.c_str(), path.size() + 1);
  for (char* p = buf + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = 0;
    if (::mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
    *p = '/';
  }
  if (file) {
    int fd = ::open(buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return true;
    }
    return errno == EISDIR;  // something is there already
  }
  return ::mkdir(buf, 0755) == 0 || errno == EEXIST;
}

// Read-only and nosuid (not nodev: the private /dev's nodes are bind mounts beneath "/").
int set_readonly(const char* target, bool recursive) {
  struct mount_attr attr {};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID;
  return static_cast<int>(::syscall(SYS_mount_setattr, AT_FDCWD, target,
                                    recursive ? AT_RECURSIVE : 0, &attr, sizeof attr));
}

// Only this mount: a submount read-only on the host stays so (clearing it would fail).
int set_writable(const char* target) {
  struct mount_attr attr {};
  attr.attr_clr = MOUNT_ATTR_RDONLY;
  return static_cast<int>(::syscall(SYS_mount_setattr, AT_FDCWD, target, 0, &attr, sizeof attr));
}

void fd_path(char* out, int fd) {
  write_proc_path(out, "/proc/self/fd/", static_cast<unsigned>(fd), "");
}

bool bring_up_loopback() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  struct ifreq {
    char name[16];
    short flags;
    char pad[22];
  } req{};
  ::memcpy(req.name, "lo", 3);
  bool ok = ::ioctl(s, 0x8913 /* SIOCGIFFLAGS */, &req) == 0;
  req.flags |= 0x1 /* IFF_UP */;
  ok = ok && ::ioctl(s, 0x8914 /* SIOCSIFFLAGS */, &req) == 0;
  ::close(s);
  return ok;
}

// Step numbers reported to the parent.
enum Step : int {
  kStepIdMaps = 100,
  kStepPrivate,
  kStepOpenSource,
  kStepMask,
  kStepBind,
  kStepReadOnly,
  kStepDev,
  kStepProc,
  kStepPidMax,
  kStepHide,
  kStepWritable,
  kStepCwd,
  kStepNet,
  kStepNoNewPrivs = 120,
  kStepLandlock,
  kStepCaps,
  kStepSeccomp,
};

int keeper_setup(const void* data) {
  const Plan& plan = *static_cast<const Plan*>(data);
  if (!write_file("/proc/self/setgroups", plan.setgroups) ||
      !write_file("/proc/self/uid_map", plan.uid_map) ||
      !write_file("/proc/self/gid_map", plan.gid_map))
    return kStepIdMaps;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return kStepPrivate;
  // Every bind source, before a mask covers it.
  int fds[256];
  const std::size_t nsrc = plan.sources.size();
  if (nsrc > 256) return kStepOpenSource;
  for (std::size_t i = 0; i < nsrc; ++i) {
    fds[i] = ::open(plan.sources[i].c_str(), O_PATH | O_CLOEXEC);
    if (fds[i] < 0) return kStepOpenSource;
  }
  // A private /dev with the harmless devices only (not the host's disks).
  if (::mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m") != 0)
    return kStepDev;
  ::mkdir("/dev/shm", 01777);
  ::mkdir("/dev/pts", 0755);
  if (::symlink("/proc/self/fd", "/dev/fd") != 0 ||
      ::symlink("/proc/self/fd/0", "/dev/stdin") != 0 ||
      ::symlink("/proc/self/fd/1", "/dev/stdout") != 0 ||
      ::symlink("/proc/self/fd/2", "/dev/stderr") != 0)
    return kStepDev;
  {
    int fd = ::open(plan.dev_hider_file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0);
    if (fd < 0) return kStepDev;
    ::close(fd);
    if (::mkdir(plan.dev_hider_dir.c_str(), 0) != 0) return kStepDev;
  }
  char src[64];
  for (const MountStep& s : plan.steps) {
    switch (s.op) {
      case Op::Mask:
        if (!make_mount_point(s.target, false)) return kStepMask;
        if (::mount("tmpfs", s.target.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, s.data.c_str()) != 0)
          return kStepMask;
        break;
      case Op::Bind:
      case Op::BindRo:
      case Op::DevNode: {
        struct stat st;
        if (::fstat(fds[s.source], &st) != 0) return kStepBind;
        if (!make_mount_point(s.target, !S_ISDIR(st.st_mode))) return kStepBind;
        fd_path(src, fds[s.source]);
        if (::mount(src, s.target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
          return s.op == Op::DevNode ? kStepDev : kStepBind;
        if (s.op == Op::BindRo && set_readonly(s.target.c_str(), true) != 0) return kStepReadOnly;
        break;
      }
      default:
        break;
    }
  }
  if (!plan.home.empty() && !make_mount_point(plan.home, false)) return kStepBind;
  if (!plan.cache_mount.empty()) {
    // The cache is a Bind step already; nothing more.
  }
  // Everything read-only, then the writable mounts writable again.
  if (set_readonly("/", true) != 0) return kStepReadOnly;
  for (const auto& w : plan.writable_mounts)
    if (set_writable(w.c_str()) != 0) return kStepWritable;
  // Inside writable trees: persistence files read-only, secrets hidden.
  for (const MountStep& s : plan.steps) {
    if (s.op == Op::Protect) {
      if (::mount(s.target.c_str(), s.target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
        return kStepReadOnly;
      if (set_readonly(s.target.c_str(), true) != 0) return kStepReadOnly;
    } else if (s.op == Op::Hide) {
      struct stat st;
      if (::stat(s.target.c_str(), &st) != 0) continue;  // gone since derive: nothing to hide
      const char* hider =
          S_ISDIR(st.st_mode) ? plan.dev_hider_dir.c_str() : plan.dev_hider_file.c_str();
      if (::mount(hider, s.target.c_str(), nullptr, MS_BIND, nullptr) != 0) return kStepHide;
      if (set_readonly(s.target.c_str(), false) != 0) return kStepHide;
    }
  }
  // The PID namespace's own /proc (the keeper is its init): no other process is in it.
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return kStepProc;
  if (!plan.pid_max.empty() && !write_file("/proc/sys/kernel/pid_max", plan.pid_max))
    return kStepPidMax;
  if (plan.loopback && !bring_up_loopback()) return kStepNet;
  if (plan.proxy_channel >= 0) {
    // The proxy's listening socket on the sandbox's loopback, handed to the daemon's proxy.
    int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0) return kStepNet;
    struct sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(plan.proxy_port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l, 128) != 0)
      return kStepNet;
    char byte = 0;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    struct iovec iov {
      &byte, 1
    };
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    ::memcpy(CMSG_DATA(c), &l, sizeof l);
    if (::sendmsg(plan.proxy_channel, &msg, MSG_NOSIGNAL) != 1) return kStepNet;
    ::close(l);
    ::close(plan.proxy_channel);
  }
  // The working directory, beneath its base in the new view.
  int base = ::open(plan.cwd_base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (base < 0) return kStepCwd;
  int cwd = base;
  if (!plan.cwd_rel.empty() && plan.cwd_rel != ".") {
    struct open_how how {};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    cwd = static_cast<int>(::syscall(SYS_openat2, base, plan.cwd_rel.c_str(), &how, sizeof how));
    if (cwd < 0) return kStepCwd;
  }
  if (::fchdir(cwd) != 0) return kStepCwd;
  if (cwd != base) ::close(cwd);
  ::close(base);
  for (std::size_t i = 0; i < nsrc; ++i) ::close(fds[i]);
  // Nothing of the daemon's for the program to read in the keeper: not dumpable (its /proc
  // files are root's), and its copy of the daemon's environment wiped.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  for (char** e = environ; e && *e; ++e) ::memset(*e, 0, ::strlen(*e));
  return 0;
}

bool landlock_rule(int ruleset, const std::string& path, std::uint64_t access) {
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;  // a path that is not there grants nothing
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) access &= kFileRights;
  LandlockPathBeneath rule{access, fd};
  long rc = ::syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0);
  ::close(fd);
  return rc == 0;
}

int program_setup(const void* data) {
  const Plan& plan = *static_cast<const Plan*>(data);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return kStepNoNewPrivs;
  // Landlock: read the readable trees, write the writable ones, use the devices; TCP only
  // to the proxy; no signal or abstract socket outside the sandbox's domain.
  const std::uint64_t handled = fs_handled(plan.abi);
  LandlockRulesetAttr attr{handled, 0, 0};
  std::size_t size = sizeof(std::uint64_t);
  if (plan.abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    size = 2 * sizeof(std::uint64_t);
  }
  if (plan.abi >= 6) {
    attr.scoped = kScopeAbstractUnix | kScopeSignal;
    size = sizeof attr;
  }
  int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) return kStepLandlock;
  const std::uint64_t read = kFsExecute | kFsReadFile | kFsReadDir;
  for (const auto& p : plan.read_paths)
    if (!landlock_rule(ruleset, p, read & handled)) return kStepLandlock;
  for (const auto& p : plan.write_paths)
    if (!landlock_rule(ruleset, p, handled)) return kStepLandlock;
  for (const auto& p : plan.dev_paths)
    if (!landlock_rule(ruleset, p,
                       (kFsReadFile | kFsWriteFile | kFsTruncate | kFsIoctlDev) & handled))
      return kStepLandlock;
  if (plan.abi >= 4 && plan.proxy_port > 0) {
    LandlockNetPort port{kNetConnectTcp, static_cast<std::uint64_t>(plan.proxy_port)};
    if (::syscall(SYS_landlock_add_rule, ruleset, kRuleNetPort, &port, 0) != 0)
      return kStepLandlock;
  }
  if (::syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) return kStepLandlock;
  ::close(ruleset);
  // No capability survives: bounding and ambient sets cleared, then none held.
  for (int cap = 0; cap <= 63; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return kStepCaps;
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct header {
    _LINUX_CAPABILITY_VERSION_3, 0
  };
  struct __user_cap_data_struct caps[2] = {};
  if (::syscall(SYS_capset, &header, caps) != 0) return kStepCaps;
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, plan.filter, 0, 0) != 0) return kStepSeccomp;
  return 0;
}

const char* step_name(int step) {
  switch (step) {
    case kStepIdMaps:
      return "the user namespace's id maps";
    case kStepPrivate:
      return "making the mounts private";
    case kStepOpenSource:
      return "opening a path to bind";
    case kStepMask:
      return "masking a directory";
    case kStepBind:
      return "binding a path";
    case kStepReadOnly:
      return "making the file system read-only";
    case kStepDev:
      return "the private /dev";
    case kStepProc:
      return "mounting /proc";
    case kStepPidMax:
      return "the process cap (pid_max)";
    case kStepHide:
      return "hiding a path";
    case kStepWritable:
      return "making a writable path writable";
    case kStepCwd:
      return "the working directory";
    case kStepNet:
      return "the loopback interface";
    case kStepNoNewPrivs:
      return "no_new_privs";
    case kStepLandlock:
      return "Landlock";
    case kStepCaps:
      return "dropping capabilities";
    case kStepSeccomp:
      return "the seccomp filter";
    default:
      return "confinement";
  }
}

// The seccomp filter: the system calls a confined program has no business making.
struct Filter {
  std::vector<sock_filter> code;
  sock_fprog prog{};
  std::string error;
};

const Filter& filter() {
  static const Filter f = [] {
    Filter out;
    scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
      out.error = "seccomp_init failed";
      return out;
    }
    const char* denied[] = {"ptrace",
                            "process_vm_readv",
                            "process_vm_writev",
                            "mount",
                            "umount2",
                            "pivot_root",
                            "chroot",
                            "bpf",
                            "keyctl",
                            "add_key",
                            "request_key",
                            "perf_event_open",
                            "kexec_load",
                            "kexec_file_load",
                            "init_module",
                            "finit_module",
                            "delete_module",
                            "reboot",
                            "swapon",
                            "swapoff",
                            "acct",
                            "quotactl",
                            "setns",
                            "unshare",
                            "userfaultfd",
                            "open_by_handle_at",
                            "name_to_handle_at",
                            "fsopen",
                            "fsconfig",
                            "fsmount",
                            "fspick",
                            "move_mount",
                            "open_tree",
                            "mount_setattr",
                            "iopl",
                            "ioperm",
                            "syslog",
                            "settimeofday",
                            "clock_settime",
                            "clock_adjtime",
                            "adjtimex",
                            "vhangup",
                            "uselib",
                            "io_uring_setup",
                            "io_uring_enter",
                            "io_uring_register",
                            "lookup_dcookie",
                            "nfsservctl",
                            "kcmp",
                            "pidfd_getfd",
                            "fanotify_init",
                            "quotactl_fd",
                            "sethostname",
                            "setdomainname"};
    bool ok = true;
    for (const char* name : denied) {
      int nr = ::seccomp_syscall_resolve_name(name);
      if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
      ok = ok && ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) == 0;
    }
    // New namespaces through clone; clone3 (its flags are out of reach) says ENOSYS, so libc
    // falls back to clone.
    for (std::uint64_t flag :
         {std::uint64_t{CLONE_NEWNS}, std::uint64_t{CLONE_NEWUSER}, std::uint64_t{CLONE_NEWPID},
          std::uint64_t{CLONE_NEWNET}, std::uint64_t{CLONE_NEWIPC}, std::uint64_t{CLONE_NEWUTS},
          std::uint64_t{CLONE_NEWCGROUP}, std::uint64_t{0x80}})
      ok = ok && ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                    SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) == 0;
    ok = ok && ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0;
    // Typing into the terminal, and the console's own ioctls.
    ok = ok &&
         ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                            SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0x5412 /* TIOCSTI */)) == 0;
    ok = ok &&
         ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                            SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0x541C /* TIOCLINUX */)) == 0;
    if (!ok) {
      out.error = "a seccomp rule could not be added";
      ::seccomp_release(ctx);
      return out;
    }
    // The BPF program, exported through a pipe-free memory file.
    int mfd = static_cast<int>(::syscall(SYS_memfd_create, "warden-seccomp", MFD_CLOEXEC));
    if (mfd < 0 || ::seccomp_export_bpf(ctx, mfd) != 0) {
      out.error = "the seccomp filter could not be exported";
      if (mfd >= 0) ::close(mfd);
      ::seccomp_release(ctx);
      return out;
    }
    ::seccomp_release(ctx);
    off_t len = ::lseek(mfd, 0, SEEK_END);
    if (len <= 0 || len % static_cast<off_t>(sizeof(sock_filter)) != 0) {
      ::close(mfd);
      out.error = "the seccomp filter has a bad size";
      return out;
    }
    out.code.resize(static_cast<std::size_t>(len) / sizeof(sock_filter));
    ssize_t got = ::pread(mfd, out.code.data(), static_cast<std::size_t>(len), 0);
    ::close(mfd);
    if (got != len) {
      out.error = "the seccomp filter could not be read back";
      out.code.clear();
      return out;
    }
    out.prog.len = static_cast<unsigned short>(out.code.size());
    out.prog.filter = out.code.data();
    return out;
  }();
  return f;
}

// ---- run -----------------------------------------------------------------------------------

constexpr int kNamespaces = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                            CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;

const char* const kDevices[] = {"/dev/null",   "/dev/zero",    "/dev/full",
                                "/dev/random", "/dev/urandom", "/dev/tty"};

std::string fd_target(int fd) {
  char link[64], buf[PATH_MAX];
  fd_path(link, fd);
  ssize_t n = ::readlink(link, buf, sizeof buf - 1);
  if (n <= 0) return {};
  return std::string(buf, static_cast<std::size_t>(n));
}

// Builds the plan, or says why it cannot. `with_pid_max`: cap processes with pid_max.
std::string make_plan(const Envelope& env, const std::string& cwd, bool with_pid_max, Plan* plan) {
  if (env.workspace.empty() || env.workspace.front() != '/' || !is_dir(env.workspace))
    return "the workspace " + env.workspace + " is not a directory";
  const Filter& f = filter();
  if (!f.error.empty()) return f.error;
  plan->filter = &f.prog;
  plan->abi = landlock_abi();
  plan->uid_map = std::to_string(kSandboxId) + " " + std::to_string(::geteuid()) + " 1\n";
  plan->gid_map = std::to_string(kSandboxId) + " " + std::to_string(::getegid()) + " 1\n";
  auto source = [&](const std::string& path) {
    plan->sources.push_back(path);
    return static_cast<int>(plan->sources.size() - 1);
  };
  // Masks, outermost first; one inside another is covered already.
  std::vector<std::string> masks = env.masked;
  std::sort(masks.begin(), masks.end(),
            [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  std::vector<std::string> applied;
  for (const auto& m : masks) {
    bool inside = false;
    for (const auto& a : applied) inside = inside || within(m, a);
    if (inside) continue;
    applied.push_back(m);
    const bool tmp = m == env.tmp || m == "/var/tmp";
    plan->steps.push_back({Op::Mask, -1, m, tmp ? "mode=1777,size=50%" : "mode=0755,size=1m"});
  }
  bool tmp_masked = std::find(applied.begin(), applied.end(), env.tmp) != applied.end();
  if (!tmp_masked) {
    plan->steps.push_back({Op::Mask, -1, env.tmp, "mode=1777,size=50%"});
    applied.push_back(env.tmp);
  }
  // The private HOME: a tmpfs of its own, empty at every run. POSIX shared memory likewise.
  plan->steps.push_back({Op::Mask, -1, env.home, "mode=0755,size=50%"});
  plan->steps.push_back({Op::Mask, -1, "/dev/shm", "mode=1777,size=25%"});
  for (const char* d : kDevices)
    if (exists(d)) plan->steps.push_back({Op::DevNode, source(d), d, {}});
  plan->steps.push_back({Op::Bind, source(env.workspace), env.workspace, {}});
  plan->writable_mounts = {env.tmp, env.home, "/dev/shm", env.workspace};
  for (const auto& w : env.writable) {
    if (within(w, env.workspace)) continue;
    plan->steps.push_back({Op::Bind, source(w), w, {}});
    plan->writable_mounts.push_back(w);
  }
  if (!env.cache_dir.empty()) {
    std::string target = env.home + "/.cache";
    plan->steps.push_back({Op::Bind, source(env.cache_dir), target, {}});
    plan->writable_mounts.push_back(target);
  }
  for (const auto& x : env.exposed) plan->steps.push_back({Op::BindRo, source(x), x, {}});
  for (const auto& p : env.read_only) plan->steps.push_back({Op::Protect, -1, p, {}});
  for (const auto& h : env.hidden) plan->steps.push_back({Op::Hide, -1, h, {}});
  if (with_pid_max)
    plan->pid_max = std::to_string(std::max<std::uint64_t>(kPidMaxFloor, env.max_processes + 2));
  plan->home = env.home;
  // Landlock.
  plan->read_paths = env.readable;
  plan->read_paths.push_back("/dev");
  // The directory holding the private HOME (a mask of ours: the HOME and what is bound back).
  if (auto slash = env.home.rfind('/'); slash != std::string::npos && slash > 0)
    plan->read_paths.push_back(env.home.substr(0, slash));
  plan->write_paths = plan->writable_mounts;
  for (const char* d : kDevices) plan->dev_paths.push_back(d);
  // The working directory: beneath the workspace or a writable path.
  std::vector<std::string> bases = {env.workspace};
  for (const auto& w : env.writable) bases.push_back(w);
  for (const auto& b : bases) {
    if (!within(cwd, b)) continue;
    plan->cwd_base = b;
    plan->cwd_rel = cwd.size() > b.size() ? cwd.substr(b.size() + 1) : ".";
    break;
  }
  if (plan->cwd_base.empty())
    return "the working directory " + cwd + " is outside the workspace and the writable paths";
  return {};
}

ProcessOutcome run_with(const Envelope& envelope, const ProcessSpec& spec, const std::string& cwd,
                        bool with_pid_max) {
  ProcessOutcome outcome;
  if (!envelope.cache_dir.empty()) {
    std::error_code ec;
    // The cache directory is the operator's; created on first use.
    if (::mkdir(envelope.cache_dir.c_str(), 0700) != 0 && errno != EEXIST) {
      outcome.error = std::string(kSetup) + ": the cache directory " + envelope.cache_dir +
                      " cannot be created: " + errno_text(errno);
      return outcome;
    }
  }
  Plan plan;
  if (std::string why = make_plan(envelope, cwd, with_pid_max, &plan); !why.empty()) {
    outcome.error = std::string(kSetup) + ": " + why;
    return outcome;
  }
  // Approved hosts: the egress proxy is the only way out.
  std::unique_ptr<EgressProxy> proxy;
  if (envelope.network && !envelope.hosts.empty()) {
    proxy = std::make_unique<EgressProxy>(envelope.hosts, envelope.private_network);
    plan.proxy_channel = proxy->channel();
    if (plan.proxy_channel < 0) {
      outcome.error = std::string(kSetup) + ": the egress proxy: " + errno_text(errno);
      return outcome;
    }
    plan.loopback = true;
    plan.proxy_port = kProxyPort;
    proxy->start();
  }
  ProcessSpec s = spec;
  s.clone_flags = kNamespaces;
  s.keeper_setup = keeper_setup;
  s.program_setup = program_setup;
  s.setup_data = &plan;
  s.step_name = step_name;
  // The envelope's environment; the spec's only for names the envelope does not set.
  s.env = envelope.env;
  for (const auto& e : spec.env) {
    const std::string name = e.substr(0, e.find('=') + 1);
    bool set = false;
    for (const auto& x : envelope.env) set = set || x.starts_with(name);
    if (!set) s.env.push_back(e);
  }
  s.max_processes = std::min(spec.max_processes, envelope.max_processes);
  outcome = run_process(s);
  if (proxy) proxy->stop();
  if (!outcome.started && outcome.failed_step >= 100)
    outcome.error = std::string(kSetup) + ": " + outcome.error;
  return outcome;
}

}  // namespace

const Support& probe() {
  static const Support support = [] {
    Support s;
    s.landlock_abi = landlock_abi();
    s.seccomp = filter().error.empty();
    char dir[] = "/tmp/warden-probe-XXXXXX";
    if (!::mkdtemp(dir)) {
      s.error = std::string("a probe directory cannot be made: ") + errno_text(errno);
      return s;
    }
    Inputs in;
    in.workspace = dir;
    Envelope env = derive({}, in);
    ProcessSpec spec;
    spec.program = "/bin/true";
    spec.argv = {"/bin/true"};
    spec.timeout = std::chrono::seconds(10);
    ProcessOutcome run = run_with(env, spec, env.workspace, true);
    s.pid_limit = run.started;
    if (!run.started && run.error.find("pid_max") != std::string::npos && ::geteuid() != 0)
      run = run_with(env, spec, env.workspace, false);  // RLIMIT_NPROC caps a non-root uid
    ::rmdir(dir);
    s.namespaces = run.started;
    if (s.landlock_abi < 1) {
      s.error = "the kernel has no Landlock (Linux 5.13 or later, lsm=landlock)";
    } else if (!s.seccomp) {
      s.error = "no seccomp filter: " + filter().error;
    } else if (!run.started) {
      s.error = "a confined program cannot start: " + run.error;
      if (run.error.find("pid_max") != std::string::npos)
        s.error +=
            " (the kernel cannot cap a PID namespace's processes, Linux 6.14, and the "
            "daemon runs as root, where RLIMIT_NPROC does not hold)";
    } else if (run.exit_code != 0) {
      s.error = "a confined /bin/true exited " + std::to_string(run.exit_code);
    } else {
      s.ok = true;
    }
    return s;
  }();
  return support;
}

ProcessOutcome run(const Envelope& envelope, const ProcessSpec& spec) {
  const Support& support = probe();
  if (!support.ok) {
    ProcessOutcome o;
    o.error = std::string(kUnsupported) + ": " + support.error;
    return o;
  }
  std::string cwd = spec.cwd_fd >= 0 ? fd_target(spec.cwd_fd) : envelope.workspace;
  if (cwd.empty()) {
    ProcessOutcome o;
    o.error = std::string(kSetup) + ": the working directory cannot be named";
    return o;
  }
  return run_with(envelope, spec, cwd, support.pid_limit);
}

int run_attached(const Envelope& envelope, const std::vector<std::string>& argv,
                 const std::string& cwd, std::chrono::milliseconds timeout, std::string* error) {
  const Support& support = probe();
  if (!support.ok) {
    if (error) *error = std::string(kUnsupported) + ": " + support.error;
    return -1;
  }
  if (argv.empty()) {
    if (error) *error = std::string(kSetup) + ": no program";
    return -1;
  }
  ProcessSpec spec;
  spec.argv = argv;
  spec.program = argv.front();
  if (spec.program.find('/') == std::string::npos) {
    // PATH lookup in the envelope's PATH (the sandbox sees these directories unchanged).
    std::string path;
    for (const auto& e : envelope.env)
      if (e.starts_with("PATH=")) path = e.substr(5);
    std::size_t start = 0;
    spec.program.clear();
    while (start <= path.size()) {
      std::size_t end = path.find(':', start);
      if (end == std::string::npos) end = path.size();
      std::string candidate = path.substr(start, end - start) + "/" + argv.front();
      if (!candidate.empty() && candidate.front() == '/' &&
          ::access(candidate.c_str(), X_OK) == 0) {
        spec.program = candidate;
        break;
      }
      start = end + 1;
    }
    if (spec.program.empty()) {
      if (error) *error = std::string(kSetup) + ": " + argv.front() + " is not in the PATH";
      return -1;
    }
  }
  spec.timeout = timeout;
  spec.attached = true;
  std::string real = resolved(cwd.empty() ? envelope.workspace : cwd);
  if (real.empty()) {
    if (error) *error = std::string(kSetup) + ": the working directory " + cwd + " does not exist";
    return -1;
  }
  ProcessOutcome o = run_with(envelope, spec, real, support.pid_limit);
  if (!o.started) {
    if (error) *error = o.error;
    return -1;
  }
  if (o.timed_out && error) *error = "killed after " + std::to_string(timeout.count()) + " ms";
  return o.exit_code;
}

}  // namespace warden::actuators::confine
