// Tests for the http actuator against the loopback HttpFake server: the request as approved
// (method, headers, body), redirects not followed, the resolved address checked (a name
// pinned to 127.0.0.1 — DNS rebinding — refused without `private-network`), response cap,
// header injection refused, no proxy from the environment, timeouts.
// Run with: actuators_tests "[http]".
#include "actuators/http.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <string>

#include "engine/json_writer.h"
#include "tests/support/http_fake.h"

using namespace warden::actuators;
using warden::json_string;
using warden::testing::HttpFake;
using warden::testing::HttpReply;

namespace {

std::string http_action(const std::string& url, const std::string& extra = "") {
  return R"({"target":"http","action":"request","payload":{"url":)" + json_string(url) + extra +
         "}}";
}

Context private_network() {
  Context c;
  c.allowed = {"private-network"};
  return c;
}

}  // namespace

TEST_CASE("http sends the approved method, headers and body", "[http]") {
  HttpFake server;
  server.push({201, {{"Content-Type", "text/plain"}}, "created"});
  HttpActuator http(HttpConfig{}, false);
  Result r = http.act(
      http_action(
          server.base_url() + "/hooks/a?x=1",
          R"(,"method":"post","headers":{"X-Token":"abc","Content-Type":"text/plain"},"body":"hello")"),
      private_network());
  REQUIRE(r.ok);
  CHECK(r.exit_code == 201);
  CHECK(r.output == "created");
  CHECK(r.details["content_type"] == "text/plain");
  REQUIRE(server.request_count() == 1);
  auto seen = server.requests().at(0);
  CHECK(seen.method == "POST");
  CHECK(seen.target == "/hooks/a?x=1");
  CHECK(seen.header("X-Token") == "abc");
  CHECK(seen.body == "hello");
}

TEST_CASE("http: a JSON body is sent as application/json; GET is the default", "[http]") {
  HttpFake server;
  server.push({200, {}, "one"});
  server.push({404, {}, "missing"});
  HttpActuator http(HttpConfig{}, false);
  Result put =
      http.act(http_action(server.base_url() + "/doc", R"(,"method":"PUT","body":{"a":[1,2]})"),
               private_network());
  REQUIRE(put.ok);
  Result get = http.act(http_action(server.base_url() + "/doc"), private_network());
  CHECK(get.ok);  // a 404 is an answer the model sees
  CHECK(get.exit_code == 404);
  auto seen = server.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].method == "PUT");
  CHECK(seen[0].body == R"({"a":[1,2]})");
  CHECK(seen[0].header("Content-Type") == "application/json");
  CHECK(seen[1].method == "GET");
}

TEST_CASE("http: a redirect is not followed", "[http]") {
  HttpFake server;
  server.push({302, {{"Location", "http://169.254.169.254/latest/meta-data/"}}, ""});
  server.set_fallback({200, {}, "should not be reached"});
  HttpActuator http(HttpConfig{}, false);
  Result r = http.act(http_action(server.base_url() + "/go"), private_network());
  CHECK_FALSE(r.ok);
  CHECK(r.error_code == "E_ACT_REDIRECT");
  CHECK(r.error.find("http://169.254.169.254/latest/meta-data/") != std::string::npos);
  CHECK(r.exit_code == 302);
  CHECK(server.request_count() == 1);
}

TEST_CASE("http: the resolved address is checked before connecting (DNS rebinding)", "[http]") {
  HttpFake server;
  server.set_fallback({200, {}, "internal"});
  HttpConfig c;
  const std::string port = std::to_string(server.port());
  c.resolve = {"public.example.com:" + port + ":127.0.0.1"};
  HttpActuator http(c, false);
  const std::string url = "http://public.example.com:" + port + "/admin";

  Result refused = http.act(http_action(url), Context{});
  CHECK_FALSE(refused.ok);
  CHECK(refused.error_code == "E_ACT_DENIED");
  CHECK(refused.error.find("resolved to a private address") != std::string::npos);
  CHECK(refused.error.find("127.0.0.1 (loopback)") != std::string::npos);
  CHECK(server.request_count() == 0);

  Result literal = http.act(http_action(server.base_url() + "/admin"), Context{});
  CHECK(literal.error_code == "E_ACT_DENIED");
  CHECK(server.request_count() == 0);

  Result allowed = http.act(http_action(url), private_network());
  REQUIRE(allowed.ok);
  CHECK(allowed.output == "internal");
  CHECK(allowed.details["ip"] == "127.0.0.1");
  REQUIRE(server.request_count() == 1);
  CHECK(server.requests().at(0).header("Host") == "public.example.com:" + port);
}

