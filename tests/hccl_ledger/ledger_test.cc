// The collective ledger's writer (libatrace_hccl) and reader (proto/ledger_reader.h) together,
// and the reader alone on hostile bytes: what a process writes into its own ledger is never
// trusted by the daemon or atracectl.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "atraced/proto/ledger_reader.h"
#include "ledger_writer.h"

using atrace_hccl::CallRecord;
using atrace_hccl::LedgerWriter;
using atraced::proto::LedgerSnapshot;
using atraced::proto::ReadLedger;

namespace {

CallRecord AllReduce(uint64_t seq, uint64_t count, std::string_view comm = "hccl_world_group") {
  CallRecord r;
  r.op = ATR_LEDGER_OP_ALL_REDUCE;
  r.comm_seq = seq;
  r.count = count;
  r.stream = 0x5151;
  r.rank = 3;
  r.size = 8;
  r.data_type = 3;
  r.reduce_op = 0;
  r.comm = comm;
  return r;
}

std::vector<uint8_t> Copy(const LedgerWriter& w) {
  std::vector<uint8_t> out;
  atraced::proto::CopyLedgerUsed(w.data(), w.bytes(), &out);
  return out;
}

// The record in slot `i` of a copy.
atr_ledger_record* SlotOf(std::vector<uint8_t>& bytes, uint32_t i) {
  return reinterpret_cast<atr_ledger_record*>(bytes.data() + ATR_LEDGER_HEADER_SIZE + i * ATR_LEDGER_RECORD_SIZE);
}

}  // namespace

TEST_CASE("ledger: what the writer appends the reader decodes, completion only where it was stored") {
  LedgerWriter w;
  REQUIRE(w.Create(8));
  const uint64_t s1 = w.Append(AllReduce(1, 4096), 1000, 77);
  CallRecord b;
  b.op = ATR_LEDGER_OP_BROADCAST;
  b.comm_seq = 1;
  b.count = 9;
  b.peer = 0;
  b.size = 2;
  b.data_type = 4;
  b.comm = "tp_pair";
  b.flags = ATR_LEDGER_REC_COMPLETION;
  const uint64_t s2 = w.Append(b, 2000, 78);
  CHECK(s1 == 1);
  CHECK(s2 == 2);
  w.Complete(s2, 2500);
  std::vector<uint8_t> bytes = Copy(w);
  const LedgerSnapshot snap = ReadLedger(bytes, 8);
  REQUIRE(snap.header_valid);
  CHECK_FALSE(snap.completion_tracked());
  CHECK(snap.write_index == 2);
  REQUIRE(snap.records.size() == 2);
  const auto& r1 = snap.records[0];
  CHECK(r1.comm == "hccl_world_group");
  CHECK(r1.comm_seq == 1);
  CHECK(r1.count == 4096);
  CHECK(r1.rank == 3);
  CHECK(r1.size == 8);
  CHECK(r1.rank_known);
  CHECK(r1.stream == 0x5151);
  CHECK(r1.tid == 77);
  CHECK(r1.enqueue_ns == 1000);
  CHECK_FALSE(r1.peer.has_value());
  CHECK_FALSE(r1.completion_tracked);
  CHECK_FALSE(r1.completion_ns.has_value());
  CHECK(atraced::proto::LedgerOpName(r1.op) == "AllReduce");
  CHECK(atraced::proto::HcclDataTypeName(r1.data_type) == "fp16");
  const auto& r2 = snap.records[1];
  CHECK(r2.comm == "tp_pair");
  CHECK(r2.peer == 0u);
  CHECK(r2.completion_tracked);
  CHECK(r2.completion_ns == 2500u);
  CHECK(snap.empty == 6);
  CHECK(snap.torn == 0);
  CHECK(snap.invalid == 0);
  w.MarkCompletionTracked();
  CHECK(ReadLedger(Copy(w)).completion_tracked());
}

