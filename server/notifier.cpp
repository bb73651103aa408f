#include "server/notifier.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <openssl/rand.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <vector>

#include "audit/mask.h"
#include "bindings/http_client.h"
#include "bindings/json.h"
#include "bindings/text.h"

namespace warden::server {

namespace {

// Bounds on what one event shows, in bytes of text after control characters are made visible:
// the action (a chat message must stay readable, and within what chat tools accept: Slack
// 40,000 characters, Mattermost 16,383, Google Chat 32,000 bytes), and each other text.
constexpr std::size_t kMaxAction = 1500;
constexpr std::size_t kMaxText = 300;
constexpr std::size_t kMaxName = 128;
constexpr std::size_t kMaxResponseKept = 200;  // of a webhook's error answer, for the log
constexpr long kPollMs = 1000;

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The length of the UTF-8 sequence at s[i] and its code point; 0 when it is not UTF-8.
std::size_t utf8_at(std::string_view s, std::size_t i, char32_t* cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = 0;
  char32_t v = 0;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    v = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    v = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    v = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(i + k) & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

// Characters that change how text around them reads: bidirectional formatting, invisible
// separators and joiners, line and paragraph separators.
bool invisible(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

// `text` with every control character visible: \n \r \t, else \xNN for C0, DEL and bytes
// that are not UTF-8, \uNNNN for C1, bidi, zero-width and separator characters. One line that
// cannot be re-ordered, split or hidden in a chat message.
std::string visible(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t n = utf8_at(text, i, &cp);
    if (n == 0) {
      const auto c = static_cast<unsigned char>(text[i]);
      out += "\\x";
      warden::text::append_hex(out, c);
      ++i;
      continue;
    }
    if (cp < 0x20 || cp == 0x7F) {
      if (cp == '\n') {
        out += "\\n";
      } else if (cp == '\r') {
        out += "\\r";
      } else if (cp == '\t') {
        out += "\\t";
      } else {
        out += "\\x";
        warden::text::append_hex(out, static_cast<unsigned char>(cp));
      }
    } else if (invisible(cp)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += warden::text::hex_digit(cp >> shift);
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

// At most `limit` bytes of `text`, cut on a character boundary; *cut says whether it was.
std::string bounded(std::string text, std::size_t limit, bool* cut = nullptr) {
  if (cut) *cut = text.size() > limit;
  if (text.size() <= limit) return text;
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  const std::size_t all = text.size();
  text.resize(end);
  text += "… [" + std::to_string(all - end) + " more bytes]";
  return text;
}

// Visible and bounded: how every text from a request appears.
std::string shown(std::string_view text, std::size_t limit) {
  return bounded(visible(text), limit);
}

// Text for a Slack-compatible message: & < > escaped as Slack asks (so no text can become a
// link, a <!channel> mention or a user mention; Mattermost reads the same), and runs of
// backticks broken by a zero-width space (no text closes the code block it is shown in).
// Outside a code block (in_code false) a mention word (@channel, @here, @someone at the start
// of a word) is broken the same way; inside one chat tools do not mention, and the command is
// shown as it is.
std::string slack_escaped(std::string_view text, bool in_code = false) {
  static constexpr char kZeroWidthSpace[] = "\xE2\x80\x8B";
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '@') {
      const bool word_start = i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) ||
                                          std::strchr("._%+-", text[i - 1]) != nullptr);
      out += c;
      if (word_start && !in_code) out += kZeroWidthSpace;
    } else if (c == '`') {
      out += c;
      if (i + 1 < text.size() && text[i + 1] == '`') out += kZeroWidthSpace;
    } else {
      out += c;
    }
  }
  return out;
}

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// Masks what the audit log masks (audit::Masker: known token formats, passwords in URLs and
// on command lines, Authorization headers) and Warden's own secrets: tokens ("wdn_…") and
// approval tokens ("wapr_…"), whatever their length.
void mask_all(std::string* text, const audit::Masker& masker) {
  masker.mask_text(text, "", nullptr);
  for (const std::string_view prefix : {std::string_view("wdn_"), std::string_view("wapr_")}) {
    for (std::size_t at = text->find(prefix); at != std::string::npos;
         at = text->find(prefix, at + 1)) {
      if (at > 0 && word_char((*text)[at - 1])) continue;
      std::size_t end = at + prefix.size();
      while (end < text->size() && word_char((*text)[end])) ++end;
      const std::size_t length = end - at - prefix.size();
      if (length < 4) continue;
      const std::string secret = text->substr(at + prefix.size(), length);
      std::string masked = masker.mask_secret(secret, "warden-token");
      if (masked.size() != length) masked = std::string(length, '*');
      text->replace(at + prefix.size(), length, masked);
    }
  }
}

// Every string (and member name) of a JSON value masked; strings longer than `limit` bytes
// (0: any length) bounded.
void mask_value(rapidjson::Value& v, rapidjson::Document::AllocatorType& a,
                const audit::Masker& masker, std::size_t limit) {
  if (v.IsString()) {
    std::string s(v.GetString(), v.GetStringLength());
    mask_all(&s, masker);
    if (limit) s = shown(s, limit);
    v.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
  } else if (v.IsArray()) {
    for (auto& item : v.GetArray()) mask_value(item, a, masker, limit);
  } else if (v.IsObject()) {
    for (auto& m : v.GetObject()) {
      mask_value(m.name, a, masker, limit);
      mask_value(m.value, a, masker, limit);
    }
  }
}

std::string masked(std::string_view text, const audit::Masker& masker) {
  std::string s(text);
  mask_all(&s, masker);
  return s;
}

// "2025-06-01 12:00:00 UTC"
std::string utc(std::int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  if (!gmtime_r(&t, &tm)) return std::to_string(ms);
  char buffer[40];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buffer;
}

// The store's status an event leaves an approval in.
std::string_view status_after(std::string_view event) {
  if (event == "created") return "pending";
  return event;
}

struct Transfer {
  std::string response;  // the first bytes of the answer's body
  std::string retry_after;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->response.size() < kMaxResponseKept) {
    t->response.append(data, std::min(n, kMaxResponseKept - t->response.size()));
  }
  return n;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  std::string_view line(data, n);
  if (line.size() > 12 && lower(line.substr(0, 12)) == "retry-after:") {
    std::string value(line.substr(12));
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t\r\n") + 1);
    t->retry_after = value;
  }
  return n;
}

}  // namespace

