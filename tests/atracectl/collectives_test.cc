// hang's collectives analysis (client/atracectl/fleet/collectives*): the ranks of a job
// grouped by the sequence number of each communicator, mismatched calls, the stuck
// communicator and those waiting on it, and hostile ledgers kept from blaming a rank.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fleet/collectives.h"
#include "fleet/collectives_input.h"
#include "fleet/collectives_text.h"

using atraced::proto::LedgerRecord;
using atraced::proto::LedgerSnapshot;
using namespace atracectl;

namespace {

constexpr uint64_t k4Mi = 4ull << 20;

LedgerRecord Call(uint64_t seq, uint64_t count = k4Mi, uint16_t op = ATR_LEDGER_OP_ALL_REDUCE) {
  LedgerRecord r;
  r.index = seq;
  r.comm_seq = seq;
  r.op = op;
  r.count = count;
  r.data_type = 3;  // fp16
  r.reduce_op = 0;  // sum
  return r;
}

// One communicator as a rank's ledger holds it: calls #first..#last, completed up to `done`.
CommLedger Comm(const std::string& name, uint32_t rank, uint32_t size, uint64_t first, uint64_t last,
                std::optional<uint64_t> done) {
  CommLedger c;
  c.name = name;
  c.rank_known = true;
  c.rank = rank;
  c.size = size;
  c.completion_tracked = true;
  for (uint64_t s = first;; ++s) {  // to `last` inclusive, which may be UINT64_MAX
    c.recent.push_back(Call(s));
    if (s == last) break;
  }
  c.last_entered = c.recent.back();
  c.last_completed = done;
  return c;
}

RankLedger Rank(int64_t rank, std::vector<CommLedger> comms, uint32_t uid = 1000) {
  RankLedger r;
  r.rank = rank;
  r.host = rank < 4 ? "n1" : "n2";
  r.pid = 100 + static_cast<int32_t>(rank);
  r.uid = uid;
  r.evidence_uid = uid;
  r.ledger = RankLedger::Ledger::kRead;
  r.comms = std::move(comms);
  return r;
}

// 8 ranks of hccl_world_group at #42 (completed #41), but those in `behind` at #41.
std::vector<RankLedger> World(const std::vector<int64_t>& behind) {
  std::vector<RankLedger> ranks;
  for (int64_t r = 0; r < 8; ++r) {
    const bool b = std::find(behind.begin(), behind.end(), r) != behind.end();
    ranks.push_back(Rank(r, {Comm("hccl_world_group", static_cast<uint32_t>(r), 8, 30, b ? 41 : 42, 41)}));
  }
  return ranks;
}

bool Contains(const std::string& text, const std::string& part) {
  INFO(text);
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("collectives: rank 5 skipped an AllReduce: it is named behind at #N-1, the others at #N") {
  const CollectivesReport r = AnalyzeCollectives(World({5}), 8);
  REQUIRE(r.comms.size() == 1);
  const CommReport& c = r.comms[0];
  CHECK(c.name == "hccl_world_group");
  CHECK(c.size == 8);
  REQUIRE(c.classes.size() == 2);
  CHECK(c.classes[0].ranks == std::vector<int64_t>{5});
  CHECK(c.classes[0].last_enqueued == 41);
  CHECK(c.classes[1].ranks == std::vector<int64_t>{0, 1, 2, 3, 4, 6, 7});
  CHECK(c.classes[1].last_enqueued == 42);
  CHECK(c.classes[1].last_completed == 41);
  CHECK(c.missing_count == 0);
  CHECK(c.mismatches.empty());
  REQUIRE(r.stuck == 0);
  CHECK(r.culprits == std::vector<int64_t>{5});

  const std::string text = CollectivesText(r, {{5, 1}, {0, 0}});
  CHECK(Contains(text, "Behind: rank 5 in comm hccl_world_group (last entered #41, where ranks 0-4,6-7 entered #42)"));
  CHECK(Contains(text, "    rank 5 (1): last entered #41 AllReduce (4 Mi fp16, sum), completed #41  [stack S2]\n"));
  CHECK(Contains(text, "    ranks 0-4,6-7 (7): last entered #42 AllReduce (4 Mi fp16, sum), completed #41  [stack S1]\n"));
  // The rank behind comes before the others in the text and in --json.
  CHECK(text.find("rank 5 (1)") < text.find("ranks 0-4,6-7 (7)"));
  const std::string json = CommunicatorsJson(r, {});
  CHECK(Contains(json, "{\"ranks\":[5],\"ranges\":\"5\",\"last_enqueued\":41,\"last_completed\":41,\"op\":\"AllReduce\","
                       "\"count\":4194304,\"dtype\":\"fp16\",\"reduce\":\"sum\",\"root\":null,\"stack_classes\":[],"
                       "\"source\":\"ledger\"}"));
  CHECK(json.find("\"ranks\":[5]") < json.find("\"ranks\":[0,1,2,3,4,6,7]"));
  CHECK(Contains(json, "\"missing\":[],"));
  CHECK(Contains(CollectivesJsonMembers(r), "\"collective_culprits\":[5]"));
}

TEST_CASE("collectives: every rank at the same call is no one behind") {
  const CollectivesReport r = AnalyzeCollectives(World({}), 8);
  REQUIRE(r.comms.size() == 1);
  CHECK(r.comms[0].classes.size() == 1);
  CHECK_FALSE(r.stuck.has_value());
  CHECK(r.culprits.empty());
  CHECK(Contains(CollectivesText(r, {}), "No communicator has ranks at different calls.\n"));
}

TEST_CASE("collectives: rank 3 called AllReduce with another count at the same sequence number: a mismatch") {
  std::vector<RankLedger> ranks = World({});
  ranks[3].comms[0].recent.back().count = 1024;
  ranks[3].comms[0].last_entered.count = 1024;
  // And an earlier call where rank 3 broadcast while the others reduced: reported first.
  ranks[3].comms[0].recent[5].op = ATR_LEDGER_OP_BROADCAST;
  ranks[3].comms[0].recent[5].peer = 0;
  const CollectivesReport r = AnalyzeCollectives(ranks, 8);
  REQUIRE(r.comms.size() == 1);
  const CommReport& c = r.comms[0];
  CHECK_FALSE(c.behind);
  REQUIRE(c.mismatches.size() >= 3);
  CHECK(c.mismatches[0].seq == 35);
  CHECK(c.mismatches[0].field == "op");
  CHECK(c.mismatches[0].ranks == std::vector<int64_t>{3});
  const CommMismatch& count = c.mismatches.back();
  CHECK(count.seq == 42);
  CHECK(count.field == "count");
  CHECK(count.ranks == std::vector<int64_t>{3});
  REQUIRE(count.values.size() == 2);
  CHECK(count.values[0].value == "4194304");
  CHECK(count.values[0].ranks == std::vector<int64_t>{0, 1, 2, 4, 5, 6, 7});
  CHECK(count.values[1].value == "1024");
  CHECK(count.values[1].ranks == std::vector<int64_t>{3});
  CHECK(Contains(CollectivesText(r, {}), "    mismatch at #42, count: ranks 0-2,4-7 called 4194304; rank 3 called 1024\n"));
  CHECK(Contains(CommunicatorsJson(r, {}),
                 "{\"seq\":42,\"field\":\"count\",\"ranks\":[3],\"values\":[{\"value\":\"4194304\",\"ranks\":[0,1,2,4,5,6,7]},"
                 "{\"value\":\"1024\",\"ranks\":[3]}],\"source\":\"ledger\"}"));
}

TEST_CASE("collectives: a Send meeting a Recv at one sequence number is no mismatch") {
  std::vector<RankLedger> ranks{Rank(0, {Comm("pp", 0, 2, 1, 1, 1)}), Rank(1, {Comm("pp", 1, 2, 1, 1, 1)})};
  for (int i = 0; i < 2; ++i) {
    auto& call = ranks[i].comms[0].recent[0];
    call.op = i == 0 ? ATR_LEDGER_OP_SEND : ATR_LEDGER_OP_RECV;
    call.peer = 1 - i;
    ranks[i].comms[0].last_entered = call;
  }
  CollectivesReport r = AnalyzeCollectives(ranks, 2);
  REQUIRE(r.comms.size() == 1);
  CHECK(r.comms[0].mismatches.empty());
  // A Send met by an AllReduce is: the op says it, not the peer or count.
  ranks[1].comms[0].recent[0] = ranks[1].comms[0].last_entered = Call(1, 5);
  r = AnalyzeCollectives(ranks, 2);
  REQUIRE(r.comms[0].mismatches.size() == 1);
  CHECK(r.comms[0].mismatches[0].field == "op");
  CHECK(r.comms[0].mismatches[0].values[0].value == "Send");
}

TEST_CASE("collectives: a tensor-parallel pair stuck: the pair is named, the world group waits on it") {
  std::vector<RankLedger> ranks;
  for (int64_t r = 0; r < 8; ++r) {
    const bool pair = r == 4 || r == 5;
    std::vector<CommLedger> comms{Comm("hccl_world_group", static_cast<uint32_t>(r), 8, 90, pair ? 99 : 100, 99)};
    // Ranks 4 and 5 form tp_4_5: rank 4 entered its #10, rank 5 never did.
    const uint32_t tp_rank = static_cast<uint32_t>(r % 2);
    const std::string tp = "tp_" + std::to_string(r / 2 * 2) + "_" + std::to_string(r / 2 * 2 + 1);
    comms.push_back(Comm(tp, tp_rank, 2, 1, r == 4 ? 10 : 9, 9));
    ranks.push_back(Rank(r, std::move(comms)));
  }
  const CollectivesReport r = AnalyzeCollectives(ranks, 8);
  REQUIRE(r.comms.size() == 5);
  REQUIRE(r.stuck == 0);
  CHECK(r.comms[0].name == "tp_4_5");
  CHECK(r.culprits == std::vector<int64_t>{5});
  REQUIRE(r.waiting == std::vector<size_t>{1});
  CHECK(r.comms[1].name == "hccl_world_group");
  CHECK(r.comms[1].classes[0].ranks == std::vector<int64_t>{4, 5});
  CHECK(r.comms[1].classes[0].last_enqueued == 99);
  // The pairs that are not behind follow, by name.
  CHECK(r.comms[2].name == "tp_0_1");
  CHECK_FALSE(r.comms[2].behind);
  const std::string text = CollectivesText(r, {});
  CHECK(Contains(text, "Behind: rank 5 in comm tp_4_5 (last entered #9, where rank 4 entered #10); waiting on it: comm "
                       "hccl_world_group\n"));
  CHECK(Contains(text, "  comm tp_4_5 (size 2): stuck here\n"));
  CHECK(Contains(text, "  comm hccl_world_group (size 8): waits on comm tp_4_5\n"));
  const std::string json = CommunicatorsJson(r, {});
  CHECK(Contains(json, "{\"name\":\"tp_4_5\",\"name_cut\":false,\"size\":2,\"size_claimed\":2,\"size_bounded\":false,"
                       "\"stuck\":true,\"waits_on\":null"));
  CHECK(Contains(json, "\"name\":\"hccl_world_group\",\"name_cut\":false,\"size\":8,\"size_claimed\":8,\"size_bounded\":false,"
                       "\"stuck\":false,\"waits_on\":\"tp_4_5\""));
}

TEST_CASE("collectives: a rank whose ledger is missing is named, and missing from its communicator") {
  std::vector<RankLedger> ranks = World({});
  ranks[6].ledger = RankLedger::Ledger::kNone;
  ranks[6].comms.clear();
  ranks[2].ledger = RankLedger::Ledger::kUnreadable;
  ranks[2].comms.clear();
  ranks.erase(ranks.begin() + 7);  // no process of rank 7 at all
  const CollectivesReport r = AnalyzeCollectives(ranks, 8);
  CHECK(r.no_ledger == std::vector<int64_t>{6});
  CHECK(r.unreadable == std::vector<int64_t>{2});
  REQUIRE(r.comms.size() == 1);
  CHECK(r.comms[0].missing_count == 3);
  CHECK(r.comms[0].missing == std::vector<std::pair<uint64_t, uint64_t>>{{2, 2}, {6, 7}});
  CHECK_FALSE(r.stuck.has_value());
  const std::string text = CollectivesText(r, {});
  CHECK(Contains(text, "    missing: its ranks 2,6-7 (no ledger names them"));
  CHECK(Contains(text, "among the ranks with a ledger"));
  CHECK(Contains(text, "  Without a ledger: rank 6 "));
  CHECK(Contains(text, "  Unreadable ledger: rank 2\n"));
  CHECK(Contains(CommunicatorsJson(r, {}), "\"missing\":[2,6,7],\"missing_ranges\":\"2,6-7\",\"missing_count\":3"));
}

TEST_CASE("collectives: a job without ledgers gets one line saying how to have them") {
  std::vector<RankLedger> ranks = World({});
  for (RankLedger& rank : ranks) rank.ledger = RankLedger::Ledger::kNone, rank.comms.clear();
  const CollectivesReport r = AnalyzeCollectives(ranks, 8);
  CHECK(r.comms.empty());
  CHECK(r.no_ledger.size() == 8);
  CHECK(CollectivesText(r, {}) ==
        "Collectives: no rank has a collective ledger (run the ranks under LD_PRELOAD=libatrace_hccl.so to see where "
        "each is in its HCCL communicators).\n");
  CHECK(CollectivesText(AnalyzeCollectives({}, std::nullopt), {}).empty());
  // A conflict among processes without ledgers is the stack part's to name: still one line.
  ranks.push_back(ranks[5]);
  ranks.back().uid = 2000;
  const CollectivesReport c = AnalyzeCollectives(ranks, 8);
  CHECK(c.notes.empty());
  CHECK(CollectivesText(c, {}).rfind("Collectives: no rank has a collective ledger", 0) == 0);
}

TEST_CASE("collectives: another user's process claiming a rank cannot make it look behind") {
  std::vector<RankLedger> ranks = World({});
  // uid 1001 says it is rank 5, one call in: a conflict, the job's uid (1000) is used.
  ranks.push_back(Rank(5, {Comm("hccl_world_group", 5, 8, 1, 1, std::nullopt)}, 1001));
  CollectivesReport r = AnalyzeCollectives(ranks, 8);
  CHECK(r.job_uid == 1000u);
  CHECK_FALSE(r.stuck.has_value());
  CHECK(r.culprits.empty());
  REQUIRE(r.notes.size() == 2);
  CHECK(r.notes[0].what == "claimed by 2 processes; this one (uid 1000) is used (the job's uid)");
  CHECK(r.notes[1].what == "claimed by 2 processes; this one (uid 1001) is left out");

  SECTION("two claimants, neither the job's: the rank is left out, not merged") {
    ranks[5].uid = ranks[5].evidence_uid = 1002;
    r = AnalyzeCollectives(ranks, 8);
    CHECK_FALSE(r.stuck.has_value());
    CHECK(r.comms[0].missing == std::vector<std::pair<uint64_t, uint64_t>>{{5, 5}});
    CHECK(r.notes.size() == 2);
    CHECK(r.notes[0].what.find("is left out") != std::string::npos);
    CHECK(r.notes[1].what.find("is left out") != std::string::npos);
  }
  SECTION("a ledger written by another uid than the rank's stacks is not used") {
    ranks.pop_back();
    ranks[5] = Rank(5, {Comm("hccl_world_group", 5, 8, 1, 1, std::nullopt)}, 1001);
    ranks[5].evidence_uid = 1000;
    r = AnalyzeCollectives(ranks, 8);
    CHECK_FALSE(r.stuck.has_value());
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].rank == 5);
    CHECK(r.notes[0].what == "ledger written by uid 1001, its stacks by uid 1000: the ledger is not used");
    CHECK(Contains(CollectivesText(r, {}), "  rank 5 (n2, pid 105): ledger written by uid 1001"));
  }
}

