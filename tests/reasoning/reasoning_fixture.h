// Shared pieces of the reasoning tests: provider configs pointed at an HttpFake, a request
// with one tool, JSON reading of the bodies the fake recorded, a temporary script file.
#pragma once

#include <rapidjson/document.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "reasoning/config.h"
#include "reasoning/provider.h"
#include "tests/support/http_fake.h"

namespace warden::reasoning::testing {

inline ProviderConfig http_config(const std::string& name, const std::string& kind,
                                  const warden::testing::HttpFake& server,
                                  const std::string& key_env = "") {
  ProviderConfig config;
  config.name = name;
  config.kind = kind;
  config.base_url = server.base_url();
  config.model = "model-" + name;
  config.api_key_env = key_env;
  config.connect_timeout = std::chrono::milliseconds(2000);
  config.timeout = std::chrono::milliseconds(30000);
  return config;
}

inline std::unique_ptr<Provider> must_make(const ProviderConfig& config) {
  std::string error;
  auto provider = make_provider(config, &error);
  if (!provider) throw std::runtime_error("make_provider failed: " + error);
  return provider;
}

inline Request shell_request(const std::string& text = "list the files") {
  Request request;
  request.system = "You are a careful assistant.";
  request.messages = {{"user", text}};
  request.tools = {
      {"shell", "Run a command line in the workspace",
       R"({"type":"object","properties":{"command":{"type":"string"}},"required":["command"]})"}};
  request.session = "alice\x1fs1";
  return request;
}

inline rapidjson::Document parse_body(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  if (doc.HasParseError()) throw std::runtime_error("request body is not JSON: " + body);
  return doc;
}

inline warden::testing::HttpReply json_reply(const std::string& body, int status = 200) {
  warden::testing::HttpReply reply;
  reply.status = status;
  reply.body = body;
  return reply;
}

// A file under /tmp removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char pattern[] = "/tmp/warden-reasoning-XXXXXX";
    int fd = mkstemp(pattern);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    ::close(fd);
    path_ = pattern;
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets an environment variable for the test's duration.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

}  // namespace warden::reasoning::testing