bool is_notify_event(std::string_view name) {
  return std::find(kNotifyEvents.begin(), kNotifyEvents.end(), name) != kNotifyEvents.end();
}

std::string notify_url_problem(std::string_view url) {
  static constexpr char kWhich[] =
      "must be an https:// URL, or http:// to a loopback address (127.0.0.1, [::1], localhost)";
  if (url.find_first_of(" \t\r\n") != std::string_view::npos ||
      url.find('\0') != std::string_view::npos) {
    return std::string("is not a URL (it holds white space): it ") + kWhich;
  }
  CURLU* u = curl_url();
  if (!u) return "cannot be parsed (out of memory)";
  std::string scheme, host;
  const std::string text(url);
  if (curl_url_set(u, CURLUPART_URL, text.c_str(), 0) == CURLUE_OK) {
    char* part = nullptr;
    if (curl_url_get(u, CURLUPART_SCHEME, &part, 0) == CURLUE_OK && part) scheme = lower(part);
    curl_free(part);
    part = nullptr;
    if (curl_url_get(u, CURLUPART_HOST, &part, 0) == CURLUE_OK && part) host = lower(part);
    curl_free(part);
  }
  curl_url_cleanup(u);
  if (scheme.empty() || host.empty()) return std::string("is not an absolute URL: it ") + kWhich;
  if (scheme == "https") return {};
  if (scheme != "http") return std::string(kWhich) + ", not " + scheme + "://";
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    host = host.substr(0, host.find('%'));  // a zone id
  }
  bool loopback = host == "localhost";
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    loopback = (ntohl(v4.s_addr) >> 24) == 127;
  } else if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    loopback = IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  }
  if (!loopback) {
    return "plain http:// is allowed only to a loopback address (127.0.0.1, [::1], "
           "localhost), not to " +
           host +
           ": what the webhook carries (the actions waiting for approval) must not cross a "
           "network in the clear; use https://";
  }
  return {};
}

