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

double cost_of(const Answer& answer, const ProviderConfig& config) {
  return static_cast<double>(answer.usage.input_tokens) * config.price_input_per_mtok / 1e6 +
         static_cast<double>(answer.usage.output_tokens) * config.price_output_per_mtok / 1e6;
}

bool selector_matches(const SelectorRule& rule, const pipeline::Signal& signal) {
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
  return it == spent_.end() ? 0 : it->second;
}

CascadeResult Cascade::ask(Request request, const pipeline::Signal& signal) {
  CascadeResult result;
  if (providers_.empty()) {
    result.status = CascadeResult::Status::NoProviders;
    result.message = "no language-model provider is configured";
    return result;
  }
  if (request.session.empty()) request.session = signal.principal + '\x1f' + signal.session;
  const std::string session = request.session;
  const double budget = config_.budget_per_session_usd;
  auto budget_spent = [&]() {
    std::lock_guard lock(mutex_);
    result.spent_usd = spent_[session];
    return budget > 0 && result.spent_usd >= budget;
  };
  auto budget_result = [&]() {
    result.status = CascadeResult::Status::BudgetSpent;
    result.message = "the model budget of this session is spent (" + usd(result.spent_usd) +
                     " of " + usd(budget) + "); no more model calls in this session";
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
      {
        std::lock_guard lock(mutex_);
        spent_[session] += cost_of(answer, pc);
      }
      sleep_(answer.retry_after);
      answer = provider->complete(attempt);
    }
    if (answer.provider.empty()) answer.provider = pc.name;
    {
      std::lock_guard lock(mutex_);
      spent_[session] += cost_of(answer, pc);
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
