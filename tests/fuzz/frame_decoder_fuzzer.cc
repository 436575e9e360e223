// libFuzzer target: arbitrary bytes, in arbitrary chunks, through FrameDecoder, and every
// frame's payload through every decoder. Finds out-of-bounds reads, unbounded allocations
// and decoders that accept what their own encoder would not produce.
//
//   clang++ -std=c++20 -fsanitize=fuzzer,address,undefined -I proto/include \
//     tests/fuzz/frame_decoder_fuzzer.cc proto/src/*.cc -o /tmp/fd_fuzz
//   /tmp/fd_fuzz -max_total_time=60 tests/fuzz/corpus/frame_decoder
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <span>
#include <vector>

#include "atraced/proto/codec.h"
#include "atraced/proto/frame_decoder.h"

namespace {

using namespace atraced::proto;

// Decoding must never crash; when it succeeds, re-encoding must give back the same bytes
// (for requests, whose sizes are exact) so decoder and encoder cannot drift apart.
template <typename Message>
void CheckRequest(std::span<const uint8_t> payload) {
  Message m;
  if (Decode(payload, &m)) return;
  std::vector<uint8_t> again;
  Encode(m, again);
  if (again.size() != payload.size() || !std::equal(again.begin(), again.end(), payload.begin())) {
    std::abort();
  }
}

template <typename Message>
void CheckReplyBody(std::span<const uint8_t> body) {
  Message m;
  if (Decode(body, &m)) return;
  // Replies ignore trailing bytes, so the re-encoding must be a prefix of the body.
  std::vector<uint8_t> again;
  Encode(m, again);
  if (again.size() > body.size() || !std::equal(again.begin(), again.end(), body.begin())) {
    std::abort();
  }
}

void DecodeEverything(std::span<const uint8_t> payload) {
  CheckRequest<Hello>(payload);
  CheckRequest<EventBegin>(payload);
  CheckRequest<FileOpen>(payload);
  CheckRequest<FileAppend>(payload);
  CheckRequest<IdRequest>(payload);
  CheckRequest<StatusRequest>(payload);
  CheckRequest<ListRequest>(payload);
  CheckRequest<VacuumRequest>(payload);

  ReplyHead head;
  if (!DecodeReply(payload, &head)) {
    std::vector<uint8_t> again;
    if (head.status == 0) {
      EncodeReplyOk(again);
    } else {
      EncodeReplyError(head.status, head.message, again);
    }
    if (again.size() > payload.size() || !std::equal(again.begin(), again.end(), payload.begin())) {
      std::abort();
    }
    CheckReplyBody<HelloReply>(head.body);
    CheckReplyBody<PathReply>(head.body);
    CheckReplyBody<SizeReply>(head.body);
    CheckReplyBody<StatusReply>(head.body);
    CheckReplyBody<ListReply>(head.body);
    CheckReplyBody<VacuumReply>(head.body);
  }
}

struct Frame {
  FrameHeader header;
  std::vector<uint8_t> payload;
};

// Runs `stream` through a FrameDecoder in chunks of `chunk` bytes, decoding every frame.
// Returns the frames and whether the stream ended in a framing error.
std::vector<Frame> Deframe(std::span<const uint8_t> stream, size_t chunk, bool* failed) {
  std::vector<Frame> frames;
  FrameDecoder decoder;
  *failed = false;
  for (size_t at = 0; at < stream.size() && !*failed; at += chunk) {
    decoder.Feed(stream.subspan(at, std::min(chunk, stream.size() - at)));
    FrameHeader header;
    std::span<const uint8_t> payload;
    FrameDecoder::Result r;
    while ((r = decoder.Next(&header, &payload)) == FrameDecoder::Result::kFrame) {
      if (payload.size() != header.length) std::abort();
      DecodeEverything(payload);
      frames.push_back({header, std::vector<uint8_t>(payload.begin(), payload.end())});
    }
    if (r == FrameDecoder::Result::kError) {
      // Sticky, explained, and nothing kept.
      if (decoder.error().empty() || decoder.buffered() != 0) std::abort();
      if (decoder.Next(&header, &payload) != FrameDecoder::Result::kError) std::abort();
      *failed = true;
    }
  }
  return frames;
}

bool SameFrames(const std::vector<Frame>& a, const std::vector<Frame>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const FrameHeader& x = a[i].header;
    const FrameHeader& y = b[i].header;
    if (x.length != y.length || x.opcode != y.opcode || x.flags != y.flags ||
        x.request_id != y.request_id || a[i].payload != b[i].payload) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> stream(data, size);
  // Chunking must not matter: the whole stream at once and in small odd-sized pieces give
  // the same frames and the same verdict.
  bool whole_failed = false;
  bool chunked_failed = false;
  const auto whole = Deframe(stream, size == 0 ? 1 : size, &whole_failed);
  const auto chunked = Deframe(stream, 1 + size % 23, &chunked_failed);
  if (whole_failed != chunked_failed || !SameFrames(whole, chunked)) std::abort();
  // Whatever framing made of it, every decoder also sees the raw bytes as a payload.
  DecodeEverything(stream);
  return 0;
}
