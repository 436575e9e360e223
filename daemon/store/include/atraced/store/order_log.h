// The order log: how the store remembers, across restarts, which event directories are its
// own, in what order they were created, and which ones it had begun to remove.
//
// It is one append-only text file in the trace directory, `.atraced_order` (hidden, so CANN
// tools skip it), in the manner of LevelDB's MANIFEST:
//
//   # atraced order log 1
//   + <seq> <h|d|e> <device_id> <uid> <created_us> <process dir>/<event dir>
//   c <seq> <program>
//   l <seq> [job=<job>] [rank=<rank>] [world=<world size>]
//   o <seq> <dump|hang>
//   x <seq>
//   s <seq>
//   p <seq>
//   d <seq>
//   - <seq>
//   g <grant stamp>
//   a <aged_us> <reason> <uid> <dump|hang> <0|1> <process dir>/<event dir> [job=J] [rank=R] [world=W]
//
// 'c' (after its '+', in the same write) names the program of the process the directory was
// made for (its kernel name, made safe: [A-Za-z0-9_.-], at most 63 bytes), for `atracectl
// list`'s COMM; nothing is added inside CANN's event directories. A log without it (written
// before) leaves the program unknown; an older daemon skips the record as unknown, keeping
// the directory.
//
// 'l' (after its 'c', in the same write) holds the labels the process sent (LABELS: its
// job, rank and world size, each checked by proto::CheckLabel, so no space or newline),
// for `atracectl list`'s JOB and RANK and the journal; only those set are written. A log
// without it leaves the labels unknown; an older daemon skips the record as unknown.
//
// 'o' (after its 'l', in the same write) says the directory is a dump of a live process
// (PROCESS_DUMP): `dump` one an operator asked for, `hang` one the daemon's hang watch took by
// itself; for `atracectl list`'s HOW and dump-keep. A log without it leaves the directory
// an ordinary schedule one; an older daemon skips the record as unknown.
//
// 'x' (after its 'o'; appended alone when `atracectl export` has written a bundle holding the
// dump, DUMPS_EXPORTED) says the dump was exported: dump-keep spares it no more, and count
// aging takes it as any other directory, across restarts too. Only a dump ('o') may carry it,
// once. A log without it leaves the dump kept for dump-keep; an older daemon skips the record
// as unknown (the dump is kept then, the safe side).
// 's' (after its 'o', in the same write) says the daemon made the directory itself, for a
// save (a ring save, a crash, death or stack-dump report, a dump): every file in it is the
// daemon's, and no client may open a file in it (TraceStore::BeginEvent refuses the path to a
// client's EVENT_BEGIN). LIST marks every other directory ATR_LIST_CLIENT: its files are
// its client's word, so `hang` takes a stack report only from a directory the daemon made. A
// log without it (written before) leaves the directory a client's; an older daemon skips the
// record as unknown.
//
// 'p' (with its '+', in the same write; or alone when a save goes into a directory that
// exists) says a save is being written into the directory, 'd' that the save completed:
// every file written in full. A 'p' without its 'd' is a save that a crash, a kill -9 or a
// stop cut short, or whose writes failed: its directory may hold empty or short files, and
// recovery marks it incomplete (OrderEntry::incomplete), which the start-up rewrite keeps
// (as a 'p'). A log without them (written before, or an event written by its client through
// FILE_APPEND) is complete; an older daemon skips both records as unknown.
//
// 'g' (first after the header, written by the start-up rewrite) vouches for the read grants
// (read_grants.h): every process directory of the log was granted, or checked, as the
// stamp describes (FileSystem::GrantStamp: the grant's form, ACLs or modes, the reader
// group, the daemon's uid), so a start under the same stamp checks only a directory whose
// metadata changed since (FileSystem::RecheckGrant). A grant that fails later appends
// 'g -', which withdraws it; the last 'g' counts. A log without it (written before) has
// every grant checked; an older daemon skips the record as unknown and rewrites the log
// without it.
//
// 'a' (appended by an aging pass right after its '-' records) is the evidence of a dump
// ('o') that aging removed: when (daemon wall clock, microseconds), why (AgingReasonName:
// count, bytes, keep-free, age, vacuum), whose (uid), which kind of dump, whether it had been
// exported (1) or not (0), which directory, and its labels ('l'). It names no sequence: it
// outlives the directory. Every rewrite keeps the newest kMaxAgedDumps of them, oldest
// first, before the '+' records; TraceStore::AgedDumps gives them to AGED_DUMPS, the journal
// entry of the same aging says the same (docs/FLEET.md). A log without it knows of no aged
// dump; an older daemon skips the record as unknown and its rewrite drops it.
//
// '+' is written *before* the directory is made, so a crash leaves either a record whose
// directory never appeared (dropped at recovery) or a directory that is in the log; a
// directory that is not in the log is never atraced's and is never counted or removed.
// '-' is written before a removal starts, so a directory a crash left half-removed is
// finished at recovery, never counted as kept. One write(2) carries a creation and the
// removals it causes.
//
// The file is untrusted input like everything under the root: this parser checks every
// field, accepts only strictly increasing sequence numbers and well-formed CANN paths, and
// ignores a torn last line. Sequence numbers in the file only order records: at start-up
// the store renumbers the live entries 1..N and rewrites the file, so a planted huge
// number can neither wrap the counter nor collide with a new directory.
//
// Pure functions, no disk: tests and the fuzzer drive them with strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "atraced/proto/codec.h"
#include "atraced/store/aging.h"