TEST_CASE("ledger: a full ledger keeps the newest calls, and a reused slot never takes another call's completion") {
  LedgerWriter w;
  REQUIRE(w.Create(8));
  for (uint64_t i = 1; i <= 20; ++i) w.Append(AllReduce(i, i * 10), i, 1);
  w.Complete(3, 99);  // call 3's slot now holds call 11 (and then 19)
  const std::vector<uint8_t> bytes = Copy(w);
  const LedgerSnapshot snap = ReadLedger(bytes);
  REQUIRE(snap.records.size() == 8);
  for (size_t i = 0; i < 8; ++i) {
    CHECK(snap.records[i].index == 12 + i);
    CHECK(snap.records[i].comm_seq == 13 + i);
    CHECK_FALSE(snap.records[i].completion_ns.has_value());
  }
}

TEST_CASE("ledger: a record being written while the copy is made is torn, not read") {
  LedgerWriter w;
  REQUIRE(w.Create(4));
  w.Append(AllReduce(1, 1), 1, 1);
  w.Append(AllReduce(2, 2), 2, 1);
  std::vector<uint8_t> bytes = Copy(w);
  // A writer reusing slot 1 had stored its seq_start when the copy reached the slot's end.
  SlotOf(bytes, 1)->seq_start = 6;
  const LedgerSnapshot snap = ReadLedger(bytes);
  REQUIRE(snap.records.size() == 1);
  CHECK(snap.records[0].comm_seq == 1);
  CHECK(snap.torn == 1);
  CHECK_FALSE(snap.problems.empty());
}

TEST_CASE("ledger: concurrent writers and a reader copying meanwhile: every record read is one call's whole") {
  LedgerWriter w;
  REQUIRE(w.Create(64));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> copies{0};
  std::vector<std::thread> writers;
  for (uint32_t t = 0; t < 4; ++t) {
    writers.emplace_back([&w, &copies, t] {
      // Until the reader has copied the ledger 100 times while they wrote.
      for (uint64_t i = 1; i <= 20000 || copies.load() < 100; ++i) {
        // Every field derived from the call: a mix of two calls cannot pass the check below.
        CallRecord r = AllReduce(i, i * 7 + t, t % 2 ? "tp_pair" : "hccl_world_group");
        r.stream = i ^ 0xabcdef;
        w.Append(r, i * 3, t + 1);
      }
    });
  }
  uint64_t seen = 0;
  std::thread reader([&] {
    while (!stop.load()) {
      ++copies;
      for (const auto& r : ReadLedger(Copy(w)).records) {
        const uint32_t t = r.tid - 1;
        REQUIRE(t < 4);
        REQUIRE(r.count == r.comm_seq * 7 + t);
        REQUIRE(r.stream == (r.comm_seq ^ 0xabcdef));
        REQUIRE(r.enqueue_ns == r.comm_seq * 3);
        REQUIRE(r.comm == (t % 2 ? "tp_pair" : "hccl_world_group"));
        ++seen;
      }
    }
  });
  for (auto& t : writers) t.join();
  stop = true;
  reader.join();
  CHECK(seen > 0);
  // A writer preempted while the ledger lapped shares its slot with the lap's writer: that
  // slot reads torn (and is lost), never mixed.
  const LedgerSnapshot last = ReadLedger(Copy(w));
  CHECK(last.records.size() + last.torn == 64);
  CHECK(last.invalid == 0);
}

