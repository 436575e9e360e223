// PROCESS_DUMP (1.1, behind ATR_FEATURE_PROCESS_DUMP): atracectl dump's request and its
// reply. Same rules as codec.cc: exact size, reserved zero, so a decoded request re-encodes
// to the bytes it came from; a reply ignores bytes after what it knows.
#include <algorithm>
#include <set>

#include "atraced/proto/byte_io.h"
#include "atraced/proto/codec.h"
#include "checks.h"

namespace atraced::proto {

using internal::CheckName;
using internal::CheckPath;
using internal::CheckRange;
using internal::CheckReserved;
using internal::Error;
using internal::PutString16;
using internal::ReadString16;

void Encode(const ProcessDump& m, std::vector<uint8_t>& out) {
  PutU32(out, m.select);
  PutU32(out, m.uid);
  PutU16(out, static_cast<uint16_t>(m.pids.size()));
  PutU8(out, static_cast<uint8_t>(m.comm.size()));
  PutU8(out, static_cast<uint8_t>(m.job.size()));
  PutZeros(out, 4);
  PutBytes(out, m.comm);
  PutBytes(out, m.job);
  for (int32_t pid : m.pids) PutI32(out, pid);
}

Status Decode(std::span<const uint8_t> payload, ProcessDump* m) {
  if (payload.size() < sizeof(atr_process_dump)) {
    return Error(EBADMSG, "PROCESS_DUMP", "payload is " + std::to_string(payload.size()) + " bytes, expected at least 16");
  }
  ByteReader in(payload);
  uint16_t pid_count = 0;
  uint8_t comm_len = 0, job_len = 0;
  std::span<const uint8_t> reserved;
  PROTO_READ(in.ReadU32(&m->select) && in.ReadU32(&m->uid) && in.ReadU16(&pid_count) && in.ReadU8(&comm_len) &&
                 in.ReadU8(&job_len) && in.ReadBytes(4, &reserved),
             "PROCESS_DUMP");
  for (uint8_t b : reserved) PROTO_TRY(CheckReserved("reserved", b));
  if ((m->select & ~ATR_PROCESS_DUMP_KNOWN_SELECT) != 0) {
    return Error(EINVAL, "select", "unknown bits " + std::to_string(m->select));
  }
  PROTO_TRY(CheckRange("pid_count", pid_count, 0, ATR_MAX_DUMP_PROCESSES));
  if ((m->select == 0) == (pid_count == 0)) {
    return Error(EINVAL, "select", "give either pids or a selection, not both and not neither");
  }
  if (!(m->select & ATR_PROCESS_DUMP_UID)) PROTO_TRY(CheckReserved("uid", m->uid));
  if ((m->select & ATR_PROCESS_DUMP_COMM) == 0 ? comm_len != 0 : comm_len == 0) {
    return Error(EINVAL, "comm_len", "a comm is given exactly with ATR_PROCESS_DUMP_COMM");
  }
  if ((m->select & ATR_PROCESS_DUMP_JOB) == 0 ? job_len != 0 : job_len == 0) {
    return Error(EINVAL, "job_len", "a job is given exactly with ATR_PROCESS_DUMP_JOB");
  }
  const size_t want = sizeof(atr_process_dump) + comm_len + job_len + size_t{4} * pid_count;
  if (payload.size() != want) {
    return Error(EBADMSG, "PROCESS_DUMP",
                 "payload is " + std::to_string(payload.size()) + " bytes, its counts say " + std::to_string(want));
  }
  std::span<const uint8_t> comm;
  PROTO_READ(in.ReadBytes(comm_len, &comm), "PROCESS_DUMP");
  m->comm.assign(comm.begin(), comm.end());
  if (!m->comm.empty()) PROTO_TRY(CheckName("comm", m->comm, ATR_MAX_PROGRAM_NAME));
  std::span<const uint8_t> job;
  PROTO_READ(in.ReadBytes(job_len, &job), "PROCESS_DUMP");
  m->job.assign(job.begin(), job.end());
  if (std::string why = CheckLabel(LabelKind::kJob, m->job); !why.empty()) return Status::Error(EINVAL, why);
  m->pids.clear();
  std::set<int32_t> seen;
  for (uint16_t i = 0; i < pid_count; ++i) {
    int32_t pid = 0;
    PROTO_READ(in.ReadI32(&pid), "PROCESS_DUMP");
    PROTO_TRY(CheckRange("pid", pid, 1, INT32_MAX));
    if (!seen.insert(pid).second) return Error(EINVAL, "pid", std::to_string(pid) + " is given twice");
    m->pids.push_back(pid);
  }
  return Status::Ok();
}

void Encode(const ProcessDumpReply& m, std::vector<uint8_t>& out) {
  PutU32(out, static_cast<uint32_t>(m.entries.size()));
  PutU32(out, m.omitted);
  for (const ProcessDumpEntry& e : m.entries) {
    PutI32(out, e.pid);
    PutI32(out, e.status);
    PutU32(out, e.threads);
    PutU32(out, e.rings);
    PutU32(out, e.max_stop_us);
    PutU32(out, 0);  // reserved
    PutString16(out, e.text);
  }
}

Status Decode(std::span<const uint8_t> body, ProcessDumpReply* m) {
  ByteReader in(body);
  uint32_t count = 0;
  PROTO_READ(in.ReadU32(&count) && in.ReadU32(&m->omitted), "PROCESS_DUMP reply");
  PROTO_TRY(CheckRange("count", count, 0, ATR_MAX_DUMP_PROCESSES));
  m->entries.clear();
  for (uint32_t i = 0; i < count; ++i) {
    ProcessDumpEntry e;
    uint32_t reserved = 0;
    PROTO_READ(in.ReadI32(&e.pid) && in.ReadI32(&e.status) && in.ReadU32(&e.threads) && in.ReadU32(&e.rings) &&
                   in.ReadU32(&e.max_stop_us) && in.ReadU32(&reserved),
               "PROCESS_DUMP reply");
    PROTO_TRY(CheckRange("pid", e.pid, 1, INT32_MAX));
    PROTO_TRY(CheckRange("status", e.status, -INT32_MAX, 0));
    PROTO_TRY(CheckReserved("reserved", reserved));
    PROTO_TRY(ReadString16(in, e.status == 0 ? "path" : "message", &e.text));
    if (e.status == 0) PROTO_TRY(CheckPath("path", e.text, /*absolute=*/true));
    m->entries.push_back(std::move(e));
  }
  return Status::Ok();
}

}  // namespace atraced::proto
