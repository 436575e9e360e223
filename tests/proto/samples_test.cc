// Pins the bytes PROTOCOL.md shows and the fuzz seed corpus to what the encoder produces,
// so neither can drift from the code.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "atraced/proto/frame_decoder.h"
#include "proto_test_util.h"
#include "sample_frames.h"

namespace atraced::proto {
namespace {

using testing::Bytes;
using testing::HexDump;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_CASE("the HELLO frame in PROTOCOL.md", "[samples]") {
  const auto frame = testing::SampleHelloFrame();
  // Written out by hand from the spec, not from the encoder.
  CHECK(frame == Bytes({'A', 'T', 'R', 'C',  // magic 0x43525441
                        0x10, 0x00, 0x00, 0x00,  // length 16
                        0x01, 0x00,              // opcode HELLO
                        0x00, 0x00,              // flags
                        0x01, 0x00, 0x00, 0x00,  // request_id 1
                        0x01, 0x00,              // version_major 1
                        0x00, 0x00,              // version_minor 0
                        0x00, 0x00, 0x00, 0x00,  // reserved
                        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}));  // FD_PASSING
  CHECK(HexDump(frame) ==
        "00000000  41 54 52 43 10 00 00 00  01 00 00 00 01 00 00 00  |ATRC............|\n"
        "00000010  01 00 00 00 00 00 00 00  01 00 00 00 00 00 00 00  |................|\n"
        "00000020\n");
}

TEST_CASE("the sample frames decode", "[samples]") {
  FrameDecoder d;
  std::vector<uint8_t> all;
  for (const auto& [name, bytes] : testing::SeedCorpus()) all.insert(all.end(), bytes.begin(), bytes.end());
  d.Feed(all);
  FrameHeader h;
  std::span<const uint8_t> p;
  int frames = 0;
  while (d.Next(&h, &p) == FrameDecoder::Result::kFrame) {
    ++frames;
    INFO("frame " << frames << " opcode " << OpcodeName(h.opcode));
    if (h.flags & ATR_FLAG_REPLY) {
      ReplyHead head;
      REQUIRE(DecodeReply(p, &head).ok());
      continue;
    }
    Status r;
    switch (h.opcode) {
      case ATR_OP_HELLO: { Hello m; r = Decode(p, &m); break; }
      case ATR_OP_EVENT_BEGIN: { EventBegin m; r = Decode(p, &m); break; }
      case ATR_OP_FILE_OPEN: { FileOpen m; r = Decode(p, &m); break; }
      case ATR_OP_FILE_APPEND: { FileAppend m; r = Decode(p, &m); break; }
      case ATR_OP_STATUS: { StatusRequest m; r = Decode(p, &m); break; }
      case ATR_OP_LIST: { ListRequest m; r = Decode(p, &m); break; }
      case ATR_OP_VACUUM: { VacuumRequest m; r = Decode(p, &m); break; }
      case ATR_OP_VACUUM_BY: { VacuumBy m; r = Decode(p, &m); break; }
      case ATR_OP_RING_REGISTER: { RingRegister m; r = Decode(p, &m); break; }
      case ATR_OP_RING_REPORT: { RingReport m; r = Decode(p, &m); break; }
      case ATR_OP_RING_SAVE_ALL: { RingSaveAll m; r = Decode(p, &m); break; }
      case ATR_OP_GOODBYE: { Goodbye m; r = Decode(p, &m); break; }
      case ATR_OP_CRASH: { Crash m; r = Decode(p, &m); break; }
      case ATR_OP_PROCESS_DUMP: { ProcessDump m; r = Decode(p, &m); break; }
      case ATR_OP_LIST_LIVE:
      case ATR_OP_AGED_DUMPS: { ListLive m; r = Decode(p, &m); break; }
      default: { IdRequest m; r = Decode(p, &m); break; }
    }
    CHECK(r.ok());
  }
  CHECK(d.error().empty());
  CHECK(d.buffered() == 0);
  CHECK(frames == 1 + 1 + 5 + 4 + 4 + 8 + 8 + 1 + 3 + 3 + 2);
}

#ifdef ATRACED_SOURCE_DIR
TEST_CASE("PROTOCOL.md shows the encoder's bytes", "[samples][doc]") {
  const std::string doc = ReadFile(std::string(ATRACED_SOURCE_DIR) + "/proto/PROTOCOL.md");
  REQUIRE_FALSE(doc.empty());
  CHECK(doc.find(HexDump(testing::SampleHelloFrame())) != std::string::npos);
  CHECK(doc.find(HexDump(testing::SampleHelloReplyFrame())) != std::string::npos);
  CHECK(doc.find(HexDump(testing::SamplePipelinedEvent())) != std::string::npos);
}

// Set ATRACED_REGENERATE_CORPUS=1 to rewrite the files after changing the samples.
TEST_CASE("fuzz seed corpus is current", "[samples][fuzz]") {
  const std::string dir = std::string(ATRACED_SOURCE_DIR) + "/tests/fuzz/corpus/frame_decoder/";
  const bool regenerate = std::getenv("ATRACED_REGENERATE_CORPUS") != nullptr;
  for (const auto& [name, bytes] : testing::SeedCorpus()) {
    INFO(dir + name);
    if (regenerate) {
      std::ofstream out(dir + name, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
      REQUIRE(out.good());
    }
    const std::string file = ReadFile(dir + name);
    CHECK(std::vector<uint8_t>(file.begin(), file.end()) == bytes);
  }
}
#endif

}  // namespace
}  // namespace atraced::proto
