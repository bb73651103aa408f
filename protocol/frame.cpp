#include "protocol/frame.h"

#include <algorithm>

#include "bindings/text.h"
#include "engine/diagnostic.h"

namespace warden::protocol {

namespace {

// A connection keeps up to this much buffer between frames; more is returned to the heap.
constexpr std::size_t kKeepCapacity = 64 * 1024;

}  // namespace

std::string encode_frame(std::string_view payload) {
  std::string frame(kPrefixBytes + payload.size(), '\0');
  std::size_t n = payload.size();
  for (std::size_t i = kPrefixBytes; i-- > 0;) {
    frame[i] = text::hex_digit(static_cast<unsigned>(n));
    n >>= 4;
  }
  frame.replace(kPrefixBytes, payload.size(), payload);
  return frame;
}

OutFrame make_frame(std::string payload) {
  OutFrame frame;
  std::size_t n = payload.size();
  for (std::size_t i = kPrefixBytes; i-- > 0;) {
    frame.prefix[i] = text::hex_digit(static_cast<unsigned>(n));
    n >>= 4;
  }
  frame.payload = std::move(payload);
  return frame;
}

void FrameDecoder::feed(const char* data, std::size_t size) {
  if (bad_ || size == 0) return;
  // Drop what was handed out before growing, so the buffer stays about one frame long.
  if (consumed_ > 0) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer_.append(data, size);
}

FrameDecoder::Result FrameDecoder::next() {
  if (bad_) return bad_result_;
  std::string_view rest(buffer_.data() + consumed_, buffer_.size() - consumed_);
  // Check the prefix digit by digit, so garbage is refused before six bytes arrive.
  std::size_t length = 0;
  std::size_t have = std::min(rest.size(), kPrefixBytes);
  for (std::size_t i = 0; i < have; ++i) {
    int v = text::hex_value(rest[i]);
    if (v < 0) {
      bad_ = true;
      bad_result_ = {
          Status::Bad, {}, code::kFramePrefix, "length prefix must be 6 ASCII hex digits"};
      buffer_.clear();
      consumed_ = 0;
      return bad_result_;
    }
    length = (length << 4) | static_cast<std::size_t>(v);
  }
  if (have < kPrefixBytes) return {};
  if (length > max_frame_bytes_) {
    bad_ = true;
    bad_result_ = {Status::Bad,
                   {},
                   code::kFrameTooLarge,
                   "frame of " + std::to_string(length) + " bytes is over the limit of " +
                       std::to_string(max_frame_bytes_)};
    buffer_.clear();
    consumed_ = 0;
    return bad_result_;
  }
  // Memory grows with the bytes received, never with the length a peer merely announces.
  if (rest.size() - kPrefixBytes < length) return {};
  Result result;
  result.status = Status::Good;
  result.payload = rest.substr(kPrefixBytes, length);
  consumed_ += kPrefixBytes + length;
  // When everything is handed out, compact() (or the next feed()) resets the buffer, so the
  // view stays valid until then.
  return result;
}

void FrameDecoder::compact() {
  if (consumed_ == 0) return;
  buffer_.erase(0, consumed_);
  consumed_ = 0;
  if (buffer_.empty() && buffer_.capacity() > kKeepCapacity) {
    std::string().swap(buffer_);
  } else if (buffer_.capacity() > kKeepCapacity && buffer_.capacity() > 4 * buffer_.size()) {
    buffer_.shrink_to_fit();
  }
}

void FrameDecoder::release() {
  std::string().swap(buffer_);
  consumed_ = 0;
}

}  // namespace warden::protocol
