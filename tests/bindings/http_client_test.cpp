// The hardened libcurl handle (bindings/http_client.h) against a real server on loopback:
// schemes other than http and https are refused, a redirect is returned and not followed, a
// proxy named in the environment is not used, the total timeout ends a transfer, and the
// error buffer receives libcurl's message.
#include "bindings/http_client.h"

#include <stdlib.h>

#include "tests/support/http_fake.h"

using namespace std::chrono_literals;
using warden::testing::HttpFake;
using warden::testing::HttpReply;

namespace {

// One hardened GET of `url`: its result, its status (0 when none) and the error buffer.
struct Got {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string error;
};

std::size_t ignore_body(char*, std::size_t size, std::size_t count, void*) { return size * count; }

Got hardened_get(const std::string& url, std::chrono::milliseconds timeout = 5000ms) {
  warden::http_client::global_init();
  Got got;
  CURL* curl = curl_easy_init();
  char error[CURL_ERROR_SIZE] = {0};
  warden::http_client::harden(curl, error, 5000ms, timeout);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, ignore_body);
  got.code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &got.status);
  got.error = error;
  curl_easy_cleanup(curl);
  return got;
}

}  // namespace

TEST_CASE("a hardened handle refuses schemes other than http and https") {
  for (const char* url : {"file:///etc/hostname", "ftp://127.0.0.1/", "gopher://127.0.0.1/"}) {
    INFO(url);
    Got got = hardened_get(url);
    CHECK(got.code == CURLE_UNSUPPORTED_PROTOCOL);
    CHECK_FALSE(got.error.empty());
  }
}

TEST_CASE("a hardened handle returns a redirect without following it") {
  HttpFake server;
  server.push({302, {{"Location", server.base_url() + "/elsewhere"}}, ""});
  server.set_fallback({200, {}, "followed"});
  Got got = hardened_get(server.base_url() + "/start");
  CHECK(got.code == CURLE_OK);
  CHECK(got.status == 302);
  REQUIRE(server.request_count() == 1);
  CHECK(server.requests().at(0).target == "/start");
}

TEST_CASE("a hardened handle ignores a proxy named in the environment") {
  HttpFake server;
  server.push({200, {}, "direct"});
  HttpFake proxy;
  proxy.set_fallback({502, {}, "through the proxy"});
  const char* saved = std::getenv("http_proxy");
  const std::string kept = saved ? saved : "";
  ::setenv("http_proxy", proxy.base_url().c_str(), 1);
  Got got = hardened_get(server.base_url() + "/");
  if (saved)
    ::setenv("http_proxy", kept.c_str(), 1);
  else
    ::unsetenv("http_proxy");
  CHECK(got.code == CURLE_OK);
  CHECK(got.status == 200);
  CHECK(server.request_count() == 1);
  CHECK(proxy.request_count() == 0);
}

TEST_CASE("a hardened handle ends a transfer at its total timeout") {
  HttpFake server;
  server.push({200, {}, "late", 3000ms});
  Got got = hardened_get(server.base_url() + "/", 200ms);
  CHECK(got.code == CURLE_OPERATION_TIMEDOUT);
  CHECK(got.error.find("timed out") != std::string::npos);
}
