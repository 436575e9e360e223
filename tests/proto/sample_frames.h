// Canonical sample streams: the PROTOCOL.md examples and the fuzz seed corpus.
#ifndef ATRACED_TESTS_PROTO_SAMPLE_FRAMES_H_
#define ATRACED_TESTS_PROTO_SAMPLE_FRAMES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "atraced/proto/codec.h"

namespace atraced::proto::testing {

// The HELLO request in PROTOCOL.md: version 1.0, asking for FD passing, request id 1.
inline std::vector<uint8_t> SampleHelloFrame() {
  std::vector<uint8_t> payload;
  Encode(Hello{ATR_VERSION_MAJOR, 0, ATR_FEATURE_FD_PASSING}, payload);  // a 1.0 client
  std::vector<uint8_t> frame;
  AppendFrame(frame, ATR_OP_HELLO, 0, 1, payload);
  return frame;
}

// The HELLO reply in PROTOCOL.md: granted FD passing to pid 4242, uid 1000.
inline std::vector<uint8_t> SampleHelloReplyFrame() {
  std::vector<uint8_t> payload;
  EncodeReplyOk(payload);
  Encode(HelloReply{ATR_VERSION_MAJOR, 0, ATR_MAX_PAYLOAD,
                    ATR_FEATURE_FD_PASSING, 4242, 1000},
         payload);
  std::vector<uint8_t> frame;
  AppendFrame(frame, ATR_OP_HELLO, ATR_FLAG_REPLY, 1, payload);
  return frame;
}

// The pipelined session in PROTOCOL.md: BEGIN + OPEN + APPEND + CLOSE + END in one write.
inline std::vector<uint8_t> SamplePipelinedEvent() {
  std::vector<uint8_t> stream;
  std::vector<uint8_t> payload;
  auto frame = [&](uint16_t opcode, uint32_t request_id) {
    AppendFrame(stream, opcode, 0, request_id, payload);
    payload.clear();
  };
  Encode(EventBegin{1, ATR_EVENT_SCHEDULE, ATR_SIDE_HOST, 0, 0, ""}, payload);
  frame(ATR_OP_EVENT_BEGIN, 2);
  FileOpen open;
  open.event_id = 1;
  open.file_id = 1;
  open.form = ATR_FILE_OBJECT;
  open.suffix = ATR_SUFFIX_TXT;
  open.name = "hccl";
  Encode(open, payload);
  frame(ATR_OP_FILE_OPEN, 3);
  const std::string text = "op=allreduce\n";
  Encode(FileAppend{1, std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size())},
         payload);
  frame(ATR_OP_FILE_APPEND, 4);
  Encode(IdRequest{1}, payload);
  frame(ATR_OP_FILE_CLOSE, 5);
  Encode(IdRequest{1}, payload);
  frame(ATR_OP_EVENT_END, 6);
  return stream;
}

inline std::vector<uint8_t> SampleDeviceStackcore() {
  std::vector<uint8_t> stream;
  std::vector<uint8_t> payload;
  Encode(EventBegin{9, ATR_EVENT_STACKCORE, ATR_SIDE_DEVICE, 3, 4242, "20240131235959123456"},
         payload);
  AppendFrame(stream, ATR_OP_EVENT_BEGIN, 0, 10, payload);
  payload.clear();
  FileOpen core;
  core.event_id = 9;
  core.file_id = 2;
  core.form = ATR_FILE_STACKCORE;
  core.signo = 11;
  core.tid = 4243;
  core.name = "python3";
  Encode(core, payload);
  AppendFrame(stream, ATR_OP_FILE_OPEN, 0, 11, payload);
  payload.clear();
  FileOpen ts;
  ts.event_id = 9;
  ts.file_id = 3;
  ts.form = ATR_FILE_TS;
  ts.device_id = 3;
  Encode(ts, payload);
  AppendFrame(stream, ATR_OP_FILE_OPEN, 0, 12, payload);
  payload.clear();
  Encode(IdRequest{3}, payload);
  AppendFrame(stream, ATR_OP_FILE_GET_FD, 0, 13, payload);
  return stream;
}

inline std::vector<uint8_t> SampleAdminRequests() {
  std::vector<uint8_t> stream;
  std::vector<uint8_t> payload;
  AppendFrame(stream, ATR_OP_STATUS, 0, 20, payload);
  Encode(ListRequest{0, 100}, payload);
  AppendFrame(stream, ATR_OP_LIST, 0, 21, payload);
  payload.clear();
  Encode(VacuumRequest{true}, payload);
  AppendFrame(stream, ATR_OP_VACUUM, 0, 22, payload);
  payload.clear();
  Encode(VacuumBy{true, ATR_VACUUM_OLDER_THAN | ATR_VACUUM_KEEP, 5, 3600000000ull, 0}, payload);
  AppendFrame(stream, ATR_OP_VACUUM_BY, 0, 23, payload);
  return stream;
}

