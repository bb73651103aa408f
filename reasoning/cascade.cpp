// The cascade: asks the providers in order (cooled-off ones last, a selector's pick first),
// retries 429s within bounds, counts spending per session, and compares answers in
// consensus mode. One mutex guards the cool-off and spending tables; it is never held
// during a model call.
#include "reasoning/cascade.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstdio>
#include <thread>

namespace warden::reasoning {
namespace {

std::size_t utf8_chars(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string usd(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "$%.4f", value);
  return buffer;
}

// Never negative: a provider reporting negative usage must not refund the session.
double cost_of(const Answer& answer, const ProviderConfig& config) {
  const auto tokens = [](long long n) { return static_cast<double>(n < 0 ? 0 : n); };
  const double cost = tokens(answer.usage.input_tokens) * config.price_input_per_mtok / 1e6 +
                      tokens(answer.usage.output_tokens) * config.price_output_per_mtok / 1e6;
  return cost > 0 ? cost : 0;
}

bool selector_matches(const SelectorRule& rule, const Signal& signal) {
  if (!rule.sensor.empty() && rule.sensor != signal.sensor) return false;
  if (rule.min_chars > 0 && utf8_chars(signal.text) < rule.min_chars) return false;
  if (!rule.text_regex.empty()) {
    RE2 pattern(rule.text_regex, RE2::Quiet);
    if (!pattern.ok()) return false;  // check_config reports it at startup
    if (!RE2::PartialMatch(signal.text, pattern)) return false;
  }
  return true;
}

}  // namespace

Cascade::Cascade(std::vector<std::unique_ptr<Provider>> providers, ReasoningConfig config,
                 std::function<std::string(const Answer&)> normalize, Clock clock, Sleep sleep)
    : providers_(std::move(providers)),
      config_(std::move(config)),
      normalize_(std::move(normalize)),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })),
      sleep_(sleep ? std::move(sleep)
                   : Sleep([](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); })) {
  providers_.erase(std::remove(providers_.begin(), providers_.end(), nullptr), providers_.end());
}

std::vector<std::string> Cascade::order() const {
  std::lock_guard lock(mutex_);
  const auto now = clock_();
  std::vector<std::string> ready, cooling;
  for (const auto& p : providers_) {
    auto it = cooled_until_.find(p->config().name);
    (it != cooled_until_.end() && it->second > now ? cooling : ready).push_back(p->config().name);
  }
  ready.insert(ready.end(), cooling.begin(), cooling.end());
  return ready;
}

double Cascade::spent(const std::string& session) const {
  std::lock_guard lock(mutex_);
  auto it = spent_.find(session);
  return it == spent_.end() ? 0 : it->second.usd;
}

double Cascade::principal_spent(const std::string& principal) const {
  std::lock_guard lock(mutex_);
  return principal_level(principal, clock_());
}

Cascade::Tracked Cascade::tracked() const {
  std::lock_guard lock(mutex_);
  return Tracked{spent_.size(), principal_spent_.size(), turns_.size()};
}

// The level drains at budget per window from the time it was set; a window of 0 keeps
// nothing.
double Cascade::drained(const Spending& s, TimePoint now) const {
  if (now <= s.last) return s.usd;
  const double window = static_cast<double>(config_.budget_window.count());
  if (window <= 0) return 0;
  const double elapsed = std::chrono::duration<double>(now - s.last).count();
  return std::max(0.0, s.usd - elapsed * config_.budget_per_principal_usd / window);
}

double Cascade::principal_level(const std::string& principal, TimePoint now) const {
  auto it = principal_spent_.find(principal);
  return it == principal_spent_.end() ? 0 : drained(it->second, now);
}

void Cascade::charge(const std::string& session, const std::string& principal, double usd) {
  std::lock_guard lock(mutex_);
  const TimePoint now = clock_();
  prune(now);
  Spending& s = spent_[session];
  s.usd += usd;
  s.last = now;
  if (config_.budget_per_principal_usd > 0) {
    Spending& p = principal_spent_[principal];
    p.usd = drained(p, now) + usd;
    p.last = now;
  }
}

