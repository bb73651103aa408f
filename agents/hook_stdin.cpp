// Bounded, deadline-limited read of the hook's stdin (agents/hook_stdin.h).
#include "agents/hook_stdin.h"

#include <errno.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <cstring>

namespace warden::agents {

namespace {

// True when text is one whole JSON object (and nothing but whitespace after it). Tried only
// when the text ends in '}', so a large input is parsed a handful of times at most.
bool complete_object(const std::string& text) {
  std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos || text[end] != '}') return false;
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  return !doc.HasParseError() && doc.IsObject();
}

}  // namespace

bool read_hook_input(int fd, std::size_t max_bytes, std::chrono::steady_clock::time_point deadline,
                     std::string* text, HookError* error) {
  text->clear();
  char buffer[65536];
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      *error = {kHookInputTimeout, "the agent did not finish writing the hook input in time"};
      return false;
    }
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) {
      *error = {kHookInputRead, std::string("cannot read the hook input: ") + std::strerror(errno)};
      return false;
    }
    if (rc == 0) continue;  // the deadline check above ends the loop
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      *error = {kHookInputRead, std::string("cannot read the hook input: ") + std::strerror(errno)};
      return false;
    }
    if (n == 0) return true;
    if (text->size() + static_cast<std::size_t>(n) > max_bytes) {
      *error = {kHookInputTooLarge,
                "hook input over the limit of " + std::to_string(max_bytes) + " bytes"};
      return false;
    }
    text->append(buffer, static_cast<std::size_t>(n));
    if (complete_object(*text)) return true;
  }
}

}  // namespace warden::agents
