// libFuzzer target: the frame decoder fed in arbitrary chunks, and every frame it yields
// through the request parser, as a session does. Checks the decoder's invariants.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/frame.h"
#include "protocol/message.h"

using warden::protocol::FrameDecoder;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // First two bytes: frame limit (small, so the limit path is hit) and chunk size.
  std::size_t max_frame = 1 + data[0] * 64;
  std::size_t chunk = 1 + data[1] % 97;
  data += 2;
  size -= 2;
  FrameDecoder decoder(max_frame);
  std::size_t consumed = 0;
  bool bad = false;
  for (std::size_t at = 0; at < size && !bad; at += chunk) {
    std::size_t n = std::min(chunk, size - at);
    decoder.feed(reinterpret_cast<const char*>(data) + at, n);
    for (;;) {
      FrameDecoder::Result r = decoder.next();
      if (r.status == FrameDecoder::Status::NeedMore) break;
      if (r.status == FrameDecoder::Status::Bad) {
        bad = true;
        if (r.code == nullptr) std::abort();
        break;
      }
      if (r.payload.size() > max_frame) std::abort();
      // The payload must be exactly the bytes after the prefix in the input.
      if (consumed + warden::protocol::kPrefixBytes + r.payload.size() > size) std::abort();
      if (std::string_view(reinterpret_cast<const char*>(data) + consumed + 6, r.payload.size()) !=
          r.payload) {
        std::abort();
      }
      consumed += warden::protocol::kPrefixBytes + r.payload.size();
      warden::protocol::Request request;
      warden::protocol::parse_request(r.payload, 66, &request);
    }
  }
  // Round trip: what encode_frame writes, the decoder reads back.
  std::string payload(reinterpret_cast<const char*>(data), std::min<std::size_t>(size, 4096));
  std::string frame = warden::protocol::encode_frame(payload);
  FrameDecoder again(1 << 20);
  again.feed(frame.data(), frame.size());
  FrameDecoder::Result r = again.next();
  if (r.status != FrameDecoder::Status::Good || r.payload != payload) std::abort();
  return 0;
}
