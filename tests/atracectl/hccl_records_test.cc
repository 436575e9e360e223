// HCCL's own atrace records read as a second source of where a rank is (fleet/hccl_records.h):
// entries as hcomm writes them (op_base_host.cc, op_base.cc; cut in 111-byte pieces by
// hccl_trace_info.cc), records that do not read skipped and counted, and ranks read from them
// compared with each other and never with ledgers' sequence numbers.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fleet/collectives.h"
#include "fleet/collectives_text.h"
#include "atraced/proto/ledger_summary.h"
#include "fleet/hccl_records.h"

using namespace atracectl;

namespace {

// hcomm's HcclAllReduceInner entry, as its HcclTraceInfo prefixes it.
std::string AllReduceEntry(uint64_t index, const std::string& comm, uint64_t count, uint32_t local_rank = 3) {
  return "4242_" + std::to_string(index) + "_Entry-HcclAllReduceInner: tag[AllReduce_" + comm +
         "], sendBuf[0x12c0c0000000], recvBuf[0x12c0c0400000], count[" + std::to_string(count) +
         "], dataType[float16], op[sum], localRank[" + std::to_string(local_rank) +
         "], streamId[3], comm[0x55d0c0a0], deviceLogicId[0], capture status[0], model id[4294967295].";
}

// One ring's records, each cut into pieces as HCCL submits them.
HcclRecords Ring(const std::vector<std::string>& records) {
  HcclRecords h;
  h.BeginRing();
  for (const std::string& r : records) {
    for (size_t at = 0; at < r.size(); at += kHcclPieceBytes) h.Piece(std::string_view(r).substr(at, kHcclPieceBytes));
  }
  h.EndRing();
  return h;
}

}  // namespace

TEST_CASE("hccl records: an AllReduce entry cut in 111-byte pieces is joined and read") {
  const std::string entry = AllReduceEntry(6, "hccl_world_group", 4096);
  REQUIRE(entry.size() > 2 * kHcclPieceBytes);  // three pieces
  const HcclRecords h = Ring({AllReduceEntry(4, "hccl_world_group", 2048), "4242_5_HcclAllReduceInner:success,take "
                                                                            "time: 12 us,tag[AllReduce_hccl_world_group]",
                              entry});
  CHECK(h.entries() == 2);
  CHECK(h.skipped() == 0);
  const std::vector<CommLedger> comms = h.Comms();
  REQUIRE(comms.size() == 1);
  const CommLedger& c = comms[0];
  CHECK(c.name == "hccl_world_group");
  CHECK(c.from_hccl_records);
  CHECK_FALSE(c.rank_known);  // HCCL's records say no size
  CHECK(c.rank_only);
  CHECK(c.rank == 3);
  CHECK(c.last_entered.comm_seq == 6);
  CHECK(c.last_entered.tid == 4242);
  CHECK(c.last_entered.op == ATR_LEDGER_OP_ALL_REDUCE);
  CHECK(c.last_entered.count == 4096);
  CHECK(c.last_entered.data_type == 3);  // fp16
  CHECK(c.last_entered.reduce_op == 0);  // sum
  CHECK(c.recent.size() == 2);
  CHECK(CallText(c.last_entered) == "#6 AllReduce (4 Ki fp16, sum)");
}

