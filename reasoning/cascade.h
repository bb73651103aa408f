// Cascade: the providers in configured order, with cool-off, the model selector, 429
// retries, consensus and the budgets per session and per principal. ask() never throws;
// when every provider fails the result says "cascade failure" and names each provider's
// error.
// Thread-safe: one Cascade serves every session of the daemon.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "reasoning/config.h"
#include "reasoning/provider.h"
#include "reasoning/signal.h"

namespace warden::reasoning {

struct CascadeResult {
  enum class Status { Ok, AllFailed, BudgetSpent, Disagreement, NoProviders };
  Status status = Status::AllFailed;
  Answer answer;                // the answer used (Ok)
  std::vector<Answer> answers;  // every answer received, in order (consensus, failures)
  std::string message;   // for the user when not Ok: "cascade failure: a: HTTP 500; b: timeout …"
  double spent_usd = 0;  // the session's spending after this call
};

class Cascade {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  using Sleep = std::function<void(std::chrono::milliseconds)>;
  // normalize: proposal normal form of an answer for consensus (Think: parse_answer +
  // normalized_action). clock/sleep: injectable for tests (defaults: steady_clock, sleep_for).
  Cascade(std::vector<std::unique_ptr<Provider>> providers, ReasoningConfig config,
          std::function<std::string(const Answer&)> normalize, Clock clock = {}, Sleep sleep = {});
  CascadeResult ask(Request request, const Signal& signal);
  // Current order (names), cooled-off providers last: for status and tests.
  std::vector<std::string> order() const;
  // The spending of a session (key: principal + '\x1f' + session) and the current level of
  // a principal's budget (its spending, drained over the budget window).
  double spent(const std::string& session) const;
  double principal_spent(const std::string& principal) const;
  // Entries the spending tables hold (sessions, principals, turns): for tests of the bound.
  struct Tracked {
    std::size_t sessions = 0, principals = 0, turns = 0;
  };
  Tracked tracked() const;

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Spending {
    double usd = 0;
    TimePoint last{};  // the last charge or check (sessions); the level's time (principals)
  };
  void charge(const std::string& session, const std::string& principal, double usd);
  // mutex_ held:
  double drained(const Spending& s, TimePoint now) const;
  double principal_level(const std::string& principal, TimePoint now) const;
  void prune(TimePoint now);

  std::vector<std::unique_ptr<Provider>> providers_;
  ReasoningConfig config_;
  std::function<std::string(const Answer&)> normalize_;
  Clock clock_;
  Sleep sleep_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, TimePoint> cooled_until_;
  std::unordered_map<std::string, Spending> spent_;            // per session
  std::unordered_map<std::string, Spending> principal_spent_;  // per principal (leaky bucket)
  // With a budget, the asks of one session (of one principal, with a principal budget) take
  // turns, so concurrent asks cannot all pass the budget check before any of them is priced;
  // others are not held up. An entry lives while an ask holds it.
  std::unordered_map<std::string, std::shared_ptr<std::mutex>> turns_;
};

}  // namespace warden::reasoning
