// PROCESS_DUMP (ATR_FEATURE_PROCESS_DUMP): the request's layout and every rejection rule,
// and the reply's entries.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "atraced/proto/codec.h"
#include "proto_test_util.h"

namespace atraced::proto {
namespace {

using testing::Bytes;
using testing::EncodeToVector;
using testing::RequireDecoded;
using testing::RequireRejected;

TEST_CASE("PROCESS_DUMP: pids after the 16-byte head, round trip", "[codec][process_dump]") {
  const auto payload = EncodeToVector(ProcessDump{0, 0, "", {0x1234, 7}});
  CHECK(payload == Bytes({0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,  // select, uid, pid_count, comm_len
                          0x34, 0x12, 0, 0, 7, 0, 0, 0}));
  const ProcessDump m = RequireDecoded<ProcessDump>(payload);
  CHECK(m.pids == std::vector<int32_t>{0x1234, 7});
  CHECK(m.select == 0);
}

TEST_CASE("PROCESS_DUMP: a selection by job label, its bytes after the comm's", "[codec][process_dump][labels]") {
  ProcessDump in{ATR_PROCESS_DUMP_COMM | ATR_PROCESS_DUMP_JOB, 0, "app", {}};
  in.job = "J1";
  const auto payload = EncodeToVector(in);
  CHECK(payload == Bytes({0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 2, 0, 0, 0, 0, 'a', 'p', 'p', 'J', '1'}));
  const ProcessDump m = RequireDecoded<ProcessDump>(payload);
  CHECK(m.job == "J1");
  CHECK(m.comm == "app");
  ProcessDump no_bit{ATR_PROCESS_DUMP_ALL, 0, "", {}};
  no_bit.job = "J1";  // a job without ATR_PROCESS_DUMP_JOB
  ProcessDump out;
  CHECK(Decode(EncodeToVector(no_bit), &out).err() == EINVAL);
  ProcessDump bad{ATR_PROCESS_DUMP_JOB, 0, "", {}};
  bad.job = "J\x1b[2J";
  const Status refused = Decode(EncodeToVector(bad), &out);
  CHECK(refused.err() == EINVAL);
  CHECK(refused.message() == "job: only letters, digits and . _ : @ + = - are allowed");
}

TEST_CASE("PROCESS_DUMP: a selection by uid and comm", "[codec][process_dump]") {
  const auto payload = EncodeToVector(ProcessDump{ATR_PROCESS_DUMP_UID | ATR_PROCESS_DUMP_COMM, 1000, "train.py", {}});
  CHECK(payload.size() == 16 + 8);
  const ProcessDump m = RequireDecoded<ProcessDump>(payload);
  CHECK(m.uid == 1000);
  CHECK(m.comm == "train.py");
  CHECK(m.pids.empty());
  CHECK(RequireDecoded<ProcessDump>(EncodeToVector(ProcessDump{ATR_PROCESS_DUMP_ALL, 0, "", {}})).select ==
        ATR_PROCESS_DUMP_ALL);
}

TEST_CASE("PROCESS_DUMP: garbage is refused, naming the field", "[codec][process_dump]") {
  RequireRejected<ProcessDump>(Bytes({0, 0, 0}), ATR_EBADMSG, "PROCESS_DUMP");
  RequireRejected<ProcessDump>(EncodeToVector(ProcessDump{0, 0, "", {}}), ATR_EINVAL, "select");  // neither
  RequireRejected<ProcessDump>(EncodeToVector(ProcessDump{ATR_PROCESS_DUMP_ALL, 0, "", {1}}), ATR_EINVAL, "select");
  RequireRejected<ProcessDump>(EncodeToVector(ProcessDump{0x10, 0, "", {}}), ATR_EINVAL, "select");
  RequireRejected<ProcessDump>(EncodeToVector(ProcessDump{ATR_PROCESS_DUMP_ALL, 5, "", {}}), ATR_EINVAL, "uid");
  RequireRejected<ProcessDump>(EncodeToVector(ProcessDump{ATR_PROCESS_DUMP_COMM, 0, "", {}}), ATR_EINVAL, "comm_len");
  RequireRejected<ProcessDump>(EncodeToVector(ProcessDump{ATR_PROCESS_DUMP_ALL, 0, "x", {}}), ATR_EINVAL, "comm_len");
  RequireRejected<ProcessDump>(EncodeToVector(ProcessDump{ATR_PROCESS_DUMP_COMM, 0, "a/b", {}}), ATR_EINVAL, "comm");
  RequireRejected<ProcessDump>(EncodeToVector(ProcessDump{0, 0, "", {0}}), ATR_EINVAL, "pid");
  RequireRejected<ProcessDump>(EncodeToVector(ProcessDump{0, 0, "", {-3}}), ATR_EINVAL, "pid");
  RequireRejected<ProcessDump>(EncodeToVector(ProcessDump{0, 0, "", {5, 5}}), ATR_EINVAL, "given twice");
  RequireRejected<ProcessDump>(EncodeToVector(ProcessDump{0, 0, "", std::vector<int32_t>(ATR_MAX_DUMP_PROCESSES + 1, 1)}),
                               ATR_EINVAL, "pid_count");
  auto reserved = EncodeToVector(ProcessDump{0, 0, "", {1}});
  reserved[15] = 1;
  RequireRejected<ProcessDump>(reserved, ATR_EINVAL, "reserved");
  auto longer = EncodeToVector(ProcessDump{0, 0, "", {1}});
  longer.push_back(0);
  RequireRejected<ProcessDump>(longer, ATR_EBADMSG, "counts say");
  auto shorter = EncodeToVector(ProcessDump{0, 0, "", {1}});
  shorter.pop_back();
  RequireRejected<ProcessDump>(shorter, ATR_EBADMSG, "counts say");
}

TEST_CASE("PROCESS_DUMP reply: a path per dump, a message per refusal", "[codec][process_dump]") {
  ProcessDumpReply reply;
  reply.omitted = 3;
  reply.entries = {{42, 0, 3, 2, 150, "/r/atrace/trace_1_42_1/schedule_event_42_2"},
                   {43, ATR_EPERM, 0, 0, 0, "pid 43 is uid 0's"}};
  const auto body = EncodeToVector(reply);
  CHECK(body.size() == 8 + 2 * 26 + reply.entries[0].text.size() + reply.entries[1].text.size());
  const auto back = RequireDecoded<ProcessDumpReply>(body);
  REQUIRE(back.entries.size() == 2);
  CHECK(back.omitted == 3);
  CHECK(back.entries[0].threads == 3);
  CHECK(back.entries[0].rings == 2);
  CHECK(back.entries[0].max_stop_us == 150);
  CHECK(back.entries[1].status == ATR_EPERM);
  CHECK(back.entries[1].text == "pid 43 is uid 0's");
  ProcessDumpReply relative;
  relative.entries = {{42, 0, 0, 0, 0, "trace_1/x"}};
  RequireRejected<ProcessDumpReply>(EncodeToVector(relative), ATR_EINVAL, "path");
  ProcessDumpReply positive;
  positive.entries = {{42, 5, 0, 0, 0, "?"}};
  RequireRejected<ProcessDumpReply>(EncodeToVector(positive), ATR_EINVAL, "status");
  auto cut = body;
  cut.resize(body.size() - 1);
  RequireRejected<ProcessDumpReply>(cut, ATR_EBADMSG, "message");
}

}  // namespace
}  // namespace atraced::proto
