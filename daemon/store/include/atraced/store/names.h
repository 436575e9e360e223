// The on-disk schema. Every name atraced writes or reads is formatted and parsed here, by
// pure function pairs, so the CANN layout has one definition:
//
//   <root>/atrace/trace_{pgid}_{pid}_{time}/{event}_event_{pid}_{time}/{file}
//   {file} = {tracer}_tracer_{object}.txt|.bin
//          | schedule_tracer_ts_{device}.txt
//          | stackcore_tracer_{signo}_{tid}_{program}_{time}.txt
//          | hccl_tracer_ledger.bin (the process's collective ledger, proto/ledger_reader.h)
//
// plus names of atraced's own, all hidden (leading '.') so CANN tools skip them:
//   - the aside directory .atraced_aged, where aging moves an event directory (one rename)
//     before its delete: {serial}_{event dir name} inside it. Recovery empties it.
//   - the marker file .atraced_{seq}_{host|device}_{device}_{uid}_{created_us} and the
//     staging directory .atraced_staging_{seq} of atraced 0.1, which kept the creation order
//     inside each event directory. The order log (order_log.h) replaced both; these names
//     are still parsed so that a tree written by 0.1 is adopted once, at the first start.
// A name that does not parse is not atraced's: it is never counted and never deleted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "atraced/base/name_rule.h"

namespace atraced {

enum class EventKind : uint8_t { kSchedule = 1, kStackcore = 2, kExit = 3 };
enum class Side : uint8_t { kHost = 0, kDevice = 1 };

std::string_view EventKindName(EventKind kind);  // "schedule", "stackcore", "exit"
std::optional<EventKind> ParseEventKind(std::string_view name);
std::string_view SideName(Side side);             // "host", "device"

// Object and program names follow the one name rule of atraced/base/name_rule.h.

inline constexpr size_t kMaxObjectName = 31;   // CANN: object names are < 32 bytes
inline constexpr size_t kMaxProgramName = 63;  // CANN: MAX_FILENAME_LEN 64

struct ProcessDirName {
  int32_t pgid = 0;
  int32_t pid = 0;
  std::string time;  // 20 digits
  bool operator==(const ProcessDirName&) const = default;
};
std::string FormatProcessDirName(const ProcessDirName& name);
std::optional<ProcessDirName> ParseProcessDirName(std::string_view text);

struct EventDirName {
  EventKind kind = EventKind::kSchedule;
  int32_t pid = 0;
  std::string time;  // 20 digits
  bool operator==(const EventDirName&) const = default;
};
std::string FormatEventDirName(const EventDirName& name);
std::optional<EventDirName> ParseEventDirName(std::string_view text);

// {tracer}_tracer_{object}{.txt|.bin}; the tracer is "schedule", the only one CANN implements.
struct ObjectFileName {
  std::string tracer = "schedule";
  std::string object;
  bool binary = false;
  bool operator==(const ObjectFileName&) const = default;
};
std::string FormatObjectFileName(const ObjectFileName& name);
std::optional<ObjectFileName> ParseObjectFileName(std::string_view text);
// schedule_tracer_ts_{device}.txt, the Task Schedule dump of one device.
std::string FormatTsFileName(uint32_t device_id);

struct StackcoreFileName {
  int32_t signo = 0;
  int32_t tid = 0;
  std::string program;
  std::string time;  // 20 digits
  bool binary = false;  // .bin: CANN's on-demand stack dump (STACK_DUMP), else .txt
  bool operator==(const StackcoreFileName&) const = default;
};
std::string FormatStackcoreFileName(const StackcoreFileName& name);
std::optional<StackcoreFileName> ParseStackcoreFileName(std::string_view text);

// True if `text` is a file name one of the file forms above parses.
bool IsTraceFileName(std::string_view text);

// A trace file name, well-formed by construction: it is made only from typed parts that were
// validated where they entered (the protocol decoders, or a Parse* of a name read back from
// disk). The store opens nothing else, so it never checks a file name again.
class TraceFileName {
 public:
  static TraceFileName Object(const ObjectFileName& n) { return TraceFileName(FormatObjectFileName(n)); }
  static TraceFileName Ts(uint32_t device_id) { return TraceFileName(FormatTsFileName(device_id)); }
  static TraceFileName Stackcore(const StackcoreFileName& n) { return TraceFileName(FormatStackcoreFileName(n)); }
  static TraceFileName Ledger();
  const std::string& str() const { return name_; }

 private:
  explicit TraceFileName(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

struct EventMarker {
  uint64_t seq = 0;
  Side side = Side::kHost;
  uint32_t device_id = 0;
  uint32_t uid = 0;
  int64_t created_us = 0;  // daemon wall clock, microseconds since the epoch; display only
  bool operator==(const EventMarker&) const = default;
};
std::string FormatMarkerName(const EventMarker& marker);
std::optional<EventMarker> ParseMarkerName(std::string_view text);

inline constexpr std::string_view kAsideDirName = ".atraced_aged";
// The name an aged event directory takes inside the aside directory, and back: the serial
// keeps names unique, the event directory's name says what it was.
std::string FormatAsideName(uint64_t serial, std::string_view event_dir);
std::optional<uint64_t> ParseAsideSerial(std::string_view text);

std::string FormatStagingName(uint64_t seq);
std::optional<uint64_t> ParseStagingName(std::string_view text);

}  // namespace atraced
