#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "atraced/proto/frame_decoder.h"
#include "proto_test_util.h"

namespace atraced::proto {
namespace {

using testing::Bytes;
using testing::MakeFrame;
using Result = FrameDecoder::Result;

struct Frame {
  FrameHeader header;
  std::vector<uint8_t> payload;
};

// Pulls every complete frame out of the decoder; copies payloads because their views are
// invalidated by the next feed.
Result Drain(FrameDecoder& d, std::vector<Frame>* frames) {
  for (;;) {
    FrameHeader h;
    std::span<const uint8_t> p;
    Result r = d.Next(&h, &p);
    if (r != Result::kFrame) return r;
    frames->push_back({h, std::vector<uint8_t>(p.begin(), p.end())});
  }
}

// Three frames of different shapes: a request, an empty payload and a reply.
std::vector<uint8_t> ThreeFrames() {
  std::vector<uint8_t> stream;
  const auto hello = Bytes({1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0});
  AppendFrame(stream, ATR_OP_HELLO, 0, 1, hello);
  AppendFrame(stream, ATR_OP_STATUS, 0, 2, {});
  const auto reply = Bytes({0, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0});
  AppendFrame(stream, ATR_OP_FILE_CLOSE, ATR_FLAG_REPLY, 0xDEADBEEF, reply);
  return stream;
}

void CheckThreeFrames(const std::vector<Frame>& frames) {
  REQUIRE(frames.size() == 3);
  CHECK(frames[0].header.opcode == ATR_OP_HELLO);
  CHECK(frames[0].header.flags == 0);
  CHECK(frames[0].header.request_id == 1);
  CHECK(frames[0].header.length == 16);
  CHECK(frames[0].payload.size() == 16);
  CHECK(frames[0].payload[8] == 1);
  CHECK(frames[1].header.opcode == ATR_OP_STATUS);
  CHECK(frames[1].header.request_id == 2);
  CHECK(frames[1].header.length == 0);
  CHECK(frames[1].payload.empty());
  CHECK(frames[2].header.opcode == ATR_OP_FILE_CLOSE);
  CHECK(frames[2].header.flags == ATR_FLAG_REPLY);
  CHECK(frames[2].header.request_id == 0xDEADBEEFu);
  CHECK(frames[2].payload.size() == 16);
  CHECK(frames[2].payload[8] == 42);
}

TEST_CASE("FrameDecoder: empty decoder needs more", "[frame_decoder]") {
  FrameDecoder d;
  FrameHeader h;
  std::span<const uint8_t> p;
  CHECK(d.Next(&h, &p) == Result::kNeedMore);
  CHECK(d.buffered() == 0);
  CHECK(d.error().empty());
}

TEST_CASE("FrameDecoder: several whole frames in one chunk", "[frame_decoder]") {
  FrameDecoder d;
  d.Feed(ThreeFrames());
  std::vector<Frame> frames;
  CHECK(Drain(d, &frames) == Result::kNeedMore);
  CheckThreeFrames(frames);
  CHECK(d.buffered() == 0);
}

TEST_CASE("FrameDecoder: one frame per chunk", "[frame_decoder]") {
  const auto stream = ThreeFrames();
  FrameDecoder d;
  std::vector<Frame> frames;
  const size_t sizes[] = {32, 16, 32};
  size_t at = 0;
  for (size_t size : sizes) {
    d.Feed(std::span(stream).subspan(at, size));
    at += size;
    CHECK(Drain(d, &frames) == Result::kNeedMore);
  }
  CheckThreeFrames(frames);
}

TEST_CASE("FrameDecoder: one byte at a time", "[frame_decoder]") {
  const auto stream = ThreeFrames();
  FrameDecoder d;
  std::vector<Frame> frames;
  for (size_t i = 0; i < stream.size(); ++i) {
    d.Feed(std::span(stream).subspan(i, 1));
    REQUIRE(Drain(d, &frames) == Result::kNeedMore);
    // A frame appears exactly when its last byte arrives.
    const size_t expected = (i + 1 >= 80) ? 3 : (i + 1 >= 48) ? 2 : (i + 1 >= 32) ? 1 : 0;
    REQUIRE(frames.size() == expected);
  }
  CheckThreeFrames(frames);
  CHECK(d.buffered() == 0);
}

TEST_CASE("FrameDecoder: split at every offset", "[frame_decoder]") {
  const auto stream = ThreeFrames();
  const size_t split = GENERATE_COPY(range(size_t{0}, stream.size() + 1));
  FrameDecoder d;
  std::vector<Frame> frames;
  d.Feed(std::span(stream).first(split));
  REQUIRE(Drain(d, &frames) == Result::kNeedMore);
  d.Feed(std::span(stream).subspan(split));
  REQUIRE(Drain(d, &frames) == Result::kNeedMore);
  CheckThreeFrames(frames);
}

TEST_CASE("FrameDecoder: split into three at every pair of offsets", "[frame_decoder]") {
  const auto stream = ThreeFrames();
  for (size_t a = 0; a <= stream.size(); ++a) {
    for (size_t b = a; b <= stream.size(); ++b) {
      FrameDecoder d;
      std::vector<Frame> frames;
      d.Feed(std::span(stream).subspan(0, a));
      REQUIRE(Drain(d, &frames) == Result::kNeedMore);
      d.Feed(std::span(stream).subspan(a, b - a));
      REQUIRE(Drain(d, &frames) == Result::kNeedMore);
      d.Feed(std::span(stream).subspan(b));
      REQUIRE(Drain(d, &frames) == Result::kNeedMore);
      INFO("split at " << a << " and " << b);
      REQUIRE(frames.size() == 3);
      REQUIRE(frames[2].header.request_id == 0xDEADBEEFu);
    }
  }
}

TEST_CASE("FrameDecoder: WritableSpace and Commit like a socket read", "[frame_decoder]") {
  const auto stream = ThreeFrames();
  FrameDecoder d;
  std::vector<Frame> frames;
  size_t at = 0;
  while (at < stream.size()) {
    std::span<uint8_t> space = d.WritableSpace(7);
    REQUIRE(space.size() >= 7);
    const size_t n = std::min<size_t>(7, stream.size() - at);  // short reads
    std::memcpy(space.data(), stream.data() + at, n);
    d.Commit(n);
    at += n;
    REQUIRE(Drain(d, &frames) == Result::kNeedMore);
  }
  CheckThreeFrames(frames);
}

TEST_CASE("FrameDecoder: a payload of exactly max_payload is accepted", "[frame_decoder]") {
  std::vector<uint8_t> payload(ATR_MAX_PAYLOAD, 0x5A);
  FrameDecoder d;
  d.Feed(MakeFrame(ATR_OP_FILE_APPEND, 0, 9, payload));
  FrameHeader h;
  std::span<const uint8_t> p;
  REQUIRE(d.Next(&h, &p) == Result::kFrame);
  CHECK(h.length == ATR_MAX_PAYLOAD);
  CHECK(p.size() == ATR_MAX_PAYLOAD);
  CHECK(p.back() == 0x5A);
}

// Feeds `bytes` and expects kError with `message`, then checks the error is sticky.
void RequireFramingError(FrameDecoder& d, const std::vector<uint8_t>& bytes,
                         const std::string& message) {
  d.Feed(bytes);
  FrameHeader h;
  std::span<const uint8_t> p;
  REQUIRE(d.Next(&h, &p) == Result::kError);
  CHECK(d.error() == message);
  CHECK(d.buffered() == 0);
  // Sticky: a valid frame afterwards does not resynchronise the stream.
  d.Feed(MakeFrame(ATR_OP_STATUS, 0, 1, {}));
  CHECK(d.Next(&h, &p) == Result::kError);
  CHECK(d.Next(&h, &p) == Result::kError);
  CHECK(d.error() == message);
  CHECK(d.buffered() == 0);
}

TEST_CASE("FrameDecoder: framing violations", "[frame_decoder]") {
  FrameDecoder d;
  SECTION("4 GiB length prefix") {
    auto frame = MakeFrame(ATR_OP_FILE_APPEND, 0, 1, {});
    frame[4] = frame[5] = frame[6] = frame[7] = 0xFF;
    RequireFramingError(d, frame, "frame length 4294967295 exceeds limit 1048576");
  }
  SECTION("one byte over the limit") {
    auto frame = MakeFrame(ATR_OP_FILE_APPEND, 0, 1, {});
    frame[4] = 0x01;
    frame[5] = 0x00;
    frame[6] = 0x10;  // 0x00100001 = ATR_MAX_PAYLOAD + 1
    RequireFramingError(d, frame, "frame length 1048577 exceeds limit 1048576");
  }
  SECTION("bad magic") {
    auto frame = MakeFrame(ATR_OP_STATUS, 0, 1, {});
    frame[3] = 'X';
    RequireFramingError(d, frame, "bad magic 0x58525441");
  }
  SECTION("big-endian magic is bad magic") {
    RequireFramingError(d, Bytes({'C', 'R', 'T', 'A'}), "bad magic 0x41545243");
  }
  SECTION("unknown flag bits") {
    auto frame = MakeFrame(ATR_OP_STATUS, ATR_FLAG_REPLY | 0x8002, 1, {});
    RequireFramingError(d, frame, "unknown flag bits 0x8002");
  }
  SECTION("limit given to the constructor") {
    FrameDecoder small(100);
    std::vector<uint8_t> payload(101);
    RequireFramingError(small, MakeFrame(ATR_OP_FILE_APPEND, 0, 1, payload),
                        "frame length 101 exceeds limit 100");
  }
}

TEST_CASE("FrameDecoder: errors are reported as soon as the field arrives", "[frame_decoder]") {
  FrameDecoder d;
  FrameHeader h;
  std::span<const uint8_t> p;
  SECTION("magic after 4 bytes") {
    d.Feed(Bytes({'G', 'E', 'T'}));
    CHECK(d.Next(&h, &p) == Result::kNeedMore);
    d.Feed(Bytes({' '}));
    CHECK(d.Next(&h, &p) == Result::kError);
    CHECK(d.error() == "bad magic 0x20544547");
  }
  SECTION("length after 8 bytes") {
    d.Feed(Bytes({'A', 'T', 'R', 'C', 0xFF, 0xFF, 0xFF, 0xFF}));
    CHECK(d.Next(&h, &p) == Result::kError);
  }
}

TEST_CASE("FrameDecoder: frames after an error are never returned", "[frame_decoder]") {
  FrameDecoder d;
  auto stream = MakeFrame(ATR_OP_STATUS, 0, 1, {});
  const auto bad = Bytes({'B', 'A', 'D', '!'});
  stream.insert(stream.end(), bad.begin(), bad.end());
  const auto good = MakeFrame(ATR_OP_STATUS, 0, 2, {});
  stream.insert(stream.end(), good.begin(), good.end());
  d.Feed(stream);
  FrameHeader h;
  std::span<const uint8_t> p;
  REQUIRE(d.Next(&h, &p) == Result::kFrame);
  CHECK(h.request_id == 1);
  CHECK(d.Next(&h, &p) == Result::kError);
  CHECK(d.Next(&h, &p) == Result::kError);
}

TEST_CASE("FrameDecoder: memory stays bounded over 100k small frames", "[frame_decoder]") {
  // Frames of varying size fed in chunks that never line up with frame boundaries, so
  // there is almost always a partial frame to carry over.
  std::vector<uint8_t> stream;
  std::vector<uint8_t> payload;
  constexpr uint32_t kFrames = 100000;
  for (uint32_t i = 0; i < kFrames; ++i) {
    payload.assign(i % 37, static_cast<uint8_t>(i));
    AppendFrame(stream, ATR_OP_FILE_APPEND, 0, i + 1, payload);
  }
  FrameDecoder d;
  constexpr size_t kChunk = 4093;
  size_t max_capacity = 0;
  uint32_t next_id = 1;
  for (size_t at = 0; at < stream.size(); at += kChunk) {
    const size_t n = std::min(kChunk, stream.size() - at);
    std::span<uint8_t> space = d.WritableSpace(kChunk);
    std::memcpy(space.data(), stream.data() + at, n);
    d.Commit(n);
    max_capacity = std::max(max_capacity, d.capacity());
    FrameHeader h;
    std::span<const uint8_t> p;
    while (d.Next(&h, &p) == Result::kFrame) {
      REQUIRE(h.request_id == next_id);
      REQUIRE(p.size() == (next_id - 1) % 37);
      ++next_id;
    }
  }
  CHECK(next_id == kFrames + 1);
  CHECK(d.buffered() == 0);
  // One read plus one partial frame (at most 16 + 36 bytes), rounded up by geometric
  // growth. Without compaction it would approach the whole stream (about 2.4 MB).
  CHECK(stream.size() > 2'000'000);
  CHECK(max_capacity <= 2 * kChunk);
}

TEST_CASE("FrameDecoder: a large frame in small reads stays within one frame + one read",
          "[frame_decoder]") {
  std::vector<uint8_t> payload(ATR_MAX_PAYLOAD, 1);
  const auto frame = MakeFrame(ATR_OP_FILE_APPEND, 0, 1, payload);
  FrameDecoder d;
  constexpr size_t kChunk = 64 * 1024;
  FrameHeader h;
  std::span<const uint8_t> p;
  size_t frames = 0;
  for (int round = 0; round < 3; ++round) {
    for (size_t at = 0; at < frame.size(); at += 1000) {
      const size_t n = std::min<size_t>(1000, frame.size() - at);
      std::span<uint8_t> space = d.WritableSpace(kChunk);
      std::memcpy(space.data(), frame.data() + at, n);
      d.Commit(n);
      while (d.Next(&h, &p) == Result::kFrame) ++frames;
    }
  }
  CHECK(frames == 3);
  CHECK(d.capacity() <= ATR_FRAME_HEADER_SIZE + ATR_MAX_PAYLOAD + kChunk);
}

}  // namespace
}  // namespace atraced::proto