TEST_CASE("ledger: hostile contents are bounded, kept raw for escaping, or refused, never a crash") {
  LedgerWriter w;
  REQUIRE(w.Create(8));
  // A name with terminal escapes and a newline, and one past the field's 104 bytes.
  const std::string escapes = "\x1b[31mworld\n\x07group";
  w.Append(AllReduce(UINT64_MAX, UINT64_MAX, escapes), 1, 1);
  const std::string long_name(300, 'n');
  w.Append(AllReduce(2, 1, long_name), 2, 1);
  w.Append(AllReduce(3, 1), 3, 1);
  w.Append(AllReduce(4, 1), 4, 1);
  w.Append(AllReduce(5, 1), 5, 1);
  std::vector<uint8_t> bytes = Copy(w);

  SECTION("escapes and huge numbers come back as they were written, the name bounded") {
    const LedgerSnapshot snap = ReadLedger(bytes);
    REQUIRE(snap.records.size() == 5);
    CHECK(snap.records[0].comm == escapes);
    CHECK(snap.records[0].comm_seq == UINT64_MAX);
    CHECK(snap.records[0].count == UINT64_MAX);
    CHECK(snap.records[1].comm == std::string(ATR_LEDGER_COMM_MAX, 'n'));
    CHECK(snap.records[1].comm_cut);
  }
  SECTION("a record that contradicts the layout is counted invalid and said once per kind") {
    SlotOf(bytes, 2)->comm_len = 200;                        // past its field
    SlotOf(bytes, 3)->rank = 9;                              // not below its size (8)
    SlotOf(bytes, 4)->op = 999;                              // no such op
    SlotOf(bytes, 0)->seq_done = SlotOf(bytes, 0)->seq_start = 1000;  // past write_index, not its slot
    const LedgerSnapshot snap = ReadLedger(bytes);
    REQUIRE(snap.records.size() == 1);
    CHECK(snap.records[0].comm_seq == 2);
    CHECK(snap.invalid == 4);
    CHECK(snap.problems.size() >= 4);
    CHECK(snap.problems.size() <= atraced::proto::kMaxLedgerProblems);
  }
  SECTION("a completion that is not the record's own is no completion") {
    SlotOf(bytes, 2)->flags |= ATR_LEDGER_REC_COMPLETION;
    SlotOf(bytes, 2)->completion_ns = 7;
    SlotOf(bytes, 2)->completion_seq = 3;  // the record's own, after its enqueue (3): kept
    SlotOf(bytes, 3)->flags |= ATR_LEDGER_REC_COMPLETION;
    SlotOf(bytes, 3)->completion_ns = 50;
    SlotOf(bytes, 3)->completion_seq = 12;  // another record's
    SlotOf(bytes, 4)->flags |= ATR_LEDGER_REC_COMPLETION;
    SlotOf(bytes, 4)->completion_ns = 2;   // before its enqueue (5)
    SlotOf(bytes, 4)->completion_seq = 5;
    const LedgerSnapshot snap = ReadLedger(bytes);
    REQUIRE(snap.records.size() == 5);
    CHECK(snap.records[2].completion_tracked);
    CHECK(snap.records[2].completion_ns == 7u);
    CHECK_FALSE(snap.records[3].completion_ns.has_value());
    CHECK_FALSE(snap.records[4].completion_ns.has_value());
  }
  SECTION("a header that is not a ledger's, or promises more than the bytes hold, reads nothing") {
    std::vector<uint8_t> bad = bytes;
    bad[0] ^= 0xff;
    CHECK_FALSE(ReadLedger(bad).header_valid);
    bad = bytes;
    uint32_t huge = 1u << 20;
    std::memcpy(bad.data() + ATR_LEDGER_OFF_RECORD_COUNT, &huge, 4);
    CHECK_FALSE(ReadLedger(bad).header_valid);
    bad.assign(bytes.begin(), bytes.begin() + 200);
    CHECK_FALSE(ReadLedger(bad).header_valid);
    CHECK_FALSE(ReadLedger(bytes, 16).header_valid);  // not what was registered
    CHECK_FALSE(ReadLedger({}).header_valid);
  }
  SECTION("random bytes in every record after a valid header") {
    std::mt19937_64 rng(52);
    for (int round = 0; round < 200; ++round) {
      std::vector<uint8_t> garbage = bytes;
      for (size_t i = ATR_LEDGER_HEADER_SIZE; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(rng());
      const LedgerSnapshot snap = ReadLedger(garbage);
      CHECK(snap.header_valid);
      for (const auto& r : snap.records) CHECK(r.comm.size() <= ATR_LEDGER_COMM_MAX);
    }
  }
}