Notifier::Notifier(NotifyConfig config, std::string url, Logger log, const audit::Masker* masker,
                   std::string daemon_id)
    : config_(std::move(config)),
      url_(std::move(url)),
      log_(std::move(log)),
      masker_(masker),
      daemon_id_(std::move(daemon_id)) {
  if (!masker_) {
    std::string key(32, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), 32) != 1) {
      throw std::runtime_error("approvals.notify: no random key for masking secrets (OpenSSL)");
    }
    own_masker_ = std::make_unique<audit::Masker>(std::move(key));
    masker_ = own_masker_.get();
  }
  // scheme://host[:port] only: the path and query of a chat webhook are its credential.
  if (CURLU* u = curl_url()) {
    if (curl_url_set(u, CURLUPART_URL, url_.c_str(), 0) == CURLUE_OK) {
      char *scheme = nullptr, *host = nullptr, *port = nullptr;
      curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
      curl_url_get(u, CURLUPART_HOST, &host, 0);
      curl_url_get(u, CURLUPART_PORT, &port, 0);
      if (scheme && host) {
        where_ = std::string(scheme) + "://" + host + (port ? std::string(":") + port : "");
      }
      curl_free(scheme);
      curl_free(host);
      curl_free(port);
    }
    curl_url_cleanup(u);
  }
  if (where_.empty()) where_ = "(the webhook)";
}

Notifier::~Notifier() { stop(); }

std::string Notifier::start() {
  if (std::string problem = notify_url_problem(url_); !problem.empty()) {
    return "approvals.notify: the webhook URL " + problem;
  }
  http_client::global_init();
  multi_ = curl_multi_init();
  if (!multi_) return "approvals.notify: cannot create an HTTP client (libcurl)";
  try {
    std::lock_guard lock(mutex_);
    thread_ = std::thread([this] { run(); });
    started_ = true;
  } catch (const std::exception& e) {
    curl_multi_cleanup(static_cast<CURLM*>(multi_));
    multi_ = nullptr;
    return std::string("approvals.notify: cannot start its thread: ") + e.what();
  }
  return {};
}

void Notifier::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  abort_ = true;
  if (multi_) curl_multi_wakeup(static_cast<CURLM*>(multi_));
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (multi_) {
    curl_multi_cleanup(static_cast<CURLM*>(multi_));
    multi_ = nullptr;
  }
  std::size_t left = 0;
  {
    std::lock_guard lock(mutex_);
    left = queue_.size();
    counts_.dropped += left;
    counts_.queued = 0;
    queue_.clear();
  }
  if (left) {
    log_->warn("notify: {} approval event(s) not posted to {}: the daemon is stopping", left,
               where_);
  }
  drops_.flush(log_);
}

bool Notifier::notify(std::string_view event, const approvals::Approval& approval,
                      std::string_view by, std::string_view note, std::string_view result_json) {
  const std::string_view name = event == "granted" ? std::string_view("executed") : event;
  if (!is_notify_event(name)) return false;
  if (std::find(config_.events.begin(), config_.events.end(), name) == config_.events.end()) {
    return false;
  }
  Event e{std::string(name),
          approval,
          std::string(by),
          std::string(note),
          std::string(result_json),
          std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::system_clock::now().time_since_epoch())
              .count()};
  std::optional<Event> dropped;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !started_) return false;
    if (queue_.size() >= config_.max_queue) {
      dropped = std::move(queue_.front());
      queue_.pop_front();
      ++counts_.dropped;
    }
    queue_.push_back(std::move(e));
    counts_.queued = queue_.size();
  }
  wake_.notify_one();
  if (dropped) {
    drops_.log(log_, spdlog::level::warn, "notify-queue-full",
               "notify: " + std::to_string(config_.max_queue) +
                   " approval events wait to be posted to " + where_ + ": the oldest (" +
                   dropped->event + " of " + dropped->approval.id + ") is dropped unsent");
  }
  return true;
}

