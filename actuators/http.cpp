#include "actuators/http.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "actuators/action.h"
#include "bindings/http_client.h"
#include "bindings/ip_address.h"
#include "bindings/json.h"
#include "bindings/text.h"
#include "bindings/urls.h"

namespace warden::actuators {
namespace {

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// What one request collects: the capped body and the addresses refused before connecting.
struct Exchange {
  std::size_t cap = 0;
  std::string body;
  bool truncated = false;
  bool private_allowed = false;
  std::string url_ip;  // the URL's host when it is an IP literal (canonical), as the rules saw it
  std::vector<std::string> refused;  // "127.0.0.1 (loopback)"
  std::string content_type;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const std::size_t n = size * count;
  const std::size_t room = x->cap > x->body.size() ? x->cap - x->body.size() : 0;
  if (n > room) {
    x->body.append(data, room);
    x->truncated = true;
    return 0;  // stop the transfer: the cap is reached
  }
  x->body.append(data, n);
  return n;
}

// The address about to be connected to, checked by class: the name may have resolved to
// something else than the rules could see.
curl_socket_t open_checked_socket(void* user, curlsocktype purpose, struct curl_sockaddr* address) {
  auto* x = static_cast<Exchange*>(user);
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
  char text[INET6_ADDRSTRLEN] = {0};
  if (address->family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&address->addr);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
  } else if (address->family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address->addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
  } else {
    x->refused.push_back("an address of family " + std::to_string(address->family));
    return CURL_SOCKET_BAD;
  }
  ip::Address parsed = ip::parse(text);
  std::string kind = parsed.valid ? ip::classify(parsed.text) : "unknown";
  // private-network grants private addresses, not the metadata endpoint: that one is reached
  // only when the URL names it, so the rules saw it.
  const bool metadata_unseen = kind == "metadata" && parsed.text != x->url_ip;
  if (kind != "public" && (!x->private_allowed || metadata_unseen)) {
    x->refused.push_back((parsed.valid ? parsed.text : std::string(text)) + " (" + kind + ")");
    return CURL_SOCKET_BAD;
  }
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

bool header_name_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

HttpActuator::HttpActuator(HttpConfig config, bool silent)
    : config_(std::move(config)), silent_(silent) {
  http_client::global_init();
}

std::string HttpActuator::description() const {
  return "Sends one HTTP or HTTPS request and returns the status and the response body (capped). "
         "Redirects are not followed; private and loopback addresses need a rule that allows them.";
}

std::string HttpActuator::payload_schema_json() const {
  return R"({"type":"object","properties":{)"
         R"("url":{"type":"string","description":"http or https URL"},)"
         R"("method":{"type":"string","enum":["GET","HEAD","POST","PUT","PATCH","DELETE","OPTIONS"]},)"
         R"("headers":{"type":"object","additionalProperties":{"type":"string"}},)"
         R"("body":{"description":"request body: a string, or JSON sent as application/json"}},)"
         R"("required":["url"]})";
}

Result HttpActuator::act(std::string_view action_json, const Context& context) {
  ActionDoc doc(action_json);
  if (!doc.ok()) return failure(code::kBadAction, doc.error());
  std::string error;
  std::optional<std::string> url_text = doc.text("url", &error);
  if (!error.empty()) return failure(code::kBadAction, error);
  if (!url_text || url_text->empty()) return failure(code::kBadAction, "payload.url is missing");
  urls::Url url = urls::parse(*url_text);
  if (!url.valid) return failure(code::kBadAction, "payload.url is not a valid URL: " + url.error);
  if (url.scheme != "http" && url.scheme != "https")
    return failure(code::kDenied, "scheme \"" + url.scheme + "\" is not http or https");

  // Method: payload.method, else a top-level action naming a method, else GET.
  static constexpr std::string_view kMethods[] = {"GET",   "HEAD",   "POST",   "PUT",
                                                  "PATCH", "DELETE", "OPTIONS"};
  auto is_method = [](const std::string& m) {
    for (auto k : kMethods)
      if (m == k) return true;
    return false;
  };
  std::optional<std::string> method_field = doc.text("method", &error);
  if (!error.empty()) return failure(code::kBadAction, error);
  const std::string top = upper(doc.action());
  std::string method = method_field ? upper(*method_field) : (is_method(top) ? top : "GET");
  if (!is_method(method))
    return failure(code::kBadAction, "method \"" + method + "\" is not supported");
  if (method_field && is_method(top) && top != method)
    return failure(code::kBadAction,
                   "action \"" + top + "\" and payload.method \"" + method + "\" disagree");

  // Headers: an object of strings; names are tokens, values hold no CR, LF or NUL.
  std::unique_ptr<curl_slist, CurlDeleter> headers;
  auto add_header = [&](const std::string& line) {
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    if (next) {
      headers.release();
      headers.reset(next);
    }
    return next != nullptr;
  };
  bool has_content_type = false;
  if (const rapidjson::Value* h = ActionDoc::member(doc.payload(), "headers")) {
    if (!h->IsObject()) return failure(code::kBadAction, "payload.headers is not an object");
    for (auto it = h->MemberBegin(); it != h->MemberEnd(); ++it) {
      std::string name(it->name.GetString(), it->name.GetStringLength());
      if (name.empty()) return failure(code::kBadAction, "an empty header name");
      if (!text::is_http_token(name))
        return failure(code::kBadAction,
                       "header name \"" + name + "\" holds a character not allowed there");
      if (!it->value.IsString())
        return failure(code::kBadAction, "header \"" + name + "\" is not a string");
      std::string value(it->value.GetString(), it->value.GetStringLength());
      if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos)
        return failure(code::kBadAction, "header \"" + name + "\" holds CR, LF or NUL");
      for (const char* framing :
           {"host", "content-length", "transfer-encoding", "connection", "expect"})
        if (header_name_equal(name, framing))
          return failure(code::kBadAction,
                         "header \"" + name + "\" is set by the client, not the action");
      if (header_name_equal(name, "content-type")) has_content_type = true;
      // "Name;" sends an empty value (libcurl reads "Name:" as "remove the header").
      if (!add_header(value.empty() ? name + ";" : name + ": " + value))
        return failure(code::kFailed, "out of memory building the headers");
    }
  }

