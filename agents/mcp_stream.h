// Newline-delimited streams of the MCP stdio transport: a line reader with a size cap and a
// writer, both over raw descriptors and both giving up when a stop descriptor becomes
// readable (so the gateway can end its relay threads without closing a descriptor another
// thread uses). A LineReader belongs to one thread; write_all may be called from any.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace warden::agents::mcp {

class LineReader {
 public:
  enum class Status { Line, TooLong, End, Stopped, Error };

  LineReader(int fd, int stop_fd, std::size_t max_bytes)
      : fd_(fd), stop_fd_(stop_fd), max_(max_bytes) {}

  // The next line without its '\n' into *line. TooLong: the line passed max_bytes and was
  // skipped up to its end. End: the stream ended (a last line without '\n' is returned
  // first). Stopped: stop_fd became readable. Error: a read failed (errno kept).
  Status next(std::string* line);

 private:
  bool fill();  // false on end, stop or error (status_ says which)

  int fd_;
  int stop_fd_;
  std::size_t max_;
  std::string buf_;
  std::size_t scanned_ = 0;
  bool skipping_ = false;
  Status status_ = Status::Line;
};

// Writes all of `data` to fd, waiting while the pipe is full; false when the peer is gone,
// a write fails, or stop_fd (if >= 0) becomes readable first.
bool write_all(int fd, std::string_view data, int stop_fd);

}  // namespace warden::agents::mcp