Notifier::Counts Notifier::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

void Notifier::run() {
  for (;;) {
    Event e;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      e = std::move(queue_.front());
      queue_.pop_front();
      counts_.queued = queue_.size();
    }
    std::string text;
    try {
      text = body(e);
    } catch (const std::exception& ex) {
      // Never sent unmasked: not sent.
      const std::string error = std::string("the event could not be rendered: ") + ex.what();
      {
        std::lock_guard lock(mutex_);
        ++counts_.failed;
        counts_.last_error = error;
      }
      log_->error("notify: {} of {} not posted: {}", e.event, e.approval.id, error);
      continue;
    }
    deliver(e, text);
  }
}

// The lock guards the counts and the queue only: nothing waits on the network or the log
// while holding it, so notify() never does either.
void Notifier::deliver(const Event& e, const std::string& text) {
  std::chrono::milliseconds delay = config_.backoff;
  for (int attempt = 1;; ++attempt) {
    bool retryable = false;
    std::chrono::milliseconds retry_after{0};
    const std::string error = post(text, &retryable, &retry_after);
    const bool last = !retryable || attempt >= config_.max_attempts;
    {
      std::lock_guard lock(mutex_);
      if (error.empty()) {
        ++counts_.sent;
      } else if (stopping_) {
        ++counts_.dropped;
        return;
      } else {
        counts_.last_error = error;
        ++(last ? counts_.failed : counts_.retried);
      }
    }
    if (error.empty()) {
      log_->debug("notify: {} of {} posted to {}", e.event, e.approval.id, where_);
      return;
    }
    if (last) {
      log_->error("notify: {} of {} not posted to {}: {}{}", e.event, e.approval.id, where_, error,
                  retryable ? " (" + std::to_string(attempt) + " attempts)"
                            : std::string(" (not retried)"));
      return;
    }
    const std::chrono::milliseconds wait =
        std::min(std::max(delay, retry_after), config_.backoff_max);
    log_->warn("notify: {} of {}: attempt {} of {} to {} failed: {}; again in {} ms", e.event,
               e.approval.id, attempt, config_.max_attempts, where_, error, wait.count());
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_for(lock, wait, [this] { return stopping_; })) {
        ++counts_.dropped;
        return;
      }
    }
    delay = std::min(delay * 2, config_.backoff_max);
  }
}

