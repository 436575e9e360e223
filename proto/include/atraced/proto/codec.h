// Encoders and decoders for atraced frames and message payloads (see proto/PROTOCOL.md).
//
// Socket-free and exception-free. Decoders check syntax only: sizes, reserved fields, enum
// ranges, name and time formats. Whether a peer may do what it asks (permissions, known
// ids) is the daemon's business. Decoded spans view into the payload passed in and live
// as long as it does; decoded strings are copies.
#ifndef ATRACED_PROTO_CODEC_H_
#define ATRACED_PROTO_CODEC_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "atraced/base/status.h"
#include "atraced/proto/wire.h"

namespace atraced::proto {

inline constexpr uint32_t kMaxListEntries = ATR_MAX_LIST_ENTRIES;

struct FrameHeader {  // magic implied
  uint32_t length = 0;
  uint16_t opcode = 0;
  uint16_t flags = 0;
  uint32_t request_id = 0;
};

// Appends one whole frame (header + payload) to `out`.
// Precondition: payload.size() <= ATR_MAX_PAYLOAD.
void AppendFrame(std::vector<uint8_t>& out, uint16_t opcode, uint16_t flags, uint32_t request_id,
                 std::span<const uint8_t> payload);
struct FileAppend;
// A FILE_APPEND frame with its payload encoded in place, the same bytes as AppendFrame of the
// encoded message: the data (up to 1 MiB) is copied once, not first into a payload buffer.
void AppendFrame(std::vector<uint8_t>& out, uint32_t request_id, const FileAppend& m);

// Decoders return a Status: OK, or a positive errno (EBADMSG, EINVAL, ENAMETOOLONG, ...) with
// a message naming the field, e.g. "object name: character 0x2f '/' not allowed".

// Names are checked with the one rule in atraced/base/name_rule.h (IsSafeName), so a
// decoded message's names are already valid file-name components.

// ---- Requests -------------------------------------------------------------------------

struct Hello {
  uint16_t major = ATR_VERSION_MAJOR;
  uint16_t minor = ATR_VERSION_MINOR;
  uint64_t features = 0;
};

struct EventBegin {
  uint32_t event_id = 0;
  uint8_t kind = 0;
  uint8_t side = 0;
  uint32_t device_id = 0;
  int32_t host_pid = 0;
  std::string time;  // "" (daemon clock) or exactly ATR_TIME_LEN digits
};

struct FileOpen {
  uint32_t event_id = 0;
  uint32_t file_id = 0;
  uint8_t form = 0;
  uint8_t suffix = 0;
  uint32_t device_id = 0;
  int32_t signo = 0;
  int32_t tid = 0;
  std::string time;  // "" or exactly ATR_TIME_LEN digits
  // OBJECT: object name. STACKCORE: program name, or "" for the peer's own (the daemon
  // asks the kernel). TS: "".
  std::string name;
};

struct FileAppend {
  uint32_t file_id = 0;
  std::span<const uint8_t> data;  // views into the payload
};

struct IdRequest {  // FILE_GET_FD, FILE_CLOSE, EVENT_END
  uint32_t id = 0;
};

struct StatusRequest {};  // STATUS: empty payload

struct ListRequest {
  uint64_t after_seq = 0;
  uint32_t max_entries = 0;
};

struct VacuumRequest {
  bool dry_run = false;
};

// VACUUM_BY (19): journalctl's vacuum verbs; see wire.h atr_vacuum_by_request.
struct VacuumBy {
  bool dry_run = false;
  uint16_t verbs = 0;          // ATR_VACUUM_*, at least one
  uint32_t keep = 0;           // KEEP: >= 1
  uint64_t older_than_us = 0;  // OLDER_THAN: >= 1
  uint64_t max_use = 0;        // MAX_USE: bytes
};

// ---- 1.1 requests (ATR_FEATURE_MEMFD) ---------------------------------------------------

struct RingStructField {
  uint8_t type = 0;
  uint8_t mode = 0;
  uint16_t length = 0;
  std::string name;  // 0..ATR_MAX_STRUCT_NAME bytes, no NUL
};

struct RingStructEntry {
  uint8_t buffer_type = 0;  // 0..ATR_MAX_STRUCT_ENTRIES - 1
  std::string name;         // 0..ATR_MAX_STRUCT_NAME bytes, no NUL
  std::vector<RingStructField> fields;  // 1..ATR_MAX_STRUCT_FIELDS
};

// The memfd travels beside the payload (SCM_RIGHTS on the frame's first byte).
struct RingRegister {
  uint32_t object_id = 0;
  uint8_t tracer_type = 0;
  uint8_t flags = 0;  // ATR_RING_EXIT_SAVE | ATR_RING_NO_LOCK
  uint32_t msg_num = 0;
  uint32_t msg_size = 0;
  uint32_t ring_bytes = 0;
  int32_t utc_offset_s = 0;
  std::string name;                      // the object name: schedule_tracer_{name}.txt|.bin
  std::vector<RingStructEntry> structs;  // ascending buffer_type; non-empty means .bin
};

struct RingReport {  // RING_RELEASE is an IdRequest
  bool wait = false;
  std::vector<uint32_t> object_ids;  // 1..ATR_MAX_REPORT_OBJECTS distinct non-zero ids
};

struct RingSaveAll {
  bool wait = false;
  uint8_t tracer_type = 0;
};

struct Goodbye {};  // empty payload

// CRASH (ATR_FEATURE_CRASH): sent by the signal handler; see wire.h atr_crash.
struct Crash {
  int32_t signo = 0;  // 1..ATR_MAX_SIGNO
  int32_t code = 0;   // si_code
  int32_t tid = 0;    // > 0
  uint64_t fault_addr = 0;
};

// DUMP (ATR_FEATURE_CRASH): sent by the on-demand dump signal's handler; see wire.h atr_dump.
struct Dump {
  int32_t signo = 0;  // 1..ATR_MAX_SIGNO
  int32_t tid = 0;    // > 0
};

// STACK_DUMP (ATR_FEATURE_STACK_DUMP): the dump signal queued with CANN's stack-dump value;
// see wire.h atr_stack_dump.
struct StackDump {
  int32_t signo = 0;   // 1..ATR_MAX_SIGNO
  int32_t tid = 0;     // > 0
  uint32_t flags = 0;  // ATR_STACK_DUMP_*
};

// DEVICE_STATS (ATR_FEATURE_DEVICE_STATS): one device receiver's counts since its last
// answered DEVICE_STATS; see wire.h atr_device_stats.
struct DeviceStats {
  uint32_t device_id = 0;  // 0..ATR_MAX_DEVICE_ID
  uint64_t received = 0, saved = 0, dropped_invalid = 0, dropped_daemon = 0, reconnects = 0;
};

// PROCESS_DUMP (ATR_FEATURE_PROCESS_DUMP): live processes saved from outside; see wire.h
// atr_process_dump. Either `pids` or a selection.
struct ProcessDump {
  uint32_t select = 0;       // ATR_PROCESS_DUMP_*
  uint32_t uid = 0;          // ATR_PROCESS_DUMP_UID
  std::string comm;          // ATR_PROCESS_DUMP_COMM: a program name (name rule), else ""
  std::vector<int32_t> pids;  // 0..ATR_MAX_DUMP_PROCESSES distinct pids > 0
  std::string job{};          // ATR_PROCESS_DUMP_JOB: a job label (CheckLabel), else ""
};

// LABELS (ATR_FEATURE_LABELS): the job, rank and world size a process says it belongs to,
// each "" when not set; see wire.h. The decoder checks each with CheckLabel.
struct Labels {
  std::string job, rank, world_size;
  bool empty() const { return job.empty() && rank.empty() && world_size.empty(); }
  bool operator==(const Labels&) const = default;
};

// "" when `value` is a valid label of its kind (or empty), else why not, naming the label:
// job: at most ATR_MAX_LABEL bytes of [A-Za-z0-9._:@+=-]; rank: a decimal 0..2147483647;
// world_size: 1..2147483647 (no sign, no leading zero).
enum class LabelKind { kJob, kRank, kWorldSize };
std::string CheckLabel(LabelKind kind, std::string_view value);

// LABELS' request as the daemon reads it: the labels, and (ATR_FEATURE_HANG_TIMEOUT) the
// process's ATRACE_HANG_TIMEOUT as it was written, "" when not sent. Encoded with it only
// when it is set: a client clears it for a daemon that did not grant the bit.
struct LabelsRequest {
  Labels labels;
  std::string hang_timeout;
};
// "" when `value` is a valid hang_timeout (a time span above zero, ParseTimeSpan's syntax,
// at most ATR_MAX_LABEL bytes) or empty, else why not, naming the label.
std::string CheckHangTimeout(std::string_view value);
// ATRACE_HANG_TIMEOUT of this process's environment, through `get`, as it is ("" unset).
std::string HangTimeoutFromEnvironment(const char* (*get)(const char*));

// The labels of this process's environment (the first set of each list, ATRACE_JOB,
// SLURM_JOB_ID, JOB_ID; RANK_ID, RANK, SLURM_PROCID,
// JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's pod index); RANK_SIZE, WORLD_SIZE, SLURM_NTASKS),
// read through `get` (getenv; a test's own), as they are: the daemon judges them.
Labels LabelsFromEnvironment(const char* (*get)(const char*));
// The same, checked as the daemon checks them (CheckLabel), before they are sent: a value that
// is not a label is left out, the others kept, and `refused` says why, naming the variable and
// its value, escaped ("RANK_ID='-3': rank: not a decimal from 0 to 2147483647"); "" if none.
Labels CheckedLabelsFromEnvironment(const char* (*get)(const char*), std::string* refused);

// ---- Reply bodies (after atr_reply_head) ----------------------------------------------

struct HelloReply {
  uint16_t major = 0;
  uint16_t minor = 0;
  uint32_t max_payload = 0;
  uint64_t features = 0;
  uint32_t peer_pid = 0;
  uint32_t peer_uid = 0;
  // 1.1, present exactly when `features` has ATR_FEATURE_MEMFD (atr_hello_reply_memfd).
  uint32_t daemon_pid = 0;
};

struct PathReply {  // EVENT_BEGIN, FILE_OPEN: absolute path
  std::string path;
};

struct SizeReply {  // FILE_APPEND, FILE_CLOSE, EVENT_END
  uint64_t size = 0;
};

struct StatusReply {
  uint32_t record_num = 0, host_dirs = 0, device_dirs = 0, exit_dirs = 0, clients = 0;
  uint64_t events_begun = 0, dirs_aged = 0, bytes_written = 0, removal_failures = 0,
           requests_refused = 0;
  std::string root;
  uint64_t bytes_apparent = 0;  // after root; from an older daemon, bytes_written
  bool apparent_sent = true;    // false: the body ended at root (an older daemon); not encoded
  // After bytes_apparent (atr_status_reply_retention); `present` is false from an older daemon.
  struct Retention {
    bool present = false;
    uint64_t max_use = 0, keep_free = 0, fs_free = 0, used_host = 0, used_device = 0, used_exit = 0, bytes_freed = 0;
    uint64_t aged_count = 0, aged_max_use = 0, aged_keep_free = 0, aged_max_age = 0, aged_vacuum = 0;
    uint64_t refused_max_use = 0, refused_keep_free = 0, refused_rate_limit = 0, refused_client_bytes = 0;
    uint32_t exit_record_num = 0, aging_policy = 0;
    uint64_t max_age_s = 0;
  } retention;
  // After the retention block (atr_status_pool); `present` is false from an older daemon.
  struct Pool {
    uint8_t pool = 0;  // enum atr_pool; unknown values are kept for the caller to skip
    uint64_t limit = 0, per_uid = 0, held = 0;
    std::vector<std::pair<uint32_t, uint64_t>> uids;  // (uid, held), largest first
  };
  struct Shares {
    bool present = false;
    std::vector<Pool> pools;
  } shares;
  // After the pools block (atr_status_device); `present` is false from an older daemon.
  struct Device {
    uint32_t device_id = 0;
    uint64_t events = 0, received = 0, saved = 0, dropped_invalid = 0, dropped_daemon = 0, reconnects = 0;
  };
  struct Devices {
    bool present = false;
    std::vector<Device> devices;  // in device order
  } devices;
  // After the devices block: directories holding a save that was cut short (LIST's
  // ATR_LIST_INCOMPLETE). `incomplete_sent` is false from an older daemon.
  bool incomplete_sent = false;
  uint64_t incomplete_dirs = 0;
  // After incomplete_dirs: the dumps dump-keep spares now, and those the byte limits aged
  // while it still spared them. `dumps_sent` is false from an older daemon.
  bool dumps_sent = false;
  uint64_t dumps_kept = 0, dumps_aged_early = 0;
};

struct ListEntry {
  uint64_t seq = 0;
  uint8_t kind = 0, side = 0;
  uint32_t device_id = 0;
  int32_t pid = 0;
  uint32_t uid = 0;
  uint64_t bytes = 0;  // allocated
  uint64_t created_unix_us = 0;
  std::string path;             // relative to <root>/atrace
  uint64_t apparent_bytes = 0;  // after all entries; from an older daemon, `bytes`
  std::string comm;             // after the apparent sizes: the program that made it; "" unknown
  uint32_t flags = 0;           // after the programs: ATR_LIST_* bits; unknown bits are kept
  Labels labels;                // after the flags: the process's job, rank, world size; "" unknown
};

struct ListReply {
  std::vector<ListEntry> entries;
  bool apparent_sent = true;  // false: the body had no apparent sizes (an older daemon); not encoded
  bool comm_sent = true;      // false: the body had no programs (an older daemon); not encoded
  bool flags_sent = true;     // false: the body had no flags (an older daemon); not encoded
  bool labels_sent = true;    // false: the body had no labels (an older daemon); not encoded
};

struct VacuumReply {
  std::vector<std::string> paths;  // relative to <root>/atrace; at most ATR_MAX_VACUUM_PATHS
  uint32_t omitted = 0;            // removed (or to be removed) but not listed
};

struct VacuumByReply {
  std::vector<std::string> paths;  // relative to <root>/atrace; at most ATR_MAX_VACUUM_PATHS
  uint32_t omitted = 0;            // removed (or to be removed) but not listed
  uint64_t bytes = 0;              // allocated bytes of all of them, listed or not
};

// CRASH's reply body with ATR_FEATURE_CRASH_PATH: the report's absolute path ("" none).
struct CrashReply {
  std::string report;
};

// PROCESS_DUMP's reply body: one entry per process chosen.
struct ProcessDumpEntry {
  int32_t pid = 0;
  int32_t status = 0;  // 0 or a negative atr_status
  uint32_t threads = 0, rings = 0, max_stop_us = 0;
  std::string text;    // status 0: the event directory's absolute path; else why not
};
struct ProcessDumpReply {
  std::vector<ProcessDumpEntry> entries;  // at most ATR_MAX_DUMP_PROCESSES
  uint32_t omitted = 0;                   // chosen but not dumped: past the bound
};

// LIST_LIVE (ATR_FEATURE_LIST_LIVE): the live processes the sender may see; see wire.h
// atr_list_live. `job` "" lists every one, else only that job's (a job label, CheckLabel).
struct ListLive {
  std::string job;
};
struct LiveEntry {
  int32_t pid = 0;
  uint32_t uid = 0;
  uint32_t flags = 0;  // ATR_LIVE_*
  uint32_t rings = 0;
  uint64_t last_moved_unix_us = 0, still_ms = 0, timeout_ms = 0;
  std::string comm;  // the program (name rule), "" unknown
  Labels labels;
};
struct ListLiveReply {
  std::vector<LiveEntry> entries;  // at most ATR_MAX_LIVE_ENTRIES
  uint32_t omitted = 0;            // matched past the bound
};

// AGED_DUMPS (ATR_FEATURE_AGED_DUMPS): the dump directories aging removed; see wire.h
// atr_aged_entry. Its request is LIST_LIVE's (a ListLive: the job, or "" for every one).
struct AgedEntry {
  uint64_t aged_unix_us = 0;
  uint32_t uid = 0;
  uint8_t reason = ATR_AGED_COUNT;  // ATR_AGED_*
  uint8_t flags = 0;                // ATR_AGED_EXPORTED, ATR_AGED_HANG
  std::string path;                 // relative to <root>/atrace
  Labels labels;
  bool operator==(const AgedEntry&) const = default;
};
struct AgedDumpsReply {
  std::vector<AgedEntry> entries;  // at most ATR_MAX_AGED_ENTRIES, oldest first
  uint32_t omitted = 0;            // matched past the bound
};

// DUMPS_EXPORTED (ATR_FEATURE_DUMPS_EXPORTED): the dump directories a bundle now holds; see
// wire.h atr_dumps_exported. 1..ATR_MAX_LIST_ENTRIES relative paths.
struct DumpsExported {
  std::vector<std::string> paths;
};
struct DumpsExportedReply {
  uint32_t released = 0, skipped = 0;
};

// ---- Encoding: append the payload bytes (not the frame header) to `out` ----------------
// Encoders do not validate; the caller passes values the decoder would accept. Strings
// longer than their u16 length field are cut (they cannot be represented).

void Encode(const Hello& m, std::vector<uint8_t>& out);
void Encode(const EventBegin& m, std::vector<uint8_t>& out);
void Encode(const FileOpen& m, std::vector<uint8_t>& out);
void Encode(const FileAppend& m, std::vector<uint8_t>& out);
void Encode(const IdRequest& m, std::vector<uint8_t>& out);
void Encode(const StatusRequest& m, std::vector<uint8_t>& out);
void Encode(const ListRequest& m, std::vector<uint8_t>& out);
void Encode(const VacuumRequest& m, std::vector<uint8_t>& out);
void Encode(const VacuumBy& m, std::vector<uint8_t>& out);
void Encode(const RingRegister& m, std::vector<uint8_t>& out);
void Encode(const RingReport& m, std::vector<uint8_t>& out);
void Encode(const RingSaveAll& m, std::vector<uint8_t>& out);
void Encode(const Goodbye& m, std::vector<uint8_t>& out);
void Encode(const Crash& m, std::vector<uint8_t>& out);
void Encode(const Dump& m, std::vector<uint8_t>& out);
void Encode(const StackDump& m, std::vector<uint8_t>& out);
void Encode(const DeviceStats& m, std::vector<uint8_t>& out);
void Encode(const ProcessDump& m, std::vector<uint8_t>& out);
void Encode(const Labels& m, std::vector<uint8_t>& out);
void Encode(const LabelsRequest& m, std::vector<uint8_t>& out);
void Encode(const DumpsExported& m, std::vector<uint8_t>& out);

// A reply payload is reply_head + body: EncodeReplyOk, then Encode() the body (if any).
void EncodeReplyOk(std::vector<uint8_t>& out);
// A refusal: `error` (not OK) as the wire's status, WireStatus(error), and its message cut
// to ATR_MAX_MESSAGE bytes without splitting a UTF-8 sequence.
void EncodeReplyError(const Status& error, std::vector<uint8_t>& out);
// The atr_status a reply carries for `s`: 0, or its errno negated. The one place the sign
// flips: everything in atraced holds errors as positive errno values.
int32_t WireStatus(const Status& s);

void Encode(const HelloReply& m, std::vector<uint8_t>& out);
void Encode(const PathReply& m, std::vector<uint8_t>& out);
void Encode(const SizeReply& m, std::vector<uint8_t>& out);
void Encode(const StatusReply& m, std::vector<uint8_t>& out);
void Encode(const ListReply& m, std::vector<uint8_t>& out);
void Encode(const VacuumReply& m, std::vector<uint8_t>& out);
void Encode(const VacuumByReply& m, std::vector<uint8_t>& out);
void Encode(const CrashReply& m, std::vector<uint8_t>& out);
void Encode(const ProcessDumpReply& m, std::vector<uint8_t>& out);
void Encode(const ListLive& m, std::vector<uint8_t>& out);
void Encode(const ListLiveReply& m, std::vector<uint8_t>& out);
void Encode(const AgedDumpsReply& m, std::vector<uint8_t>& out);
void Encode(const DumpsExportedReply& m, std::vector<uint8_t>& out);

// ---- Decoding: `payload` is the bytes after the frame header ----------------------------
// On error the output struct is left in an unspecified (but valid) state.

Status Decode(std::span<const uint8_t> payload, Hello* m);
Status Decode(std::span<const uint8_t> payload, EventBegin* m);
Status Decode(std::span<const uint8_t> payload, FileOpen* m);
Status Decode(std::span<const uint8_t> payload, FileAppend* m);
Status Decode(std::span<const uint8_t> payload, IdRequest* m);
Status Decode(std::span<const uint8_t> payload, StatusRequest* m);
Status Decode(std::span<const uint8_t> payload, ListRequest* m);
Status Decode(std::span<const uint8_t> payload, VacuumRequest* m);
Status Decode(std::span<const uint8_t> payload, VacuumBy* m);
Status Decode(std::span<const uint8_t> payload, RingRegister* m);
Status Decode(std::span<const uint8_t> payload, RingReport* m);
Status Decode(std::span<const uint8_t> payload, RingSaveAll* m);
Status Decode(std::span<const uint8_t> payload, Goodbye* m);
Status Decode(std::span<const uint8_t> payload, Crash* m);
Status Decode(std::span<const uint8_t> payload, Dump* m);
Status Decode(std::span<const uint8_t> payload, StackDump* m);
Status Decode(std::span<const uint8_t> payload, DeviceStats* m);
Status Decode(std::span<const uint8_t> payload, ProcessDump* m);
Status Decode(std::span<const uint8_t> payload, Labels* m);
Status Decode(std::span<const uint8_t> payload, LabelsRequest* m);
Status Decode(std::span<const uint8_t> payload, DumpsExported* m);

struct ReplyHead {
  int32_t status = 0;
  std::string message;             // status < 0 only
  // status == 0: the body to Decode(). status < 0: whatever follows the message (empty in
  // 1.0; ignored for forward compatibility). Views into the payload.
  std::span<const uint8_t> body;
};
Status DecodeReply(std::span<const uint8_t> payload, ReplyHead* m);

// Reply bodies. Trailing bytes are ignored: later minor versions may append fields.
Status Decode(std::span<const uint8_t> body, HelloReply* m);
Status Decode(std::span<const uint8_t> body, PathReply* m);
Status Decode(std::span<const uint8_t> body, SizeReply* m);
Status Decode(std::span<const uint8_t> body, StatusReply* m);
Status Decode(std::span<const uint8_t> body, ListReply* m);
Status Decode(std::span<const uint8_t> body, VacuumReply* m);
Status Decode(std::span<const uint8_t> body, VacuumByReply* m);
Status Decode(std::span<const uint8_t> body, CrashReply* m);
Status Decode(std::span<const uint8_t> body, ProcessDumpReply* m);
Status Decode(std::span<const uint8_t> payload, ListLive* m);
Status Decode(std::span<const uint8_t> body, ListLiveReply* m);
Status Decode(std::span<const uint8_t> body, AgedDumpsReply* m);
Status Decode(std::span<const uint8_t> body, DumpsExportedReply* m);

// ---- Names for logs ----------------------------------------------------------------------

// "HELLO", "FILE_APPEND", ...; "UNKNOWN" for an opcode not in wire.h.
std::string_view OpcodeName(uint16_t opcode);
// "OK", "EINVAL", ...; "UNKNOWN" for a value not in wire.h.
std::string_view StatusName(int32_t status);

}  // namespace atraced::proto

#endif  // ATRACED_PROTO_CODEC_H_
