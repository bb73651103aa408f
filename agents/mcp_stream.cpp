// Newline-delimited streams (agents/mcp_stream.h).
#include "agents/mcp_stream.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

namespace warden::agents::mcp {

bool LineReader::fill() {
  pollfd p[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  for (;;) {
    int r = ::poll(p, stop_fd_ >= 0 ? 2 : 1, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      status_ = Status::Error;
      return false;
    }
    if (stop_fd_ >= 0 && (p[1].revents & POLLIN)) {
      status_ = Status::Stopped;
      return false;
    }
    if (p[0].revents) break;
  }
  char chunk[65536];
  ssize_t n;
  do n = ::read(fd_, chunk, sizeof chunk);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    status_ = Status::Error;
    return false;
  }
  if (n == 0) {
    status_ = Status::End;
    return false;
  }
  buf_.append(chunk, static_cast<std::size_t>(n));
  return true;
}

LineReader::Status LineReader::next(std::string* line) {
  for (;;) {
    std::size_t nl = buf_.find('\n', scanned_);
    if (nl != std::string::npos) {
      if (skipping_) {
        skipping_ = false;
        buf_.erase(0, nl + 1);
        scanned_ = 0;
        return Status::TooLong;
      }
      line->assign(buf_, 0, nl);
      buf_.erase(0, nl + 1);
      scanned_ = 0;
      return Status::Line;
    }
    scanned_ = buf_.size();
    if (buf_.size() > max_) {
      skipping_ = true;  // drop what we hold; keep dropping up to the next '\n'
      buf_.clear();
      scanned_ = 0;
    }
    if (!fill()) {
      if (status_ == Status::End && skipping_) {
        skipping_ = false;
        return Status::TooLong;
      }
      if (status_ == Status::End && !buf_.empty()) {
        line->swap(buf_);
        buf_.clear();
        scanned_ = 0;
        return Status::Line;
      }
      return status_;
    }
  }
}

bool write_all(int fd, std::string_view data, int stop_fd) {
  std::size_t at = 0;
  while (at < data.size()) {
    pollfd p[2] = {{fd, POLLOUT, 0}, {stop_fd, POLLIN, 0}};
    int r = ::poll(p, stop_fd >= 0 ? 2 : 1, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (stop_fd >= 0 && (p[1].revents & POLLIN)) return false;
    if (p[0].revents & (POLLERR | POLLNVAL)) return false;
    if (!(p[0].revents & (POLLOUT | POLLHUP))) continue;
    // At most a pipe buffer page at a time: after POLLOUT this does not block.
    std::size_t len = std::min<std::size_t>(data.size() - at, 4096);
    ssize_t n = ::write(fd, data.data() + at, len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    at += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace warden::agents::mcp
