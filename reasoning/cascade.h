// Cascade: the providers in configured order, with cool-off, the model selector, 429
// retries, consensus and the per-session budget. ask() never throws; when every provider
// fails the result says "cascade failure" and names each provider's error.
// Thread-safe: one Cascade serves every session of the daemon.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "pipeline/signal.h"
#include "reasoning/config.h"
#include "reasoning/provider.h"

namespace warden::reasoning {

struct CascadeResult {
  enum class Status { Ok, AllFailed, BudgetSpent, Disagreement, NoProviders };
  Status status = Status::AllFailed;
  Answer answer;                 // the answer used (Ok)
  std::vector<Answer> answers;   // every answer received, in order (consensus, failures)
  std::string message;           // for the user when not Ok: "cascade failure: a: HTTP 500; b: timeout …"
  double spent_usd = 0;          // the session's spending after this call
};

class Cascade {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  using Sleep = std::function<void(std::chrono::milliseconds)>;
  // normalize: proposal normal form of an answer for consensus (Think: parse_answer +
  // normalized_action). clock/sleep: injectable for tests (defaults: steady_clock, sleep_for).
  Cascade(std::vector<std::unique_ptr<Provider>> providers, ReasoningConfig config,
          std::function<std::string(const Answer&)> normalize, Clock clock = {}, Sleep sleep = {});
  CascadeResult ask(Request request, const pipeline::Signal& signal);
  // Current order (names), cooled-off providers last: for status and tests.
  std::vector<std::string> order() const;
  double spent(const std::string& session) const;
 private:
  std::vector<std::unique_ptr<Provider>> providers_;
  ReasoningConfig config_;
  std::function<std::string(const Answer&)> normalize_;
  Clock clock_;
  Sleep sleep_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> cooled_until_;
  std::unordered_map<std::string, double> spent_;
  // With a budget, one session's asks take turns (so concurrent asks cannot all pass the
  // budget check before any of them is priced); other sessions are not held up.
  std::unordered_map<std::string, std::shared_ptr<std::mutex>> session_turns_;
};

}  // namespace warden::reasoning
