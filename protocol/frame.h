// Framing of the daemon protocol (SPEC §5): 6 ASCII hex digits giving the payload length in
// bytes, then exactly that many bytes of payload. FrameDecoder is an incremental parser fed
// by a connection's reads; encode_frame builds frames. Not thread-safe: one per connection.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace warden::protocol {

inline constexpr std::size_t kPrefixBytes = 6;
inline constexpr std::size_t kMaxEncodableFrame = 0xFFFFFF;  // what 6 hex digits can say

// Returns the frame for payload; payload.size() must be <= kMaxEncodableFrame.
std::string encode_frame(std::string_view payload);

// An outgoing frame as its prefix and its payload, written together (scatter/gather) so the
// payload is never copied behind a prefix.
struct OutFrame {
  std::array<char, kPrefixBytes> prefix{};
  std::string payload;
};
OutFrame make_frame(std::string payload);

class FrameDecoder {
 public:
  enum class Status { Good, NeedMore, Bad };
  struct Result {
    Status status = Status::NeedMore;
    std::string_view payload;    // Good: valid until the next feed() or next()
    const char* code = nullptr;  // Bad: code::kFramePrefix or code::kFrameTooLarge
    std::string message;         // Bad: what was wrong
  };

  explicit FrameDecoder(std::size_t max_frame_bytes) : max_frame_bytes_(max_frame_bytes) {}

  // Appends received bytes. After Bad, further input is ignored.
  void feed(const char* data, std::size_t size);
  // Extracts the next complete frame, if any. Bad is sticky: the stream cannot be resynced.
  Result next();

  // The limit applies to frames not yet extracted (raised once a connection authenticates).
  void set_max_frame_bytes(std::size_t max_frame_bytes) { max_frame_bytes_ = max_frame_bytes; }
  std::size_t max_frame_bytes() const { return max_frame_bytes_; }
  // Drops bytes already handed out; returns a large buffer's memory when nothing is pending.
  // Call after the payloads of next() are used. release() frees everything (closing).
  void compact();
  void release();

  // True when some bytes of an unfinished frame are buffered (a truncation on EOF).
  bool mid_frame() const { return buffer_.size() > consumed_; }
  std::size_t buffered() const { return buffer_.size() - consumed_; }
  // Heap memory held by the buffer (what an idle or stalled connection pins).
  std::size_t capacity() const { return buffer_.capacity(); }

 private:
  std::size_t max_frame_bytes_;
  std::string buffer_;
  std::size_t consumed_ = 0;  // bytes of buffer_ already handed out
  bool bad_ = false;
  Result bad_result_;
};

}  // namespace warden::protocol