TEST_CASE("collectives: hostile ledgers: huge numbers, a huge size, escapes in a name, a thousand communicators") {
  const std::string evil = "w\x1b]52;c;AAAA\x07\nrank 0 (1): forged";
  std::vector<RankLedger> ranks{Rank(0, {Comm(evil, 0, 4000000000u, UINT64_MAX - 2, UINT64_MAX, UINT64_MAX - 1)}),
                                Rank(1, {Comm(evil, 3, 4000000000u, 1, 1, std::nullopt)})};
  for (uint32_t i = 0; i < 1000; ++i) ranks[1].comms.push_back(Comm("c" + std::to_string(i), 0, 1, 1, 1, 1));
  const CollectivesReport r = AnalyzeCollectives(ranks, std::nullopt);
  CHECK(r.comms.size() == kMaxReportedComms);
  CHECK(r.comms_more == 1001 - kMaxReportedComms);
  REQUIRE(r.stuck == 0);
  const CommReport& c = r.comms[0];
  CHECK(c.size_bounded);
  CHECK(c.size_claimed == 4000000000u);
  CHECK(c.size == 4);  // what the ledgers show: ranks 0 and 3
  CHECK(c.missing == std::vector<std::pair<uint64_t, uint64_t>>{{1, 2}});
  CHECK(r.culprits == std::vector<int64_t>{1});
  const std::string text = CollectivesText(r, {});
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
  CHECK(text.find("\nrank 0 (1): forged") == std::string::npos);  // the name's newline starts no line
  CHECK(Contains(text, "#18446744073709551615"));
  CHECK(Contains(text, "claims 4000000000: bounded by the ranks seen"));
  CHECK(text.size() < 64 * 1024);
  const std::string json = CommunicatorsJson(r, {});
  CHECK(json.find('\x1b') == std::string::npos);
  CHECK(json.find('\n') == std::string::npos);
  CHECK(Contains(json, "\"last_enqueued\":18446744073709551615,\"last_completed\":18446744073709551614"));

  SECTION("a labelled world size bounds a communicator that claims more") {
    const CollectivesReport w = AnalyzeCollectives(ranks, 8);
    CHECK(w.comms[0].size == 8);
    CHECK(w.comms[0].missing == std::vector<std::pair<uint64_t, uint64_t>>{{1, 2}, {4, 7}});
  }
}