  // Body: a string as is, other JSON serialized (application/json unless a header says).
  std::string body;
  bool has_body = false;
  if (const rapidjson::Value* b = ActionDoc::member(doc.payload(), "body")) {
    has_body = true;
    if (b->IsString()) {
      body.assign(b->GetString(), b->GetStringLength());
    } else if (!b->IsNull()) {
      body = warden::json::to_text(*b);
      if (!has_content_type && !add_header("Content-Type: application/json"))
        return failure(code::kFailed, "out of memory building the headers");
    } else {
      has_body = false;
    }
  }
  if (!add_header("Expect:")) return failure(code::kFailed, "out of memory building the headers");

  std::unique_ptr<CURLU, CurlDeleter> handle(curl_url());
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!handle || !curl) return failure(code::kFailed, "cannot create a libcurl handle");
  // The same text, read with the same flags as the rules' reading.
  if (curl_url_set(handle.get(), CURLUPART_URL, url_text->c_str(), urls::kCurlUrlFlags) !=
      CURLUE_OK)
    return failure(code::kBadAction, "libcurl refused the URL");

  std::unique_ptr<curl_slist, CurlDeleter> pins;
  for (const auto& pin : config_.resolve) {
    curl_slist* next = curl_slist_append(pins.get(), pin.c_str());
    if (!next) return failure(code::kFailed, "out of memory building the resolve pins");
    pins.release();
    pins.reset(next);
  }

  Exchange x;
  x.cap = config_.max_response_bytes;
  x.private_allowed = context.allows("private-network");
  x.url_ip = url.ip;
  char curl_error[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  http_client::harden(c, curl_error, config_.connect_timeout, config_.timeout);
  curl_easy_setopt(c, CURLOPT_CURLU, handle.get());
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_checked_socket);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &x);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (pins) curl_easy_setopt(c, CURLOPT_RESOLVE, pins.get());
  if (method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (method != "GET" || has_body) {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  if (has_body) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  } else if (method == "POST" || method == "PUT" || method == "PATCH") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(0));
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
  }

  CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  Result r;
  r.details["method"] = method;
  r.details["host"] = url.host;
  if (!x.refused.empty() && rc != CURLE_OK) {
    std::string list;
    for (const auto& a : x.refused) list += (list.empty() ? "" : ", ") + a;
    r = failure(code::kDenied,
                url.host + " resolved to a private address: " + list +
                    (x.private_allowed ? "; private-network does not cover a metadata address "
                                         "the URL does not name"
                                       : "; no rule allowed private-network"));
    r.details["refused"] = list;
    return r;
  }
  if (rc == CURLE_WRITE_ERROR && x.truncated) rc = CURLE_OK;  // stopped at the cap
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    r = failure(code::kTimeout,
                "HTTP request timed out: " +
                    std::string(curl_error[0] ? curl_error : curl_easy_strerror(rc)));
    return r;
  }
  if (rc != CURLE_OK)
    return failure(
        code::kFailed,
        "HTTP request failed: " + std::string(curl_error[0] ? curl_error : curl_easy_strerror(rc)));
  r.exit_code = static_cast<int>(status);
  r.details["status"] = std::to_string(status);
  char* primary_ip = nullptr;
  if (curl_easy_getinfo(c, CURLINFO_PRIMARY_IP, &primary_ip) == CURLE_OK && primary_ip)
    r.details["ip"] = primary_ip;
  char* type = nullptr;
  if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type)
    r.details["content_type"] = type;
  char* location = nullptr;
  if (status >= 300 && status < 400 &&
      curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location) {
    r.ok = false;
    r.error_code = code::kRedirect;
    r.error = "HTTP " + std::to_string(status) + " redirect to " + location + " not followed";
    r.details["location"] = location;
    return r;
  }
  r.ok = true;
  r.output = std::move(x.body);
  r.truncated = x.truncated;
  return r;
}

}  // namespace warden::actuators
