// The fake device against a minimal host (mini_host.h): hello, long link, TS chunks,
// utrace objects, packet chains at a small maxSegment, [end] with and without a flush
// window, duplicate and vanished hosts, a device restart, hostile messages.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <thread>

#include "fake_device_process.h"
#include "mini_host.h"

using namespace mini_host;
using atraced::hal_double::testing::FakeDevice;
using Recv = channel::Recv;

namespace {

const std::string kPid = std::to_string(::getpid());

// A socket dir, the environment pointing at it, and a fake device on it.
struct Bench {
  explicit Bench(std::vector<std::string> flags = {}, std::map<std::string, std::string> env = {})
      : dir_env("ATRACE_HAL_DOUBLE_DIR", dir.path()) {
    for (const auto& [k, v] : env) scoped.emplace_back(std::make_unique<ScopedEnv>(k.c_str(), v));
    device.emplace(FakeDevice::Options{dir.path(), 0, 2, std::move(flags), {}});
    REQUIRE(device->Start());
  }
  ~Bench() {
    // The device must leave cleanly, and under a sanitizer tree with nothing reported.
    CHECK(device->Quit());
    const std::string log = device->log();
    INFO(log);
    CHECK(log.find("Sanitizer") == std::string::npos);
    CHECK(log.find("runtime error") == std::string::npos);
  }
  SocketDir dir;
  ScopedEnv dir_env;
  std::vector<std::unique_ptr<ScopedEnv>> scoped;
  std::optional<FakeDevice> device;
};

wire::Event ReadEvent(Link& link) {
  std::string payload, why;
  const Recv r = link.Read(&payload, 5000, &why);
  INFO(why);
  REQUIRE(r == Recv::kOk);
  wire::Event e;
  REQUIRE(wire::DecodeEvent(payload, &e));
  return e;
}

bool SessionsBecome(const FakeDevice& device, const std::string& reply) {
  for (int i = 0; i < 100; ++i) {
    if (device.Command("sessions") == reply) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TEST_CASE("hello: the echo, then HDC_END_MSG, then the device closes") {
  Bench bench;
  Link link;
  REQUIRE(link.Open(0) == DRV_ERROR_NONE);
  REQUIRE(link.Send(wire::kStatusNoneError, wire::Hello()) == DRV_ERROR_NONE);
  std::string payload, why;
  REQUIRE(link.Read(&payload, 3000, &why) == Recv::kOk);
  CHECK(payload == wire::Hello());
  REQUIRE(link.Read(&payload, 3000, &why) == Recv::kOk);
  CHECK(payload == wire::kHdcEndMsg);
  CHECK(link.Read(&payload, 3000, &why) == Recv::kClosed);
}

TEST_CASE("hello with a wrong magic is closed without a reply") {
  Bench bench;
  Link link;
  REQUIRE(link.Open(0) == DRV_ERROR_NONE);
  REQUIRE(link.Send(wire::kStatusNoneError, wire::Hello(0x1234)) == DRV_ERROR_NONE);
  std::string payload, why;
  CHECK(link.Read(&payload, 3000, &why) == Recv::kClosed);
}

TEST_CASE("the hello-mismatch mode answers with a wrong magic, the hello-silent mode never answers") {
  SECTION("mismatch") {
    Bench bench({"--hello-mismatch"});
    Link link;
    REQUIRE(link.Open(0) == DRV_ERROR_NONE);
    REQUIRE(link.Send(wire::kStatusNoneError, wire::Hello()) == DRV_ERROR_NONE);
    std::string payload, why;
    REQUIRE(link.Read(&payload, 3000, &why) == Recv::kOk);
    CHECK(payload != wire::Hello());
    CHECK(payload[0] == wire::kHello);
    REQUIRE(link.Read(&payload, 3000, &why) == Recv::kOk);
    CHECK(payload == wire::kHdcEndMsg);
  }
  SECTION("silent") {
    Bench bench({"--hello-silent"});
    Link link;
    REQUIRE(link.Open(0) == DRV_ERROR_NONE);
    REQUIRE(link.Send(wire::kStatusNoneError, wire::Hello()) == DRV_ERROR_NONE);
    std::string payload, why;
    CHECK(link.Read(&payload, 1000, &why) == Recv::kNoData);
    link.Close();
    // The device notices the host gave up and still serves the next one.
    CHECK(bench.device->Ok("sessions"));
  }
}

TEST_CASE("long link: a utrace .bin with its own time and a TS event of three chunks with one device time") {
  Bench bench;
  Link link;
  REQUIRE(OpenLongLink(link, 0) == DRV_ERROR_NONE);
  REQUIRE(bench.device->WaitForSession(::getpid()));
  CHECK(bench.device->Command("sessions") == "ok 1 " + kPid + ":0:live");
  REQUIRE(bench.device->Ok("utrace " + kPid + " HCCL_obj bin 22 20260101120000123456"));
  REQUIRE(bench.device->Ok("ts " + kPid + " start 17 A"));
  REQUIRE(bench.device->Ok("ts " + kPid + " mid 300000 B"));
  REQUIRE(bench.device->Ok("ts " + kPid + " end 32 C"));

  const wire::Event object = ReadEvent(link);
  CHECK(object.seq_flag == wire::kSeqSingle);
  CHECK(object.name == "HCCL_obj");
  CHECK(object.time == "20260101120000123456");
  CHECK(object.save_type == 1);
  CHECK(object.pid == ::getpid());
  CHECK(object.dev_id == 0);
  REQUIRE(object.buf_len == 22);
  CHECK(object.data == std::string("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15", 22));

  const std::string fills = "ABC";
  const size_t sizes[] = {17, 300000, 32};
  std::string time;
  for (int i = 0; i < 3; ++i) {
    const wire::Event chunk = ReadEvent(link);
    CHECK(chunk.seq_flag == i);
    CHECK(chunk.name == "ts_2");  // the physical id
    CHECK(chunk.save_type == 0);
    CHECK(chunk.buf_len == sizes[i]);
    CHECK(chunk.data == std::string(sizes[i], fills[static_cast<size_t>(i)]));
    CHECK(chunk.time.size() == 20);
    if (i == 0) time = chunk.time;
    CHECK(chunk.time == time);
  }
}

TEST_CASE("a small maxSegment: one event arrives as a chain of packets of maxSegment - 12 payload bytes") {
  Bench bench({}, {{"ATRACE_HAL_DOUBLE_MAX_SEGMENT", "4096"}});
  Link link;
  REQUIRE(OpenLongLink(link, 0) == DRV_ERROR_NONE);
  REQUIRE(bench.device->WaitForSession(::getpid()));
  REQUIRE(bench.device->Ok("ts " + kPid + " start 100000"));
  std::string message;
  size_t packets = 0;
  for (bool last = false; !last; ++packets) {
    std::string hdc, why;
    REQUIRE(channel::RecvOne(link.session(), &hdc, HDC_FLAG_WAIT_TIMEOUT, 5000) == DRV_ERROR_NONE);
    CHECK(hdc.size() <= 4096);
    wire::PacketView packet;
    REQUIRE(wire::ParsePacket(hdc, &packet, &why));
    CHECK(hdc.size() == 12 + packet.len);
    last = packet.is_last;
    if (!last) CHECK(packet.len == 4096 - 12);
    message.append(packet.payload);
  }
  CHECK(packets == (24 + 116 + 100000 + 4083) / 4084);
  wire::ProtoView proto;
  std::string why;
  REQUIRE(wire::ParseProto(message, &proto, &why));
  wire::Event e;
  REQUIRE(wire::DecodeEvent(proto.payload, &e));
  CHECK(e.data.size() == 100000);
  CHECK(e.data.substr(0, 27) == "abcdefghijklmnopqrstuvwxyza");
}

TEST_CASE("[end] with the default flush timeout: the device closes the long link on its next tick") {
  Bench bench;
  Link link;
  REQUIRE(OpenLongLink(link, 0) == DRV_ERROR_NONE);
  REQUIRE(bench.device->WaitForSession(::getpid()));
  REQUIRE(bench.device->Ok("ts " + kPid + " start 10"));
  CHECK(ReadEvent(link).seq_flag == wire::kSeqStart);
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(SendEnd(0) == DRV_ERROR_NONE);
  std::string payload, why;
  CHECK(link.Read(&payload, 3000, &why) == Recv::kClosed);  // no TraceEndMsg: no end chunk was pending
  // Its next 100 ms tick, with a loaded machine's margin; still under the read's 3 s.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(2500));
  CHECK(bench.device->Command("sessions") == "ok 0");
}

TEST_CASE("[end] with a flush window: an end chunk still goes out, then TraceEndMsg and HDC_END_MSG") {
  Bench bench;
  Link link;
  REQUIRE(OpenLongLink(link, 0, 3000) == DRV_ERROR_NONE);
  REQUIRE(bench.device->WaitForSession(::getpid()));
  REQUIRE(bench.device->Ok("ts " + kPid + " start 5 A"));
  const wire::Event first = ReadEvent(link);
  REQUIRE(SendEnd(0) == DRV_ERROR_NONE);
  REQUIRE(SessionsBecome(*bench.device, "ok 1 " + kPid + ":0:deleted"));
  REQUIRE(bench.device->Ok("ts " + kPid + " end 7 C"));
  const wire::Event last = ReadEvent(link);
  CHECK(last.seq_flag == wire::kSeqEnd);
  CHECK(last.time == first.time);
  std::string payload, why;
  REQUIRE(link.Read(&payload, 3000, &why) == Recv::kOk);
  CHECK(payload == wire::End());
  REQUIRE(link.Read(&payload, 3000, &why) == Recv::kOk);
  CHECK(payload == wire::kHdcEndMsg);
  CHECK(link.Read(&payload, 3000, &why) == Recv::kClosed);
}

TEST_CASE("a second long link of the same process is refused while the first is known") {
  Bench bench;
  Link first, second;
  REQUIRE(OpenLongLink(first, 0) == DRV_ERROR_NONE);
  REQUIRE(bench.device->WaitForSession(::getpid()));
  REQUIRE(OpenLongLink(second, 0) == DRV_ERROR_NONE);
  std::string payload, why;
  CHECK(second.Read(&payload, 3000, &why) == Recv::kClosed);
  REQUIRE(bench.device->Ok("utrace " + kPid + " obj txt 4 20260101120000000001 z"));
  CHECK(ReadEvent(first).data == "zzzz");
}

TEST_CASE("without a long link chunks are dropped, and --refuse-long-link closes it") {
  SECTION("no session node") {
    Bench bench;
    CHECK(bench.device->Command("ts " + kPid + " start 10") == "err no session node is valid");
    CHECK(bench.device->Command("utrace " + kPid + " x txt 1 1") == "err no session node is valid");
  }
  SECTION("refused") {
    Bench bench({"--refuse-long-link"});
    Link link;
    // The device closes the link as it accepts it: the open itself fails when the close
    // comes before the open's own send, else the first read sees the link closed.
    if (OpenLongLink(link, 0) == DRV_ERROR_NONE) {
      std::string payload, why;
      CHECK(link.Read(&payload, 3000, &why) == Recv::kClosed);
    }
    CHECK(bench.device->Command("sessions") == "ok 0");
  }
}

TEST_CASE("a host that goes away is reaped, drop-long-links closes every long link, and both allow a new one") {
  Bench bench;
  {
    Link link;
    REQUIRE(OpenLongLink(link, 0) == DRV_ERROR_NONE);
    REQUIRE(bench.device->WaitForSession(::getpid()));
    // Big chunks queued for a host that leaves without reading them.
    for (int i = 0; i < 4; ++i) REQUIRE(bench.device->Ok("ts " + kPid + " mid 500000"));
  }
  REQUIRE(SessionsBecome(*bench.device, "ok 0"));

  Link again;
  REQUIRE(OpenLongLink(again, 0) == DRV_ERROR_NONE);
  REQUIRE(bench.device->WaitForSession(::getpid()));
  CHECK(bench.device->Command("drop-long-links") == "ok dropped 1");
  std::string payload, why;
  CHECK(again.Read(&payload, 3000, &why) == Recv::kClosed);
  CHECK(bench.device->Command("sessions") == "ok 0");

  Link third;
  REQUIRE(OpenLongLink(third, 0) == DRV_ERROR_NONE);
  REQUIRE(bench.device->WaitForSession(::getpid()));
  REQUIRE(bench.device->Ok("utrace " + kPid + " after txt 3 20260101120000000001 k"));
  CHECK(ReadEvent(third).data == "kkk");
  CHECK(bench.device->Command("flush") == "ok flushed");
}

TEST_CASE("hostile messages arrive as built, and the stream goes on after each") {
  Bench bench;
  Link link;
  REQUIRE(OpenLongLink(link, 0) == DRV_ERROR_NONE);
  REQUIRE(bench.device->WaitForSession(::getpid()));
  const std::pair<const char*, Recv> kinds[] = {
      {"buflen-lie", Recv::kOk},          {"name-dotdot", Recv::kOk},          {"name-slash", Recv::kOk},
      {"name-unterminated", Recv::kOk},   {"name-empty", Recv::kOk},           {"time-bad", Recv::kOk},
      {"oversized", Recv::kTooBig},       {"short-packet", Recv::kBadPacket},  {"bad-packet-type", Recv::kBadPacket},
      {"proto-bad-slice", Recv::kBadPacket}, {"proto-empty", Recv::kBadPacket}, {"proto-file-load", Recv::kBadPacket},
      {"unknown-msgtype", Recv::kOk},     {"event-too-short", Recv::kOk}};
  for (const auto& [kind, expected] : kinds) {
    INFO(kind);
    REQUIRE(bench.device->Ok(std::string("hostile ") + kPid + " " + kind));
    REQUIRE(bench.device->Ok("utrace " + kPid + " good txt 2 20260101120000000001 g"));
    std::string payload, why;
    CHECK(link.Read(&payload, 5000, &why) == expected);
    wire::Event e;
    if (std::string(kind) == "buflen-lie") {
      REQUIRE(wire::DecodeEvent(payload, &e));
      CHECK(e.buf_len > e.data.size());
    } else if (std::string(kind) == "name-dotdot") {
      REQUIRE(wire::DecodeEvent(payload, &e));
      CHECK(e.name == "../x");
    } else if (std::string(kind) == "name-unterminated") {
      REQUIRE(wire::DecodeEvent(payload, &e));
      CHECK(e.name == std::string(32, 'N'));
    } else if (std::string(kind) == "event-too-short") {
      CHECK(payload.size() < 116);
      CHECK(payload[0] == wire::kEvent);
    }
    CHECK(ReadEvent(link).data == "gg");
  }
}
