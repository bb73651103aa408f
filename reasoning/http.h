// HttpPost: one blocking JSON POST through libcurl, for the model providers. No proxy from
// the environment, http and https only, no redirects, connect and total timeouts, a cap on
// the answer's size. Never throws; every failure is a value with its cause.
// Thread-safe (one curl easy handle per call).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace warden::reasoning {

struct HttpPost {
  std::string url;
  std::vector<std::pair<std::string, std::string>>
      headers;  // besides Content-Type: application/json
  std::string body;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds timeout{60000};
  std::size_t max_response_bytes = 4 << 20;
};

struct HttpResponse {
  bool completed = false;  // an HTTP answer was read in full (any status)
  int status = 0;          // 0 when no status line was read
  std::vector<std::pair<std::string, std::string>> headers;  // of the final answer
  std::string body;
  bool timed_out = false;  // the connect or total timeout ended the exchange
  bool too_large = false;  // the answer passed max_response_bytes
  bool not_sent = false;   // refused before sending (a header holding a line break)
  std::string error;       // when !completed: what went wrong ("Couldn't connect to server: …")
  // The first header with this name (case-insensitive), "" if absent.
  std::string header(const std::string& name) const;
};

HttpResponse http_post(const HttpPost& post);

// `text` with every occurrence of `secret` replaced by "[redacted]" (nothing when secret is "").
std::string redact(std::string text, const std::string& secret);

}  // namespace warden::reasoning
