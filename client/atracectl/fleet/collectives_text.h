// The collectives report (collectives.h) as hang prints it: a section of text that leads the
// report, and the `communicators` list of --json. Every name from a ledger is escaped here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fleet/collectives.h"
#include "fleet/fleet_report.h"

namespace atracectl {

// Job rank -> the index (0..) of its stack class in hang's report, where it has stacks:
// each class line names the stack classes of its ranks ("stack S1" is index 0).
using StackClassOf = std::map<int64_t, size_t>;
// That map of hang's report (`r.classes`, in its order).
StackClassOf StackClassIndex(const FleetReport& r);

// "4 Mi", "1536", "3 Ki": an element count as a person reads it.
std::string ElementCount(uint64_t count);
// "#1042 AllReduce (4 Mi fp16, sum)"; a root or peer when the op has one.
std::string CallText(const atraced::proto::LedgerRecord& r);

// The section (empty without ranks; one line when none has a ledger): a lead line naming the
// ranks behind in the stuck communicator, then per communicator its classes (smallest first),
// missing ranks, rank conflicts and mismatches; then the ranks without a ledger and notes.
std::string CollectivesText(const CollectivesReport& r, const StackClassOf& stack_class);

// The JSON value of `communicators`: [{name, size, classes, missing, mismatches, ...}].
std::string CommunicatorsJson(const CollectivesReport& r, const StackClassOf& stack_class);
// The JSON members of the rest, for hang's top level: "collective_culprits":[..],
// "ranks_without_ledger":[..], "ranks_with_unreadable_ledger":[..], "ledger_notes":[..].
std::string CollectivesJsonMembers(const CollectivesReport& r);

}  // namespace atracectl
