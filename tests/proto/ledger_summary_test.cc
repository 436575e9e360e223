// The per-communicator summary of a collective ledger and its journal form (ledger_summary.h):
// what the daemon's hang entry carries (ATRACE_COLL_<n>) and hang --journal reads back. The
// value is built from a hostile process's bytes and read by a collector from any journal.
#include <catch2/catch.hpp>

#include <string>

#include "atraced/proto/ledger_summary.h"

using namespace atraced::proto;

namespace {

CommunicatorSummary Summary(std::string name, uint64_t seq, std::optional<uint64_t> completed) {
  CommunicatorSummary c;
  c.name = std::move(name);
  c.rank_known = true;
  c.rank = 5;
  c.size = 8;
  c.last_entered.comm_seq = seq;
  c.last_entered.op = ATR_LEDGER_OP_ALL_REDUCE;
  c.last_entered.count = 4096;
  c.last_entered.data_type = 3;
  c.last_entered.reduce_op = 0;
  c.last_entered.comm = c.name;
  c.last_completed = completed;
  return c;
}

}  // namespace

TEST_CASE("a communicator's journal value reads back as written, the name escaped to printable ASCII",
          "[proto][ledger]") {
  const std::string hostile = std::string("w\x1b[2J \\x41=\n\xff") + std::string(1, '\0') + "end";
  const CommunicatorSummary c = Summary(hostile, 1042, 1041);
  const std::string v = CommunicatorJournalValue(c, true);
  CHECK(v == "rank=5 size=8 seq=1042 op=1 count=4096 dtype=3 reduce=0 peer=- completed=1041 tracked=1 cut=0 "
             "name=w\\x1b[2J\\x20\\x5cx41=\\x0a\\xff\\x00end");
  const auto back = ParseCommunicatorJournalValue(v);
  REQUIRE(back);
  CHECK(back->completion_tracked);
  CHECK(back->summary.name == hostile);
  CHECK(back->summary.last_entered.comm == hostile);
  CHECK(back->summary.rank_known);
  CHECK(back->summary.rank == 5);
  CHECK(back->summary.size == 8);
  CHECK(back->summary.last_entered.comm_seq == 1042);
  CHECK(back->summary.last_entered.op == ATR_LEDGER_OP_ALL_REDUCE);
  CHECK(back->summary.last_entered.count == 4096);
  CHECK(back->summary.last_entered.data_type == 3);
  CHECK(back->summary.last_completed == std::optional<uint64_t>(1041));
  CHECK_FALSE(back->summary.last_entered.peer);
}

TEST_CASE("a communicator's journal value: no rank, a root, nothing completed, untracked, a cut name, the longest name",
          "[proto][ledger]") {
  CommunicatorSummary c = Summary("tp", UINT64_MAX, std::nullopt);
  c.rank_known = false;
  c.rank = c.size = 0;
  c.last_entered.op = ATR_LEDGER_OP_BROADCAST;
  c.last_entered.peer = 3;
  c.last_entered.comm_cut = true;
  const std::string none = CommunicatorJournalValue(c, true);
  CHECK(none == "rank=? size=? seq=18446744073709551615 op=2 count=4096 dtype=3 reduce=0 peer=3 completed=- tracked=1 cut=1 name=tp");
  auto back = ParseCommunicatorJournalValue(none);
  REQUIRE(back);
  CHECK_FALSE(back->summary.rank_known);
  CHECK(back->summary.last_entered.peer == std::optional<uint32_t>(3));
  CHECK_FALSE(back->summary.last_completed);
  CHECK(back->summary.last_entered.comm_cut);
  back = ParseCommunicatorJournalValue(CommunicatorJournalValue(c, false));
  REQUIRE(back);
  CHECK_FALSE(back->completion_tracked);
  // A ledger whose header says enqueues only, with a record that says it completed (its
  // writer's word either way): both are carried as they are.
  c.last_completed = 7;
  back = ParseCommunicatorJournalValue(CommunicatorJournalValue(c, false));
  REQUIRE(back);
  CHECK_FALSE(back->completion_tracked);
  CHECK(back->summary.last_completed == std::optional<uint64_t>(7));

  // Every byte of the longest name escaped: still within the bound, and whole.
  c = Summary(std::string(ATR_LEDGER_COMM_MAX, '\xff'), 1, 1);
  c.rank = UINT32_MAX - 1;
  c.size = UINT32_MAX;
  c.last_entered.count = UINT64_MAX;
  c.last_entered.peer = UINT32_MAX - 1;
  const std::string longest = CommunicatorJournalValue(c, true);
  CHECK(longest.size() <= kCommJournalValueMax);
  back = ParseCommunicatorJournalValue(longest);
  REQUIRE(back);
  CHECK(back->summary.name == c.name);
}

TEST_CASE("a communicator's journal value not in atraced's form is refused", "[proto][ledger]") {
  const std::string good = "rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w";
  REQUIRE(ParseCommunicatorJournalValue(good));
  const auto bad = [](std::string v) {
    CAPTURE(v);
    CHECK_FALSE(ParseCommunicatorJournalValue(v));
  };
  bad("");
  bad("size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");  // no rank
  bad("rank=8 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");  // rank not below size
  bad("rank=0 size=0 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");
  bad("rank=5 size=? seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");
  bad("rank=5 size=8 seq=0 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");  // seq 0
  bad("rank=5 size=8 seq=18446744073709551616 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");
  bad("rank=5 size=8 seq=04 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");  // leading zero
  bad("rank=5 size=8 seq=-4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");
  bad("rank=5 size=8 seq=4 op=0 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");  // no such op
  bad("rank=5 size=8 seq=4 op=16 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=256 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=4294967295 completed=3 tracked=1 cut=0 name=w");
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=x tracked=1 cut=0 name=w");
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=2 cut=0 name=w");
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 cut=0 name=w");  // no tracked
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=2 name=w");
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 name=w");  // no cut
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w x");  // a space in the name
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w\\x1");  // a cut escape
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w\\xZZ");
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w\\y41");
  bad("rank=5 size=8 seq=4 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w\x1b");  // raw control
  bad("seq=4 rank=5 size=8 op=1 count=4096 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=w");  // out of order
  bad(good.substr(0, good.size() - 6) + "nom=w");
  // A name longer than a ledger holds, escaped or not; a value past the bound.
  bad(good + std::string(ATR_LEDGER_COMM_MAX, 'a'));
  std::string escaped = good.substr(0, good.size() - 1);
  for (size_t i = 0; i <= ATR_LEDGER_COMM_MAX; ++i) escaped += "\\x41";
  bad(escaped);
  bad(good + std::string(kCommJournalValueMax, ' '));
}

TEST_CASE("per name, the communicator instance called last is the one in use", "[proto][ledger]") {
  CommunicatorSummary first = Summary("world", 900, 900), again = Summary("world", 2, 1), other = Summary("tp", 7, 7);
  first.last_entered.index = 10;
  other.last_entered.index = 11;
  again.size = 4;  // made again, smaller, under the same name: counts from 1 again
  again.rank = 1;
  again.last_entered.index = 12;
  const auto latest = LatestPerName({first, other, again});
  REQUIRE(latest.size() == 2);
  CHECK(latest[0].name == "world");
  CHECK(latest[0].last_entered.comm_seq == 2);
  CHECK(latest[0].size == 4);
  CHECK(latest[1].name == "tp");
  CHECK(LatestPerName({again, first}).front().last_entered.comm_seq == 2);
}