namespace atraced {

inline constexpr std::string_view kOrderLogName = ".atraced_order";
inline constexpr std::string_view kOrderLogHeader = "# atraced order log 1\n";

// Who asked for a dump's directory ('o' record): nobody (not a dump), an operator, the hang watch.
enum class DumpKind : uint8_t { kNone, kOperator, kHang };

struct OrderEntry {
  uint64_t seq = 0;
  AgeClass cls = AgeClass::kHost;
  uint32_t device_id = 0;
  uint32_t uid = 0;
  int64_t created_us = 0;    // daemon wall clock; display only, never used for ordering
  std::string process_dir;   // trace_{pgid}_{pid}_{time}
  std::string event_dir;     // {event}_event_{pid}_{time}
  std::string comm;          // the program it was made for; "" unknown ('c' record)
  bool incomplete = false;   // a save into it began ('p') and its completion ('d') is not logged
  proto::Labels labels{};    // the job, rank and world size its process sent ('l' record)
  DumpKind dump = DumpKind::kNone;  // a dump of a live process, and whose ('o' record)
  bool exported = false;            // the dump went into a bundle: dump-keep spares it no more ('x')
  bool saved = false;        // the daemon made it for a save: its files are all the daemon's ('s' record)
  bool operator==(const OrderEntry&) const = default;
};

// The newest aged dumps kept ('a'): what `hang` needs of a job's lost ranks, bounded.
inline constexpr size_t kMaxAgedDumps = 1024;

// A dump's directory that aging removed ('a' record).
struct AgedDump {
  int64_t aged_us = 0;  // daemon wall clock at the removal
  AgingReason reason = AgingReason::kCount;
  uint32_t uid = 0;
  DumpKind dump = DumpKind::kOperator;
  bool exported = false;    // a bundle held it before it went
  std::string process_dir;  // trace_{pgid}_{pid}_{time}
  std::string event_dir;    // {event}_event_{pid}_{time}
  proto::Labels labels{};
  bool operator==(const AgedDump&) const = default;
};

// Appends one record (with its newline; a '+', its 'c' when comm is set, its 'l', 'o' and 'x'
// when set and its 'p' when incomplete) to `out`.
void AppendCreated(const OrderEntry& entry, std::string& out);
void AppendSaving(uint64_t seq, std::string& out);  // 'p'
void AppendSaved(uint64_t seq, std::string& out);   // 'd'
void AppendExported(uint64_t seq, std::string& out);  // 'x'
void AppendRemoved(uint64_t seq, std::string& out);
void AppendAged(const AgedDump& aged, std::string& out);  // 'a'
// 'g': `stamp` (a FileSystem::GrantStamp), or "" for 'g -' (the grants are vouched for no more).
void AppendGrantStamp(const std::string& stamp, std::string& out);

struct OrderLogReplay {
  std::vector<OrderEntry> live;      // created and not removed, oldest first
  std::vector<OrderEntry> removing;  // a removal had begun: finish it
  std::string grant_stamp;           // the last 'g' record's stamp; "" for none or 'g -'
  std::vector<AgedDump> aged;        // the 'a' records, oldest first, the newest kMaxAgedDumps
  size_t records = 0;                // well-formed records read
  size_t rejected = 0;               // malformed or inconsistent lines skipped
  std::vector<std::string> problems; // the first few, for the log
};

OrderLogReplay ReplayOrderLog(std::string_view text);

}  // namespace atraced