std::string Notifier::post(const std::string& text, bool* retryable,
                           std::chrono::milliseconds* retry_after) {
  *retryable = false;
  CURL* curl = curl_easy_init();
  if (!curl) {
    *retryable = true;
    return "cannot create an HTTP request (libcurl)";
  }
  Transfer transfer;
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json; charset=utf-8");
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  char error_buffer[CURL_ERROR_SIZE] = {0};
  http_client::harden(curl, error_buffer, config_.timeout, config_.timeout);
  curl_easy_setopt(curl, CURLOPT_URL, url_.c_str());
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "warden (approval notifications)");
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, text.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(text.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);

  auto* multi = static_cast<CURLM*>(multi_);
  CURLcode code = CURLE_OK;
  bool aborted = false;
  if (curl_multi_add_handle(multi, curl) != CURLM_OK) {
    code = CURLE_FAILED_INIT;
  } else {
    for (;;) {
      int running = 0;
      if (curl_multi_perform(multi, &running) != CURLM_OK) {
        code = CURLE_FAILED_INIT;
        break;
      }
      if (running == 0) {
        int left = 0;
        code = CURLE_FAILED_INIT;
        while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
          if (m->msg == CURLMSG_DONE && m->easy_handle == curl) code = m->data.result;
        }
        break;
      }
      // stop() wakes this poll (curl_multi_wakeup): a transfer never holds up a shutdown.
      if (abort_) {
        aborted = true;
        break;
      }
      curl_multi_poll(multi, nullptr, 0, kPollMs, nullptr);
      if (abort_) {
        aborted = true;
        break;
      }
    }
    curl_multi_remove_handle(multi, curl);
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);

  if (aborted) return "stopped: the daemon is shutting down";
  if (code != CURLE_OK) {
    std::string error = error_buffer[0] ? error_buffer : curl_easy_strerror(code);
    while (!error.empty() && (error.back() == '\n' || error.back() == '\r')) error.pop_back();
    // A URL libcurl refuses will not improve; anything else (no connection, a timeout, TLS)
    // may.
    *retryable = code != CURLE_URL_MALFORMAT && code != CURLE_UNSUPPORTED_PROTOCOL;
    return shown(error, kMaxText);
  }
  if (status >= 200 && status < 300) return {};
  *retryable = status == 429 || status >= 500;
  if (!transfer.retry_after.empty() && *retryable) {
    // Retry-After in seconds (an HTTP date is read as nothing: the backoff applies).
    char* end = nullptr;
    const long seconds = std::strtol(transfer.retry_after.c_str(), &end, 10);
    if (end && *end == '\0' && seconds > 0) {
      *retry_after = std::chrono::milliseconds(std::min<long>(seconds, 86400) * 1000);
    }
  }
  std::string error = "the webhook answered " + std::to_string(status);
  if (status >= 300 && status < 400)
    error += " (redirects are not followed: configure the URL it names)";
  if (!transfer.response.empty()) error += ": " + shown(transfer.response, kMaxResponseKept);
  return error;
}

