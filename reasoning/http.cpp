#include "reasoning/http.h"

#include <curl/curl.h>

#include <algorithm>

#include "bindings/http_client.h"

namespace warden::reasoning {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(std::string s) {
  const char* space = " \t\r\n";
  s.erase(0, s.find_first_not_of(space));
  auto end = s.find_last_not_of(space);
  s.erase(end == std::string::npos ? 0 : end + 1);
  return s;
}

struct Exchange {
  HttpResponse* response;
  std::size_t cap;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  const size_t n = size * count;
  if (exchange->response->body.size() + n > exchange->cap) {
    exchange->response->too_large = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  exchange->response->body.append(data, n);
  return n;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  const size_t n = size * count;
  std::string line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    exchange->response->headers.clear();  // a new answer (after 100 Continue) starts over
    return n;
  }
  auto colon = line.find(':');
  if (colon != std::string::npos)
    exchange->response->headers.emplace_back(trim(line.substr(0, colon)),
                                             trim(line.substr(colon + 1)));
  return n;
}

}  // namespace

std::string HttpResponse::header(const std::string& name) const {
  const std::string wanted = lower(name);
  for (const auto& [k, v] : headers)
    if (lower(k) == wanted) return v;
  return {};
}

std::string redact(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
    text.replace(at, secret.size(), "[redacted]"), at += 10;
  return text;
}

HttpResponse http_post(const HttpPost& post) {
  http_client::global_init();
  HttpResponse response;
  CURL* curl = curl_easy_init();
  if (!curl) {
    response.error = "cannot create an HTTP client handle";
    return response;
  }
  Exchange exchange{&response, post.max_response_bytes};
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Accept: application/json");
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  for (const auto& [name, value] : post.headers) {
    const std::string line = name + ": " + value;
    if (line.find_first_of("\r\n", 0) != std::string::npos ||
        line.find('\0') != std::string::npos) {
      curl_slist_free_all(headers);
      curl_easy_cleanup(curl);
      response.not_sent = true;
      response.error = "header " + name + " holds a line break";
      return response;
    }
    headers = curl_slist_append(headers, line.c_str());
  }
  char error_buffer[CURL_ERROR_SIZE] = {0};
  http_client::harden(curl, error_buffer, post.connect_timeout, post.timeout);
  curl_easy_setopt(curl, CURLOPT_URL, post.url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post.body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(post.body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &exchange);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &exchange);
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(post.max_response_bytes));
  const CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  if (code == CURLE_OK) {
    response.completed = true;
  } else {
    response.timed_out = code == CURLE_OPERATION_TIMEDOUT;
    if (code == CURLE_FILESIZE_EXCEEDED) response.too_large = true;
    response.error = error_buffer[0] ? error_buffer : curl_easy_strerror(code);
    if (!response.error.empty() && response.error.back() == '\n') response.error.pop_back();
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return response;
}

}  // namespace warden::reasoning