TEST_CASE("http: the response is capped", "[http]") {
  HttpFake server;
  server.push({200, {}, std::string(100000, 'x')});
  HttpConfig c;
  c.max_response_bytes = 1000;
  HttpActuator http(c, false);
  Result r = http.act(http_action(server.base_url() + "/big"), private_network());
  REQUIRE(r.ok);
  CHECK(r.output.size() == 1000);
  CHECK(r.truncated);
}

TEST_CASE("http: header injection and framing headers are refused before any request", "[http]") {
  HttpFake server;
  server.set_fallback({200, {}, "ok"});
  HttpActuator http(HttpConfig{}, false);
  for (const char* headers :
       {R"({"X-A":"1\r\nX-Evil: 1"})", R"({"X-A":"1\nX-Evil: 1"})", R"({"X-A":"a\u0000b"})",
        R"({"X-A\r\nX-Evil":"1"})", R"({"Bad Name":"1"})", R"({"Host":"internal"})",
        R"({"Transfer-Encoding":"chunked"})", R"({"Content-Length":"5"})", R"({"X-A":7})",
        R"("x")"}) {
    INFO(headers);
    Result r =
        http.act(http_action(server.base_url() + "/", std::string(R"(,"headers":)") + headers),
                 private_network());
    CHECK_FALSE(r.ok);
    CHECK(r.error_code == "E_ACT_BAD_ACTION");
  }
  CHECK(server.request_count() == 0);
}

TEST_CASE("http: URL, scheme and method are checked", "[http]") {
  HttpActuator http(HttpConfig{}, false);
  CHECK(http.act(http_action("http://exa mple.com/"), Context{}).error_code == "E_ACT_BAD_ACTION");
  CHECK(http.act(http_action("http://user:pw@example.com/"), Context{}).error_code ==
        "E_ACT_BAD_ACTION");
  CHECK(http.act(http_action("ftp://example.com/file"), Context{}).error_code == "E_ACT_DENIED");
  {
    Result f = http.act(http_action("file:///etc/passwd"), Context{});
    INFO(f.error);
    CHECK(f.error_code == "E_ACT_DENIED");
  }
  CHECK(
      http.act(http_action("http://example.com/", R"(,"method":"TRACE")"), Context{}).error_code ==
      "E_ACT_BAD_ACTION");
  CHECK(
      http.act(
              R"({"target":"http","action":"delete","payload":{"url":"http://example.com/","method":"GET"}})",
              Context{})
          .error_code == "E_ACT_BAD_ACTION");
  CHECK(http.act(R"({"target":"http","payload":{}})", Context{}).error_code == "E_ACT_BAD_ACTION");
}

TEST_CASE("http: no proxy from the environment", "[http]") {
  HttpFake server;
  server.set_fallback({200, {}, "direct"});
  ::setenv("http_proxy", "http://127.0.0.1:9", 1);
  ::setenv("HTTP_PROXY", "http://127.0.0.1:9", 1);
  ::setenv("ALL_PROXY", "http://127.0.0.1:9", 1);
  HttpActuator http(HttpConfig{}, false);
  Result r = http.act(http_action(server.base_url() + "/"), private_network());
  ::unsetenv("http_proxy");
  ::unsetenv("HTTP_PROXY");
  ::unsetenv("ALL_PROXY");
  REQUIRE(r.ok);
  CHECK(r.output == "direct");
}

TEST_CASE("http: the time limit ends a request the server does not answer", "[http]") {
  HttpFake server;
  server.push({200, {}, "late", std::chrono::milliseconds(3000)});
  HttpConfig c;
  c.timeout = std::chrono::milliseconds(200);
  HttpActuator http(c, false);
  Result r = http.act(http_action(server.base_url() + "/slow"), private_network());
  CHECK_FALSE(r.ok);
  CHECK(r.error_code == "E_ACT_TIMEOUT");
}

TEST_CASE("http: metadata and IPv6 loopback addresses are refused before any connection",
          "[http]") {
  HttpConfig c;
  c.resolve = {"metadata.example.com:80:169.254.169.254", "v6.example.com:80:[::1]",
               "mapped.example.com:80:[::ffff:10.0.0.1]"};
  c.connect_timeout = std::chrono::milliseconds(2000);
  HttpActuator http(c, false);
  struct Case {
    const char* url;
    const char* refused;
  };
  for (const Case& k : {Case{"http://metadata.example.com/latest/", "169.254.169.254 (metadata)"},
                        Case{"http://v6.example.com/", "::1 (loopback)"},
                        Case{"http://mapped.example.com/", "10.0.0.1 (private)"}}) {
    INFO(k.url);
    Result r = http.act(http_action(k.url), Context{});
    CHECK(r.error_code == "E_ACT_DENIED");
    CHECK(r.error.find(k.refused) != std::string::npos);
  }
}