inline std::vector<uint8_t> SampleReplies() {
  std::vector<uint8_t> stream = SampleHelloReplyFrame();
  std::vector<uint8_t> payload;
  auto reply = [&](uint16_t opcode, uint32_t request_id) {
    AppendFrame(stream, opcode, ATR_FLAG_REPLY, request_id, payload);
    payload.clear();
  };
  EncodeReplyOk(payload);
  Encode(PathReply{"/var/log/atrace/trace_7_7_20240131235959123456/1_event_7_20240131235959123456"},
         payload);
  reply(ATR_OP_EVENT_BEGIN, 2);
  EncodeReplyError(Status::Error(EINVAL, "object name: character 0x2f '/' not allowed"), payload);
  reply(ATR_OP_FILE_OPEN, 3);
  EncodeReplyOk(payload);
  Encode(SizeReply{13}, payload);
  reply(ATR_OP_FILE_APPEND, 4);
  EncodeReplyOk(payload);
  StatusReply status;
  status.record_num = 10;
  status.clients = 1;
  status.root = "/var/log";
  Encode(status, payload);
  reply(ATR_OP_STATUS, 20);
  EncodeReplyOk(payload);
  ListEntry entry;
  entry.seq = 1;
  entry.kind = ATR_EVENT_SCHEDULE;
  entry.pid = 7;
  entry.path = "trace_7_7_20240131235959123456/1_event_7_20240131235959123456";
  entry.comm = "python3";
  Encode(ListReply{{entry}}, payload);
  reply(ATR_OP_LIST, 21);
  EncodeReplyOk(payload);
  Encode(VacuumReply{{"trace_7_7_20240131235959123456"}}, payload);
  reply(ATR_OP_VACUUM, 22);
  EncodeReplyOk(payload);
  Encode(VacuumByReply{{"trace_7_7_20240131235959123456/1_event_7_20240131235959123456"}, 0, 4096}, payload);
  reply(ATR_OP_VACUUM_BY, 23);
  return stream;
}

// File name in tests/fuzz/corpus/frame_decoder/ -> contents.
// A 1.1 ring session: HELLO asking for memfd rings, a binary ring's registration, a report,
// a save, a release, GOODBYE and a CRASH, then the daemon's HELLO reply with its pid.
inline std::vector<uint8_t> SampleRingSession() {
  std::vector<uint8_t> stream, payload;
  auto add = [&](uint16_t opcode, uint16_t flags, uint32_t id) {
    AppendFrame(stream, opcode, flags, id, payload);
    payload.clear();
  };
  Encode(Hello{ATR_VERSION_MAJOR, ATR_VERSION_MINOR_MEMFD, ATR_FEATURE_MEMFD}, payload);
  add(ATR_OP_HELLO, 0, 1);
  RingRegister reg;
  reg.object_id = 1;
  reg.flags = ATR_RING_EXIT_SAVE;
  reg.msg_num = 1024;
  reg.msg_size = 112;
  reg.ring_bytes = 151552;
  reg.utc_offset_s = 28800;
  reg.name = "hccl";
  reg.structs = {RingStructEntry{0, "task", {RingStructField{6, 2, 4, "id"}, RingStructField{100, 3, 16, "tag"}}}};
  Encode(reg, payload);
  add(ATR_OP_RING_REGISTER, 0, 2);
  Encode(RingReport{true, {1}}, payload);
  add(ATR_OP_RING_REPORT, 0, 3);
  Encode(RingSaveAll{false, 0}, payload);
  add(ATR_OP_RING_SAVE_ALL, 0, 4);
  Encode(IdRequest{1}, payload);
  add(ATR_OP_RING_RELEASE, 0, 5);
  add(ATR_OP_GOODBYE, 0, 6);
  Encode(Crash{11, 1, 4243, 0x10}, payload);  // SIGSEGV, SEGV_MAPERR; a separate connection in practice
  add(ATR_OP_CRASH, 0, 7);
  EncodeReplyOk(payload);
  Encode(HelloReply{ATR_VERSION_MAJOR, ATR_VERSION_MINOR_MEMFD, ATR_MAX_PAYLOAD, ATR_FEATURE_MEMFD, 4242, 1000, 77},
         payload);
  add(ATR_OP_HELLO, ATR_FLAG_REPLY, 1);
  return stream;
}

// A STATUS reply with every block: retention, then the pools shared between users.
inline std::vector<uint8_t> SampleStatusWithPools() {
  StatusReply status;
  status.record_num = 10;
  status.clients = 3;
  status.root = "/var/log";
  status.retention.present = true;
  status.retention.max_use = 4ull << 30;
  status.shares.present = true;
  status.shares.pools = {{ATR_POOL_CONNECTIONS, 16384, 4096, 3, {{65534, 2}, {0, 1}}},
                         {ATR_POOL_RINGS, 32768, 8192, 2, {{65534, 2}}},
                         {ATR_POOL_RING_MEMORY, 4ull << 30, 1ull << 30, 303104, {{65534, 303104}}}};
  std::vector<uint8_t> stream, payload;
  EncodeReplyOk(payload);
  Encode(status, payload);
  AppendFrame(stream, ATR_OP_STATUS, ATR_FLAG_REPLY, 9, payload);
  return stream;
}