TEST_CASE("collectives: a ledger read into communicators: the latest instance of a name, its newest calls") {
  LedgerSnapshot snap;
  snap.header_valid = true;
  snap.flags = ATR_LEDGER_FLAG_COMPLETION;
  uint64_t k = 0;
  auto add = [&](const std::string& comm, uint32_t size, uint64_t seq, bool done) {
    LedgerRecord r = Call(seq);
    r.index = k++;
    r.comm = comm;
    r.rank_known = true;
    r.rank = 1;
    r.size = size;
    r.completion_tracked = true;
    if (done) r.completion_ns = 5;
    snap.records.push_back(r);
  };
  for (uint64_t s = 1; s <= 50; ++s) add("world", 8, s, true);
  // The pair made, destroyed and made again under the same name with another size.
  for (uint64_t s = 1; s <= 30; ++s) add("tp", 2, s, true);
  for (uint64_t s = 1; s <= 3; ++s) add("tp", 4, s, s < 3);
  const std::vector<CommLedger> comms = CommLedgersOf(snap);
  REQUIRE(comms.size() == 2);
  CHECK(comms[0].name == "world");
  CHECK(comms[0].last_entered.comm_seq == 50);
  CHECK(comms[0].recent.size() == kRecentCalls);
  CHECK(comms[0].recent.front().comm_seq == 50 - kRecentCalls + 1);
  CHECK(comms[1].name == "tp");
  CHECK(comms[1].size == 4);
  CHECK(comms[1].last_entered.comm_seq == 3);
  CHECK(comms[1].last_completed == 2u);
  CHECK(comms[1].completion_tracked);
}

TEST_CASE("collectives: element counts and calls as a person reads them") {
  CHECK(ElementCount(0) == "0");
  CHECK(ElementCount(1000) == "1000");
  CHECK(ElementCount(1536) == "1536");
  CHECK(ElementCount(4096) == "4 Ki");
  CHECK(ElementCount(k4Mi) == "4 Mi");
  CHECK(ElementCount(k4Mi + 1024) == "4097 Ki");
  CHECK(ElementCount(UINT64_MAX) == "18446744073709551615");
  LedgerRecord b = Call(7, 0, ATR_LEDGER_OP_BARRIER);
  b.data_type = 255;
  b.reduce_op = 255;
  CHECK(CallText(b) == "#7 Barrier");
  LedgerRecord bc = Call(8, 10, ATR_LEDGER_OP_BROADCAST);
  bc.peer = 2;
  CHECK(CallText(bc) == "#8 Broadcast (10 fp16, root 2)");
}
