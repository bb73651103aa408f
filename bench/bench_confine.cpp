// bench_confine: what the confinement costs per command at start-up.
//
//   bench_confine [--runs N] [--no-bwrap]
//
// Runs /bin/true N times (default 1,000) each way and prints the median and p99 wall time
// from the start of the run to its exit status:
//   plain     run_process (fork, keeper, execve): the shell actuator with confine = "off"
//   confined  confine::run under the envelope derive() gives a decision with no effects
//             (namespaces, mounts, Landlock, seccomp, pid_max): the shell actuator's default
//   network   the same with one approved host (adds the loopback interface and the proxy)
//   bwrap     bubblewrap with comparable namespaces and mounts, run by run_process (for
//             comparison; skipped when /usr/bin/bwrap is missing or with --no-bwrap)
// and the median and p99 that confinement adds over plain, in wall time and in CPU time (the
// caller's and its reaped children's: what a loaded machine cannot hide). The goal is <= 5 ms
// at the median.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "actuators/confine.h"
#include "actuators/process.h"

using namespace warden::actuators;

namespace {

struct Figures {
  double median_ms = 0, p99_ms = 0;
  double cpu_median_ms = 0, cpu_p99_ms = 0;  // CPU time of the run's processes and the caller
};

double cpu_ms() {
  rusage self{}, children{};
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &children);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(self.ru_utime) + ms(self.ru_stime) + ms(children.ru_utime) + ms(children.ru_stime);
}

Figures measure(int runs, const std::function<bool()>& once) {
  std::vector<double> ms, cpu;
  ms.reserve(static_cast<std::size_t>(runs));
  for (int i = 0; i < runs + runs / 20; ++i) {
    const double c0 = cpu_ms();
    auto t0 = std::chrono::steady_clock::now();
    if (!once()) {
      std::fprintf(stderr, "a run failed\n");
      std::exit(1);
    }
    auto t1 = std::chrono::steady_clock::now();
    const double c1 = cpu_ms();
    if (i >= runs / 20) {  // the first 5% warm caches up
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      cpu.push_back(c1 - c0);
    }
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu.begin(), cpu.end());
  auto p99 = [](const std::vector<double>& v) {
    return v[std::min(v.size() - 1, v.size() * 99 / 100)];
  };
  Figures f;
  f.median_ms = ms[ms.size() / 2];
  f.p99_ms = p99(ms);
  f.cpu_median_ms = cpu[cpu.size() / 2];
  f.cpu_p99_ms = p99(cpu);
  return f;
}

void print(const char* name, const Figures& f) {
  std::printf("%-9s wall median %7.3f ms  p99 %7.3f ms   cpu median %7.3f ms  p99 %7.3f ms\n", name,
              f.median_ms, f.p99_ms, f.cpu_median_ms, f.cpu_p99_ms);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 1000;
  bool bwrap = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--no-bwrap")) {
      bwrap = false;
    } else {
      std::fprintf(stderr, "usage: bench_confine [--runs N] [--no-bwrap]\n");
      return 2;
    }
  }
  if (runs < 20) runs = 20;
  const confine::Support& support = confine::probe();
  if (!support.ok) {
    std::fprintf(stderr, "confinement unavailable: %s\n", support.error.c_str());
    return 1;
  }
  char dir[] = "/tmp/warden-bench-XXXXXX";
  if (!::mkdtemp(dir)) return 1;
  int cwd = ::open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

  ProcessSpec spec;
  spec.program = "/bin/true";
  spec.argv = {"/bin/true"};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd_fd = cwd;
  auto ok = [](const ProcessOutcome& o) { return o.started && o.exit_code == 0; };

  confine::Inputs in;
  in.workspace = dir;
  const confine::Envelope envelope = confine::derive({}, in);
  warden::EffectRecord host;
  host.kind = "network";
  host.object = "host";
  host.target = "example.com";
  const confine::Envelope networked = confine::derive({host}, in);

  std::printf("bench_confine: /bin/true, %d runs each (Landlock ABI %d, process cap %s)\n", runs,
              support.landlock_abi, support.pid_limit ? "pid_max" : "RLIMIT_NPROC");
  Figures plain = measure(runs, [&] { return ok(run_process(spec)); });
  print("plain", plain);
  Figures confined = measure(runs, [&] { return ok(confine::run(envelope, spec)); });
  print("confined", confined);
  Figures network = measure(runs, [&] { return ok(confine::run(networked, spec)); });
  print("network", network);
  if (bwrap && ::access("/usr/bin/bwrap", X_OK) == 0) {
    ProcessSpec b = spec;
    b.program = "/usr/bin/bwrap";
    b.argv = {"/usr/bin/bwrap",
              "--unshare-all",
              "--die-with-parent",
              "--new-session",
              "--ro-bind",
              "/",
              "/",
              "--proc",
              "/proc",
              "--dev",
              "/dev",
              "--tmpfs",
              "/tmp",
              "--tmpfs",
              "/home",
              "--bind",
              dir,
              dir,
              "/bin/true"};
    print("bwrap", measure(runs, [&] { return ok(run_process(b)); }));
  }
  std::printf(
      "added by confinement: wall median %.3f ms, p99 %.3f ms; cpu median %.3f ms (goal: median "
      "<= 5 ms)\n",
      confined.median_ms - plain.median_ms, confined.p99_ms - plain.p99_ms,
      confined.cpu_median_ms - plain.cpu_median_ms);
  ::close(cwd);
  ::rmdir(dir);
  return 0;
}