TEST_CASE("hccl records: Send and Recv take their peer from the tag, Broadcast its root, Barrier no count") {
  const HcclRecords h = Ring({
      "9_0_Entry-HcclSendInner:tag[worldCommSendRecv_2_5_pp_group], sendBuf[0x1], count[64], dataType[int32], "
      "localRank[2], streamId[1], deviceLogicId[0], capture status[0], model id[1].",
      "9_2_Entry-HcclRecvInner:tag[worldCommSendRecv_7_2_pp_group], recvBuf[0x1], count[64], dataType[bfloat16], "
      "localRank[2], streamId[1], deviceLogicId[0], capture status[0], model id[1].",
      "9_0_Entry-HcclBroadcastInner:tag[Broadcast_tp_a_b], buf[0x1], count[8], dataType[float32], root[1], "
      "localRank[0], streamId[1], deviceLogicId[0], capture status[0], model id[1].",
      "9_0_Entry-HcclBarrier:tag[AllReduce_dp], sendBuf[0x1], recvBuf[0x2], count[8], dataType[float32], op[sum], "
      "localRank[0], streamId[1], deviceLogicId[0], capture status[0], model id[1].",
  });
  CHECK(h.skipped() == 0);
  const std::vector<CommLedger> comms = h.Comms();
  REQUIRE(comms.size() == 3);
  CHECK(comms[0].name == "pp_group");
  CHECK(comms[0].last_entered.op == ATR_LEDGER_OP_RECV);
  CHECK(comms[0].last_entered.peer == 7u);  // the source of a Recv
  CHECK(comms[0].recent.front().op == ATR_LEDGER_OP_SEND);
  CHECK(comms[0].recent.front().peer == 5u);  // the destination of a Send
  CHECK(comms[1].name == "tp_a_b");            // the name keeps its own underscores
  CHECK(CallText(comms[1].last_entered) == "#0 Broadcast (8 fp32, root 1)");
  CHECK(comms[2].name == "dp");
  CHECK(CallText(comms[2].last_entered) == "#0 Barrier");
}

TEST_CASE("hccl records: records that do not read are skipped and counted, HCCL's other records are not") {
  const HcclRecords h = Ring({
      "Entry-HcclAllReduceInner: tag[AllReduce_x], count[1], dataType[float16], op[sum]",         // no prefix
      "99999999999_0_Entry-HcclAllReduceInner: tag[AllReduce_x], count[1], dataType[float16], op[sum]",  // tid
      "7_1_Entry-HcclAllReduceInner: tag[AllReduce_x], count[-1], dataType[float16], op[sum]",
      "7_2_Entry-HcclAllReduceInner: tag[AllReduce_x], count[99999999999999999999999], dataType[float16], op[sum]",
      "7_3_Entry-HcclAllReduceInner: tag[AllReduce_x], count[4], dataType[float99], op[sum]",
      "7_4_Entry-HcclAllReduceInner: tag[AllReduce_x], count[4], dataType[float16], op[xor]",
      "7_5_Entry-HcclAllReduceInner: tag[], count[4], dataType[float16], op[sum]",
      "7_6_Entry-HcclAllReduceInner tag[AllReduce_x]",                              // no ':'
      "7_7_Entry-HcclSendInner:tag[worldCommSendRecv_1_x], count[4], dataType[int8]",  // no peer
      "7_8_Entry-HcclBroadcastInner:tag[Broadcast_x], count[4], dataType[int8]",      // no root
      // HCCL's own other records: read, not an entry, not a fault.
      "7_9_HcclAllReduceInner:success,take time: 12 us,tag[AllReduce_x]",
      "7_Reduce_x AlgType is: level0:ring",  // AtraceOption::Algtype: "<tid>_<text>", no index
      "7_10_Entry-HcclCreateComResource:localRank[0]tag[CreatecomResource_x], commContext[0x1]",
  });
  CHECK(h.skipped() == 10);
  CHECK(h.entries() == 0);
  CHECK_FALSE(h.any());
  CHECK(h.Comms().empty());
}

TEST_CASE("hccl records: a joined record past the bound is skipped, and communicators are bounded per process") {
  HcclRecords h;
  h.BeginRing();
  h.Piece(std::string(kHcclPieceBytes, '1'));  // full pieces: each may continue the last
  for (size_t i = 0; i < kMaxHcclRecordBytes / kHcclPieceBytes + 2; ++i) h.Piece(std::string(kHcclPieceBytes, 'x'));
  h.EndRing();
  CHECK(h.skipped() == 1);

  std::vector<std::string> many;
  for (int i = 0; i < 100; ++i) many.push_back(AllReduceEntry(0, "c" + std::to_string(i), 8));
  const HcclRecords m = Ring(many);
  CHECK(m.Comms().size() == atraced::proto::kMaxCommunicators);
  CHECK(m.skipped() == 100 - atraced::proto::kMaxCommunicators);
}