// PROCESS_DUMP: two pids, then a selection by uid and comm, and a reply with a dump and a refusal.
inline std::vector<uint8_t> SampleProcessDump() {
  std::vector<uint8_t> stream, payload;
  auto add = [&](uint16_t opcode, uint16_t flags, uint32_t id) {
    AppendFrame(stream, opcode, flags, id, payload);
    payload.clear();
  };
  Encode(ProcessDump{0, 0, "", {4242, 77}}, payload);
  add(ATR_OP_PROCESS_DUMP, 0, 1);
  Encode(ProcessDump{ATR_PROCESS_DUMP_UID | ATR_PROCESS_DUMP_COMM, 1000, "python3", {}}, payload);
  add(ATR_OP_PROCESS_DUMP, 0, 2);
  EncodeReplyOk(payload);
  ProcessDumpReply reply;
  reply.entries = {{4242, 0, 3, 2, 180, "/var/log/ascend/atrace/trace_1_4242_1/schedule_event_4242_2"},
                   {77, ATR_EPERM, 0, 0, 0, "pid 77 is uid 0's; uid 1000 may dump only its own processes"}};
  Encode(reply, payload);
  add(ATR_OP_PROCESS_DUMP, ATR_FLAG_REPLY, 1);
  return stream;
}

// LIST_LIVE: every process, one job's, and a reply with a stalled rank and one never written.
inline std::vector<uint8_t> SampleListLive() {
  std::vector<uint8_t> stream, payload;
  auto add = [&](uint16_t opcode, uint16_t flags, uint32_t id) {
    AppendFrame(stream, opcode, flags, id, payload);
    payload.clear();
  };
  Encode(ListLive{}, payload);
  add(ATR_OP_LIST_LIVE, 0, 1);
  Encode(ListLive{"J1"}, payload);
  add(ATR_OP_LIST_LIVE, 0, 2);
  EncodeReplyOk(payload);
  ListLiveReply reply;
  reply.omitted = 1;
  reply.entries = {{4242, 1000, ATR_LIVE_WATCHED | ATR_LIVE_STALLED, 2, 1765000000000000, 301000, 300000, "python3",
                    {"J1", "5", "8"}},
                   {77, 1000, ATR_LIVE_NEVER_WROTE, 1, 0, 0, 0, "", {}}};
  Encode(reply, payload);
  add(ATR_OP_LIST_LIVE, ATR_FLAG_REPLY, 2);
  return stream;
}

// AGED_DUMPS: one job's, and a reply with a hang dump the byte budget took.
inline std::vector<uint8_t> SampleAgedDumps() {
  std::vector<uint8_t> stream, payload;
  auto add = [&](uint16_t opcode, uint16_t flags, uint32_t id) {
    AppendFrame(stream, opcode, flags, id, payload);
    payload.clear();
  };
  Encode(ListLive{"J1"}, payload);
  add(ATR_OP_AGED_DUMPS, 0, 1);
  EncodeReplyOk(payload);
  AgedDumpsReply reply;
  reply.entries = {{1765000000000000, 1000, ATR_AGED_BYTES, ATR_AGED_HANG,
                    "trace_5_5_20261207035000000000/schedule_event_5_20261207035000000001", {"J1", "3", "8"}}};
  Encode(reply, payload);
  add(ATR_OP_AGED_DUMPS, ATR_FLAG_REPLY, 1);
  return stream;
}

inline std::vector<std::pair<std::string, std::vector<uint8_t>>> SeedCorpus() {
  std::vector<uint8_t> hello_and_event = SampleHelloFrame();
  const auto event = SamplePipelinedEvent();
  hello_and_event.insert(hello_and_event.end(), event.begin(), event.end());
  return {
      {"hello.bin", SampleHelloFrame()},
      {"pipelined_event.bin", hello_and_event},
      {"device_stackcore.bin", SampleDeviceStackcore()},
      {"admin.bin", SampleAdminRequests()},
      {"replies.bin", SampleReplies()},
      {"ring_session.bin", SampleRingSession()},
      {"status_reply_pools.bin", SampleStatusWithPools()},
      {"process_dump.bin", SampleProcessDump()},
      {"list_live.bin", SampleListLive()},
      {"aged_dumps.bin", SampleAgedDumps()},
  };
}

}  // namespace atraced::proto::testing

#endif  // ATRACED_TESTS_PROTO_SAMPLE_FRAMES_H_
