// EgressProxy: the one way out of a confined run's network namespace when its decision
// approved hosts. The keeper listens on the sandbox's loopback interface and hands the
// listening socket over (SCM_RIGHTS); the proxy, a thread of the caller, accepts there and
// serves HTTP CONNECT to exactly the approved hosts (any port), connecting from the daemon's
// network. Anything else — another host, an address the host does not resolve to publicly
// without `private-network`, a plain HTTP request — is answered 403 or 405 and closed.
// One proxy per run; start() and stop() from the same thread.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace warden::actuators::confine {

class EgressProxy {
 public:
  EgressProxy(std::vector<std::string> hosts, bool private_network)
      : hosts_(std::move(hosts)), private_network_(private_network) {}
  ~EgressProxy() { stop(); }
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;

  // Makes the channel: returns the end the keeper sends the listening socket on (-1 on
  // failure). Call before the keeper starts; close the returned end after it started.
  int channel();
  // Serves until stop(). Call after the keeper started.
  void start();
  void stop();

  // Whether a CONNECT to `host` may go out (exact, case-insensitive). Pure; for tests.
  bool allows(const std::string& host) const;

 private:
  void serve();
  void handle(int client);

  std::vector<std::string> hosts_;
  bool private_network_;
  int ours_ = -1, theirs_ = -1;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::vector<std::thread> connections_;
};

}  // namespace warden::actuators::confine
