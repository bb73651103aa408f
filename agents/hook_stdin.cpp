// Bounded, deadline-limited read of the hook's stdin (agents/hook_stdin.h).
#include "agents/hook_stdin.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>

namespace warden::agents {

namespace {

// Follows the JSON text as it arrives, one byte at a time (strings and escapes skipped):
// done once the first object or array has closed. Linear in the input, however it is split.
class JsonEnd {
 public:
  // True when the text fed so far holds a whole top-level value.
  bool feed(const char* data, std::size_t size) {
    for (std::size_t i = 0; i < size; ++i) {
      const char c = data[i];
      if (in_string_) {
        if (escape_) {
          escape_ = false;
        } else if (c == '\\') {
          escape_ = true;
        } else if (c == '"') {
          in_string_ = false;
        }
      } else if (c == '"') {
        in_string_ = true;
      } else if (c == '{' || c == '[') {
        ++depth_;
        started_ = true;
      } else if ((c == '}' || c == ']') && --depth_ <= 0 && started_) {
        return true;
      }
    }
    return false;
  }

 private:
  long depth_ = 0;
  bool started_ = false, in_string_ = false, escape_ = false;
};

}  // namespace

bool read_hook_input(int fd, std::size_t max_bytes, std::chrono::steady_clock::time_point deadline,
                     std::string* text, HookError* error) {
  text->clear();
  char buffer[65536];
  JsonEnd end;
  for (;;) {
    auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
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
    if (end.feed(buffer, static_cast<std::size_t>(n))) return true;
  }
}

}  // namespace warden::agents