TEST_CASE("hccl records: a name with escapes stays raw in the data, and the report escapes it") {
  const HcclRecords h = Ring({AllReduceEntry(0, "evil\x1b[2Jname", 8)});
  const std::vector<CommLedger> comms = h.Comms();
  REQUIRE(comms.size() == 1);
  CHECK(comms[0].name == "evil\x1b[2Jname");
  std::vector<RankLedger> ranks(2);
  for (size_t r = 0; r < 2; ++r) {
    ranks[r].rank = static_cast<int64_t>(r);
    ranks[r].ledger = RankLedger::Ledger::kRead;
    ranks[r].from_hccl_records = true;
    ranks[r].comms = comms;
  }
  const std::string text = CollectivesText(AnalyzeCollectives(ranks, 2), {});
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find("comm evil") != std::string::npos);
}

TEST_CASE("hccl records: ranks read from HCCL's records are compared among themselves, not with ledgers") {
  auto hccl_rank = [](int64_t rank, uint64_t index) {
    RankLedger r;
    r.rank = rank;
    r.ledger = RankLedger::Ledger::kRead;
    r.from_hccl_records = true;
    r.hccl_records_skipped = 2;
    r.comms = Ring({AllReduceEntry(index, "hccl_world_group", 1024, static_cast<uint32_t>(rank))}).Comms();
    return r;
  };
  auto ledger_rank = [](int64_t rank, uint64_t seq) {
    RankLedger r;
    r.rank = rank;
    r.ledger = RankLedger::Ledger::kRead;
    CommLedger c;
    c.name = "hccl_world_group";
    c.rank_known = true;
    c.rank = static_cast<uint32_t>(rank);
    c.size = 4;
    c.last_entered.comm_seq = seq;
    c.last_entered.op = ATR_LEDGER_OP_ALL_REDUCE;
    c.last_entered.count = 1024;
    c.recent.push_back(c.last_entered);
    r.comms.push_back(c);
    return r;
  };

  SECTION("ledgers agree, HCCL's records agree: no one behind although the numbers differ") {
    const CollectivesReport r = AnalyzeCollectives({ledger_rank(0, 3), ledger_rank(1, 3), hccl_rank(2, 4), hccl_rank(3, 4)}, 4);
    REQUIRE(r.comms.size() == 1);
    CHECK_FALSE(r.comms[0].behind);
    CHECK_FALSE(r.stuck);
    CHECK(r.comms[0].missing_count == 0);  // ranks 2 and 3 by their localRank
    CHECK(r.comms[0].mismatches.empty());  // #4 of HCCL's is not #4 of a ledger's
    CHECK(r.from_hccl_records == std::vector<int64_t>{2, 3});
    CHECK(r.hccl_records_skipped == 4);
  }
  SECTION("a rank of HCCL's records behind the other: named, with the source said") {
    const CollectivesReport r = AnalyzeCollectives({ledger_rank(0, 3), ledger_rank(1, 3), hccl_rank(2, 6), hccl_rank(3, 4)}, 4);
    REQUIRE(r.stuck);
    CHECK(r.comms[0].behind_from_hccl_records);
    CHECK(r.culprits == std::vector<int64_t>{3});
    const std::string text = CollectivesText(r, {});
    CHECK(text.find("Behind: rank 3 in comm hccl_world_group (last entered #4, where rank 2 entered #6; from HCCL's own "
                    "records, # is HCCL's record index)\n") != std::string::npos);
    CHECK(text.find("5 record") == std::string::npos);
    CHECK(text.find("; 4 record(s) that did not read were skipped\n") != std::string::npos);
    const std::string json = CommunicatorsJson(r, {});
    CHECK(json.find("\"last_enqueued\":4,\"last_completed\":null,\"op\":\"AllReduce\"") != std::string::npos);
    CHECK(json.find("\"source\":\"hccl_records\"") != std::string::npos);
  }
  SECTION("a ledger rank behind is named by the ledgers, HCCL's ranks beside them change nothing") {
    const CollectivesReport r = AnalyzeCollectives({ledger_rank(0, 2), ledger_rank(1, 3), hccl_rank(2, 8), hccl_rank(3, 8)}, 4);
    REQUIRE(r.stuck);
    CHECK_FALSE(r.comms[0].behind_from_hccl_records);
    CHECK(r.culprits == std::vector<int64_t>{0});
  }
}