std::string Notifier::body(const Event& e) const {
  const approvals::Approval& a = e.approval;
  const audit::Masker& masker = *masker_;

  // The action as it will run: the stored action, masked, one line, bounded.
  std::string action;
  bool action_cut = false;
  {
    // The approval store's action: the daemon's own text.
    rapidjson::Document d;
    if (!warden::json::parse_stored(a.action_json, &d)) {
      mask_value(d, d.GetAllocator(), masker, 0);
      action = warden::json::to_text(d);
    } else {
      action = masked(a.action_json, masker);
    }
    action = bounded(visible(action), kMaxAction, &action_cut);
  }
  // What happened, for executed and refused: the recorded result (never an action's output).
  rapidjson::Document result;
  if (!e.result_json.empty()) {
    if (warden::json::parse_stored(e.result_json, &result) || !result.IsObject()) {
      result.SetNull();
    } else {
      mask_value(result, result.GetAllocator(), masker, kMaxText);
    }
  }
  auto text = [&](std::string_view s, std::size_t limit = kMaxText) {
    return shown(masked(s, masker), limit);
  };
  std::vector<std::string> approvers;
  for (const approvals::Vote& v : a.votes) approvers.push_back(text(v.approver, kMaxName));
  std::string rules;
  for (const std::string& r : a.rules) rules += (rules.empty() ? "" : ", ") + r;
  const std::string by = text(e.by, kMaxName);
  const std::string note = text(e.note);
  const std::string reason = text(a.reason);
  const std::string principal = text(a.principal, kMaxName);
  const std::string agent = text(a.agent, kMaxName);
  const std::string session = text(a.session, kMaxName);
  const std::string id = text(a.id, kMaxName);
  const std::string rules_text = text(rules);
  const bool decide = a.origin != "submit";

  // The headline: what happened, in words.
  std::string headline = "Warden: ";
  if (e.event == "created") {
    headline += "approval needed (" + id + ")";
  } else if (e.event == "approved") {
    headline += "approval " + id + " approved by " + by;
  } else if (e.event == "denied") {
    headline += "approval " + id + " denied by " + by;
  } else if (e.event == "expired") {
    headline += "approval " + id + " expired unanswered";
  } else if (e.event == "executed") {
    if (decide) {
      headline += "approval " + id + " granted: " + principal + "'s session may run it";
    } else {
      const bool ok = result.IsObject() && result.HasMember("ok") && result["ok"].IsBool() &&
                      result["ok"].GetBool();
      headline += "approval " + id +
                  (ok ? " carried out: the action ran" : " carried out: the action ran and failed");
      if (result.IsObject() && result.HasMember("exit_code") && result["exit_code"].IsInt()) {
        headline += " (exit " + std::to_string(result["exit_code"].GetInt()) + ")";
      }
    }
  } else if (e.event == "refused") {
    const std::string why = warden::json::string_member(result, "reason");
    headline += "approval " + id + " approved, but not run" + (why.empty() ? "" : ": " + why);
  }

  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  auto str = [&w](std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  if (config_.format == "slack") {
    // One message for a chat tool's incoming webhook: {"text": …}, nothing else (Google
    // Chat refuses unknown members).
    std::string m = slack_escaped(headline) + "\n";
    m += "Requested by " + slack_escaped(principal);
    if (!agent.empty()) m += ", agent " + slack_escaped(agent);
    if (!session.empty()) m += ", session " + slack_escaped(session);
    m += " (" + std::string(decide ? "decide" : "submit") + ")\n";
    m += "```\n" + slack_escaped(action, true) + "\n```\n";
    if (!rules_text.empty()) m += "Rules: " + slack_escaped(rules_text) + "\n";
    if (!reason.empty()) m += "Reason: " + slack_escaped(reason) + "\n";
    m += "Digest: " + slack_escaped(text(a.action_hash, kMaxName)) + "\n";
    if (!note.empty()) m += "Note: " + slack_escaped(note) + "\n";
    if (e.event == "created") {
      m += "Needs " + std::to_string(a.approvers_needed) +
           (a.approvers_needed == 1 ? " approver" : " distinct approvers") + ", expires " +
           utc(a.expires_ms) + "\n";
      m += "Answer: warden approve " + slack_escaped(id) + "   or   warden deny " +
           slack_escaped(id);
    } else {
      m += "Status: " + std::string(status_after(e.event));
    }
    w.StartObject();
    w.Key("text");
    str(m);
    w.EndObject();
    return std::string(buffer.GetString(), buffer.GetSize());
  }
  // "json": the event as a structured object.
  w.StartObject();
  w.Key("event");
  str(e.event);
  w.Key("summary");
  str(headline);
  w.Key("time_ms");
  w.Int64(e.at_ms);
  w.Key("daemon_id");
  str(daemon_id_);
  w.Key("approval");
  w.StartObject();
  w.Key("id");
  str(id);
  w.Key("status");
  str(status_after(e.event));
  w.Key("action");
  str(action);
  w.Key("action_truncated");
  w.Bool(action_cut);
  w.Key("action_hash");
  str(text(a.action_hash, kMaxName));
  w.Key("principal");
  str(principal);
  w.Key("agent");
  str(agent);
  w.Key("session");
  str(session);
  w.Key("origin");
  str(decide ? "decide" : "submit");
  w.Key("rules");
  w.StartArray();
  for (const std::string& r : a.rules) str(text(r, kMaxName));
  w.EndArray();
  w.Key("reason");
  str(reason);
  w.Key("created_ms");
  w.Int64(a.created_ms);
  w.Key("expires_ms");
  w.Int64(a.expires_ms);
  w.Key("approvers_needed");
  w.Int(a.approvers_needed);
  w.Key("approvers");
  w.StartArray();
  for (const std::string& name : approvers) str(name);
  w.EndArray();
  w.Key("by");
  str(by);
  w.Key("note");
  str(note);
  w.Key("result");
  result.Accept(w);
  w.Key("asked_on");
  str(text(a.daemon_id, kMaxName));
  w.EndObject();
  w.Key("answer");
  str(e.event == "created" ? "warden approve " + id : std::string());
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace warden::server
