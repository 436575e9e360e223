#include "atraced/proto/frame_decoder.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstring>

#include "atraced/proto/byte_io.h"

namespace atraced::proto {

FrameDecoder::FrameDecoder(uint32_t max_payload) : max_payload_(max_payload) {}

std::span<uint8_t> FrameDecoder::WritableSpace(size_t min_size) {
  // Move unconsumed bytes to the front. Only a partial frame (or frames the caller has not
  // asked for yet) is moved, so a long stream of small frames never grows the buffer.
  if (begin_ > 0) {
    if (end_ > begin_) std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (capacity_ - end_ < min_size) {
    // Grow geometrically so a large frame arriving in small reads costs O(n) copies, but
    // never past one whole frame plus the requested read: that is the memory bound.
    const size_t needed = end_ + min_size;
    const size_t bound = ATR_FRAME_HEADER_SIZE + size_t{max_payload_} + min_size;
    const size_t new_capacity = std::max(needed, std::min(capacity_ * 2, bound));
    auto bigger = std::make_unique_for_overwrite<uint8_t[]>(new_capacity);
    if (end_ > 0) std::memcpy(bigger.get(), buf_.get(), end_);
    buf_ = std::move(bigger);
    capacity_ = new_capacity;
  }
  writable_ = capacity_ - end_;
  return {buf_.get() + end_, writable_};
}

void FrameDecoder::Commit(size_t n) {
  assert(n <= writable_);
  n = std::min(n, writable_);
  writable_ = 0;
  // Once the stream is out of sync nothing after it can be framed; drop it.
  if (!error_.empty()) {
    begin_ = end_ = 0;
    return;
  }
  end_ += n;
}

void FrameDecoder::Feed(std::span<const uint8_t> bytes) {
  if (bytes.empty() || !error_.empty()) return;  // after an error the bytes are dropped anyway
  std::span<uint8_t> space = WritableSpace(bytes.size());
  std::memcpy(space.data(), bytes.data(), bytes.size());
  Commit(bytes.size());
}

FrameDecoder::Result FrameDecoder::Fail(std::string message) {
  error_ = std::move(message);
  begin_ = end_ = 0;
  return Result::kError;
}

FrameDecoder::Result FrameDecoder::Next(FrameHeader* header, std::span<const uint8_t>* payload) {
  if (!error_.empty()) return Result::kError;
  const uint8_t* p = buf_.get() + begin_;
  const size_t have = buffered();
  char text[96];

  // Check each header field as soon as it has arrived: a peer sending garbage is cut off
  // after 4 bytes, not after it has filled a header.
  if (have >= 4 && GetU32(p) != ATR_MAGIC) {
    std::snprintf(text, sizeof(text), "bad magic 0x%08x", GetU32(p));
    return Fail(text);
  }
  if (have >= 8 && GetU32(p + 4) > max_payload_) {
    std::snprintf(text, sizeof(text), "frame length %u exceeds limit %u", GetU32(p + 4),
                  max_payload_);
    return Fail(text);
  }
  if (have >= 12 && (GetU16(p + 10) & ~ATR_FLAG_REPLY) != 0) {
    std::snprintf(text, sizeof(text), "unknown flag bits 0x%04x",
                  static_cast<unsigned>(GetU16(p + 10) & ~ATR_FLAG_REPLY));
    return Fail(text);
  }
  if (have < ATR_FRAME_HEADER_SIZE) return Result::kNeedMore;

  const uint32_t length = GetU32(p + 4);
  if (have - ATR_FRAME_HEADER_SIZE < length) return Result::kNeedMore;

  header->length = length;
  header->opcode = GetU16(p + 8);
  header->flags = GetU16(p + 10);
  header->request_id = GetU32(p + 12);
  *payload = std::span<const uint8_t>(p + ATR_FRAME_HEADER_SIZE, length);
  // The bytes stay where they are until the next WritableSpace() compacts, which is what
  // keeps *payload valid until then.
  begin_ += ATR_FRAME_HEADER_SIZE + length;
  return Result::kFrame;
}

}  // namespace atraced::proto
