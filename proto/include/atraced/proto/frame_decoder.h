// Splits a byte stream into frames, whatever the read sizes were.
//
// The socket owner reads into WritableSpace(), Commit()s what it got, then calls Next()
// until kNeedMore. The decoder never touches a descriptor, so tests and fuzzers drive it
// with arbitrary chunking. Modelled on Perfetto's BufferedFrameDeserializer.
#ifndef ATRACED_PROTO_FRAME_DECODER_H_
#define ATRACED_PROTO_FRAME_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "atraced/proto/codec.h"
#include "atraced/proto/wire.h"

namespace atraced::proto {

class FrameDecoder {
 public:
  explicit FrameDecoder(uint32_t max_payload = ATR_MAX_PAYLOAD);

  FrameDecoder(const FrameDecoder&) = delete;
  FrameDecoder& operator=(const FrameDecoder&) = delete;

  // Buffer space for the next read, at least min_size bytes. Call Commit(n) with the bytes
  // actually read into it. Invalidates the payload span of the last frame.
  std::span<uint8_t> WritableSpace(size_t min_size = 64 * 1024);
  // n must not exceed the size of the span WritableSpace() last returned.
  void Commit(size_t n);
  // Convenience: WritableSpace(bytes.size()) + copy + Commit.
  void Feed(std::span<const uint8_t> bytes);

  enum class Result { kFrame, kNeedMore, kError };
  // On kFrame, *header and *payload describe the next frame; payload stays valid until the
  // next call on this decoder. A header is checked as soon as its bytes arrive, so garbage
  // is reported without waiting for a full header. After kError every call returns kError:
  // the stream has lost sync and the connection must be closed.
  Result Next(FrameHeader* header, std::span<const uint8_t>* payload);

  // Why, after kError: "bad magic 0x...", "frame length N exceeds limit M",
  // "unknown flag bits 0x...". Empty otherwise.
  const std::string& error() const { return error_; }
  // Bytes received but not yet returned as frames.
  size_t buffered() const { return end_ - begin_; }
  // Current buffer allocation, for tests of the memory bound.
  size_t capacity() const { return capacity_; }

 private:
  Result Fail(std::string message);

  const uint32_t max_payload_;
  std::unique_ptr<uint8_t[]> buf_;
  size_t capacity_ = 0;
  size_t begin_ = 0;  // first unconsumed byte
  size_t end_ = 0;    // one past the last committed byte
  size_t writable_ = 0;  // size of the span last returned by WritableSpace()
  std::string error_;
};

}  // namespace atraced::proto

#endif  // ATRACED_PROTO_FRAME_DECODER_H_