namespace atraced::proto {
namespace {

TEST_CASE("AppendFrame: writes the header little-endian", "[frame]") {
  const auto frame = MakeFrame(0x0102, 0x0001, 0xA1B2C3D4, Bytes({0xEE}));
  CHECK(frame == Bytes({'A', 'T', 'R', 'C', 1, 0, 0, 0, 0x02, 0x01, 0x01, 0x00,  //
                        0xD4, 0xC3, 0xB2, 0xA1, 0xEE}));
}

TEST_CASE("AppendFrame: a batch of frames grows geometrically", "[frame]") {
  // The daemon appends every reply of a batch to one vector; exact reservations would copy
  // the batch once per frame.
  std::vector<uint8_t> batch;
  const auto payload = Bytes({1, 2, 3, 4, 5, 6, 7, 8});
  size_t reallocations = 0;
  for (int i = 0; i < 100000; ++i) {
    const size_t before = batch.capacity();
    AppendFrame(batch, ATR_OP_FILE_APPEND, ATR_FLAG_REPLY, static_cast<uint32_t>(i), payload);
    if (batch.capacity() != before) ++reallocations;
  }
  CHECK(batch.size() == 100000u * 24);
  CHECK(reallocations < 40);
}

TEST_CASE("AppendFrame of a FILE_APPEND in place: the same bytes as the encoded payload framed", "[frame]") {
  std::vector<uint8_t> data(70000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  FileAppend m;
  m.file_id = 0x01020304;
  for (size_t size : {size_t{0}, size_t{1}, data.size()}) {
    m.data = std::span<const uint8_t>(data.data(), size);
    std::vector<uint8_t> payload;
    Encode(m, payload);
    std::vector<uint8_t> framed = Bytes({9, 9});  // appended after what is there
    std::vector<uint8_t> in_place = framed;
    AppendFrame(framed, ATR_OP_FILE_APPEND, 0, 77, payload);
    AppendFrame(in_place, 77, m);
    CHECK(in_place == framed);
    FrameDecoder d;
    d.Feed(std::span<const uint8_t>(in_place).subspan(2));
    FrameHeader h;
    std::span<const uint8_t> p;
    REQUIRE(d.Next(&h, &p) == FrameDecoder::Result::kFrame);
    FileAppend back;
    REQUIRE(Decode(p, &back).ok());
    CHECK(back.file_id == m.file_id);
    CHECK(std::equal(back.data.begin(), back.data.end(), m.data.begin(), m.data.end()));
  }
}

}  // namespace
}  // namespace atraced::proto