// Bounded memory: sessions idle for a budget window and drained principals are forgotten;
// past budget_max_entries, the least recently used go first.
void Cascade::prune(TimePoint now) {
  const auto window =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(config_.budget_window);
  for (auto it = spent_.begin(); it != spent_.end();)
    it = now - it->second.last >= window ? spent_.erase(it) : std::next(it);
  for (auto it = principal_spent_.begin(); it != principal_spent_.end();)
    it = drained(it->second, now) <= 0 ? principal_spent_.erase(it) : std::next(it);
  // Room for one more entry in each table.
  const std::size_t keep = config_.budget_max_entries > 0 ? config_.budget_max_entries - 1 : 0;
  for (auto* table : {&spent_, &principal_spent_}) {
    while (table->size() > keep) {
      auto oldest = std::min_element(
          table->begin(), table->end(),
          [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
      table->erase(oldest);
    }
  }
}

CascadeResult Cascade::ask(Request request, const Signal& signal) {
  CascadeResult result;
  if (providers_.empty()) {
    result.status = CascadeResult::Status::NoProviders;
    result.message = "no language-model provider is configured";
    return result;
  }
  if (request.session.empty()) request.session = signal.principal + '\x1f' + signal.session;
  const std::string session = request.session;
  const std::string& principal = signal.principal;
  const double budget = config_.budget_per_session_usd;
  const double principal_budget = config_.budget_per_principal_usd;
  // With a budget, asks take turns: per principal when the principal has a budget (its
  // sessions share it), else per session.
  std::shared_ptr<std::mutex> turn_slot;
  std::unique_lock<std::mutex> turn;
  const std::string turn_key =
      principal_budget > 0 ? std::string("p\x1f") + principal : std::string("s\x1f") + session;
  if (budget > 0 || principal_budget > 0) {
    {
      std::lock_guard lock(mutex_);
      auto& slot = turns_[turn_key];
      if (!slot) slot = std::make_shared<std::mutex>();
      turn_slot = slot;
    }
    turn = std::unique_lock<std::mutex>(*turn_slot);
  }
  // Releases the turn, and forgets it when no other ask holds or waits for it.
  struct TurnRelease {
    Cascade* self;
    std::shared_ptr<std::mutex>* slot;
    std::unique_lock<std::mutex>* turn;
    const std::string* key;
    ~TurnRelease() {
      if (!*slot) return;
      if (turn->owns_lock()) turn->unlock();
      slot->reset();
      std::lock_guard lock(self->mutex_);
      auto it = self->turns_.find(*key);
      if (it != self->turns_.end() && it->second.use_count() == 1) self->turns_.erase(it);
    }
  } release{this, &turn_slot, &turn, &turn_key};
  double principal_level_usd = 0;
  auto budget_spent = [&]() {
    std::lock_guard lock(mutex_);
    auto it = spent_.find(session);
    result.spent_usd = it == spent_.end() ? 0 : it->second.usd;
    if (it != spent_.end()) it->second.last = clock_();
    if (budget > 0 && result.spent_usd >= budget) return true;
    if (principal_budget > 0) {
      principal_level_usd = principal_level(principal, clock_());
      return principal_level_usd >= principal_budget;
    }
    return false;
  };
  auto budget_result = [&]() {
    result.status = CascadeResult::Status::BudgetSpent;
    if (budget > 0 && result.spent_usd >= budget)
      result.message = "the model budget of this session is spent (" + usd(result.spent_usd) +
                       " of " + usd(budget) + "); no more model calls in this session";
    else
      result.message = "the model budget of principal " + principal + " is spent (" +
                       usd(principal_level_usd) + " of " + usd(principal_budget) + " per " +
                       std::to_string(config_.budget_window.count()) +
                       " s); no more model calls for this principal until it drains";
    return result;
  };
  if (budget_spent()) return budget_result();

  // The order for this request: the selector's provider first (with its model).
  std::vector<Provider*> order;
  for (const std::string& name : this->order())
    for (const auto& p : providers_)
      if (p->config().name == name) order.push_back(p.get());
  std::string selected_model;
  Provider* selected = nullptr;
  for (const SelectorRule& rule : config_.selector) {
    if (!selector_matches(rule, signal)) continue;
    auto it = std::find_if(order.begin(), order.end(),
                           [&](Provider* p) { return p->config().name == rule.provider; });
    if (it == order.end()) continue;
    selected = *it;
    selected_model = rule.model;
    order.erase(it);
    order.insert(order.begin(), selected);
    break;
  }

  const std::size_t wanted =
      config_.consensus >= 2 ? static_cast<std::size_t>(config_.consensus) : 1;
  std::vector<Answer> good;
  std::string failures;
  for (Provider* provider : order) {
    if (budget_spent()) return budget_result();
    const ProviderConfig& pc = provider->config();
    Request attempt = request;
    if (provider == selected && !selected_model.empty() && attempt.model.empty())
      attempt.model = selected_model;
    Answer answer = provider->complete(attempt);
    for (int retries = 0; !answer.ok && answer.retry_later && retries < pc.max_retries_429 &&
                          answer.retry_after <= pc.retry_after_max;
         ++retries) {
      charge(session, principal, cost_of(answer, pc));
      sleep_(answer.retry_after);
      answer = provider->complete(attempt);
    }
    if (answer.provider.empty()) answer.provider = pc.name;
    charge(session, principal, cost_of(answer, pc));
    {
      std::lock_guard lock(mutex_);
      if (answer.ok)
        cooled_until_.erase(pc.name);
      else
        cooled_until_[pc.name] = clock_() + config_.cool_off;
    }
    result.answers.push_back(answer);
    if (!answer.ok) {
      std::string error = answer.error;
      if (answer.retry_later && answer.retry_after > pc.retry_after_max)
        error += " (Retry-After " + std::to_string(answer.retry_after.count() / 1000) +
                 " s is longer than " + std::to_string(pc.retry_after_max.count()) + " ms)";
      failures += (failures.empty() ? "" : "; ") + pc.name + ": " + error;
      continue;
    }
    good.push_back(answer);
    if (good.size() >= wanted) break;
  }
  result.spent_usd = spent(session);

  if (good.size() < wanted) {
    result.status = CascadeResult::Status::AllFailed;
    if (wanted > 1)
      result.message = "cascade failure: consensus needs " + std::to_string(wanted) + " answers, " +
                       std::to_string(good.size()) + " received" +
                       (failures.empty() ? "" : ": " + failures);
    else
      result.message = "cascade failure: " + failures;
    return result;
  }
  if (wanted == 1) {
    result.status = CascadeResult::Status::Ok;
    result.answer = good.front();
    return result;
  }
  std::vector<std::string> forms;
  for (const Answer& answer : good) forms.push_back(normalize_ ? normalize_(answer) : answer.text);
  if (std::all_of(forms.begin(), forms.end(),
                  [&](const std::string& f) { return f == forms.front(); })) {
    result.status = CascadeResult::Status::Ok;
    result.answer = good.front();
    return result;
  }
  result.status = CascadeResult::Status::Disagreement;
  result.message = "the models disagree, nothing is proposed:";
  for (std::size_t i = 0; i < good.size(); ++i)
    result.message += (i ? "; " : " ") + good[i].provider + " proposes " + forms[i];
  return result;
}

}  // namespace warden::reasoning
