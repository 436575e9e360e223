#include "event_files.h"

#include <string>

#include "atraced/store/trace_time.h"

namespace atraced {

Status EventFiles::OnEventBegin(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::EventBegin m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  if (c.events.count(m.event_id)) return Status::Error(EEXIST, "event_id: " + std::to_string(m.event_id) + " is already open");
  if (c.events.size() >= limits_.max_events_per_client) {
    return Status::Error(EBUSY, "events: this connection already has " + std::to_string(c.events.size()) +
                                  " open events, the limit");
  }
  const Side side = m.side == ATR_SIDE_DEVICE ? Side::kDevice : Side::kHost;
  if (side == Side::kHost && m.device_id != 0) return Status::Error(EINVAL, "device_id: must be 0 for a host event");
  if (side == Side::kHost && !m.time.empty()) return Status::Error(EINVAL, "time: only device events carry their own time");
  std::string why;
  if (!m.time.empty() && !IsValidTraceTime(m.time, &why)) return Status::Error(EINVAL, "time: " + why);

  int32_t pid = c.peer.pid;
  uint32_t uid = c.peer.uid;  // whose the directory is: who reads it (read_grants.h)
  const ProcessDirName* process = c.process_name ? &*c.process_name : nullptr;
  const std::string* program = &c.program;  // the process the event is for: COMM in a listing
  // A connection made after its process sent LABELS has them on the process's record.
  const ProcessRecord* own = c.labels.empty() ? records_.Find(c.peer.pid, c.start_ticks) : nullptr;
  const proto::Labels* labels = own != nullptr ? &own->labels : &c.labels;
  if (m.host_pid != 0 && m.host_pid != c.peer.pid) {
    if (!c.may_forward) {
      return Status::Error(EPERM, "host_pid: forwarder claim refused: this process may not write for host pid " +
                         std::to_string(m.host_pid) +
                         "; only root, the daemon's uid or the forwarder group may write for another process", Status::LogAs::kWarning);
    }
    if (side != Side::kDevice) return Status::Error(EINVAL, "host_pid: only device events may be written for another process");
    if (m.host_pid < 0) return Status::Error(EINVAL, "host_pid: must be positive");
    auto facts = processes_.Lookup(m.host_pid);
    ProcessRecord* known = records_.FindConnected(m.host_pid);
    if (!facts && known == nullptr) return Status::Error(ESRCH, "host_pid: no process " + std::to_string(m.host_pid));
    ProcessRecord* rec = facts ? records_.RecordFor(m.host_pid, facts) : known;
    process = &rec->name;
    program = &rec->program;
    labels = &rec->labels;
    pid = m.host_pid;
    // The claimed process's own (effective) uid, as the kernel tells it; one /proc cannot
    // tell is the daemon's own, so nobody but root and the reader group reads it.
    uid = facts && facts->creds ? facts->creds->uids[1] : limits_.daemon_uid;
    ++counters_.forwarder_claims;
    log_.Notice("forwarder pid ", c.peer.pid, " uid ", c.peer.uid, " writes a device event for host pid ", pid);
  }
  if (!process) return Status::Error(EINVAL, "process: malformed process directory " + c.process_dir);
  EventSpec spec{*process, static_cast<EventKind>(m.kind), pid, m.time, side, m.device_id, uid, *program, /*save=*/false, *labels,
                DumpKind::kNone};
  if (Status refused = admission_.AdmitEvent(c, spec.kind); !refused.ok()) return refused;
  auto r = store_.BeginEvent(spec, c.utc_offset_s);
  if (!r.ok()) return Status(r.status()).LoggedAs(r.status().err() == ENOSPC ? Status::LogAs::kSummarized : Status::LogAs::kNotice);
  c.events.emplace(m.event_id, r->seq);
  if (side == Side::kDevice) devices_.CountEvent(c, m.device_id);
  EncodePath({store_.fs().trace_dir(), "/", r->rel_path}, body);
  return Status::Ok();
}

void EventFiles::EncodePath(std::initializer_list<std::string_view> parts, std::vector<uint8_t>& body) {
  // Two replies per event carry a path: built in a buffer kept between requests rather than
  // by string concatenation (a few allocations each).
  std::string& path = path_reply_.path;
  path.clear();
  for (std::string_view part : parts) path.append(part);
  proto::Encode(path_reply_, body);
}

Status EventFiles::OnFileOpen(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::FileOpen m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  auto ev = c.events.find(m.event_id);
  if (ev == c.events.end()) return Status::Error(ENOENT, "event_id: " + std::to_string(m.event_id) + " is not open");
  if (c.files.count(m.file_id)) return Status::Error(EEXIST, "file_id: " + std::to_string(m.file_id) + " is already open");
  if (c.files.size() >= limits_.max_files_per_client) {
    return Status::Error(EBUSY, "files: this connection already has " + std::to_string(c.files.size()) + " open files, the limit");
  }
  // The decoder has already checked the names against the one name rule (base/name_rule.h).
  std::optional<TraceFileName> name;
  std::string why;
  switch (m.form) {
    case ATR_FILE_OBJECT:
      name = TraceFileName::Object({"schedule", m.name, m.suffix == ATR_SUFFIX_BIN});
      break;
    case ATR_FILE_TS:
      name = TraceFileName::Ts(m.device_id);
      break;
    case ATR_FILE_STACKCORE: {
      std::string program = m.name;
      if (program.empty()) {  // the kernel's name for the process, already made safe
        auto facts = processes_.Lookup(c.peer.pid);
        program = facts ? facts->program : "unknown";
      }
      if (m.signo <= 0 || m.tid <= 0) return Status::Error(EINVAL, "signo/tid: must be positive");
      if (!m.time.empty() && !IsValidTraceTime(m.time, &why)) return Status::Error(EINVAL, "time: " + why);
      std::string time = m.time.empty() ? FormatTraceTime(clock_.Now()) : m.time;
      name = TraceFileName::Stackcore({m.signo, m.tid, program, time});
      break;
    }
    default:
      return Status::Error(EINVAL, "form: unknown file form " + std::to_string(m.form));
  }
  FdCharge charge;
  if (Status refused = admission_.ChargeFd(c, &charge); !refused.ok()) return refused;
  auto file = store_.OpenFile(ev->second, *name);
  if (!file.ok()) return file.status();
  const std::string* dir = store_.PathOf(ev->second);
  const DiskUsage usage = (*file)->usage();
  c.files.emplace(m.file_id, OpenFile{ev->second, m.event_id, std::move(*file), std::move(charge), usage, false});
  EncodePath({store_.fs().trace_dir(), "/", dir ? std::string_view(*dir) : std::string_view(), "/", name->str()}, body);
  return Status::Ok();
}

Status EventFiles::OnFileAppend(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::FileAppend m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  auto f = c.files.find(m.file_id);
  if (f == c.files.end()) return Status::Error(ENOENT, "file_id: " + std::to_string(m.file_id) + " is not open");
  OpenFile& of = f->second;
  if (Status refused = admission_.AdmitBytes(c, m.data.size()); !refused.ok()) return refused;
  if (Status st = store_.MakeRoom(of.seq, m.data.size()); !st.ok()) {
    return std::move(st).LoggedAs(Status::LogAs::kSummarized);
  }
  if (Status st = of.file->Append(m.data); !st.ok()) return st;
  accounting_.Account(c, of);
  proto::Encode(proto::SizeReply{of.file->size()}, body);
  return Status::Ok();
}

Status EventFiles::OnFileGetFd(Client& c, std::span<const uint8_t> payload, UniqueFd* passed,
                                              FdCharge* charge) {
  proto::IdRequest m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  if (!(c.features & ATR_FEATURE_FD_PASSING)) return Status::Error(ENOTSUP, "FILE_GET_FD: fd passing was not negotiated in HELLO");
  auto f = c.files.find(m.id);
  if (f == c.files.end()) return Status::Error(ENOENT, "file_id: " + std::to_string(m.id) + " is not open");
  // What the holder writes is only seen afterwards: a process at its byte bound gets no more.
  if (Status refused = admission_.AdmitBytes(c, 1); !refused.ok()) return refused;
  if (Status refused = admission_.ChargeFd(c, charge); !refused.ok()) return refused;
  auto dup = f->second.file->Dup();
  if (!dup.ok()) return dup.status();
  f->second.passed = true;
  *passed = std::move(*dup);
  return Status::Ok();
}

Status EventFiles::OnFileClose(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::IdRequest m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  auto f = c.files.find(m.id);
  if (f == c.files.end()) return Status::Error(ENOENT, "file_id: " + std::to_string(m.id) + " is not open");
  const uint64_t size = accounting_.CloseFile(c, f->second);
  c.files.erase(f);
  proto::Encode(proto::SizeReply{size}, body);
  return Status::Ok();
}

Status EventFiles::OnEventEnd(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::IdRequest m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  auto ev = c.events.find(m.id);
  if (ev == c.events.end()) return Status::Error(ENOENT, "event_id: " + std::to_string(m.id) + " is not open");
  const uint64_t seq = ev->second;
  for (auto f = c.files.begin(); f != c.files.end();) {  // files still open in the event end with it
    if (f->second.event_id == m.id) {
      accounting_.CloseFile(c, f->second);
      f = c.files.erase(f);
    } else {
      ++f;
    }
  }
  const uint64_t bytes = store_.AllocatedBytesOf(seq);  // not Find: it copies the path
  c.events.erase(ev);
  store_.EndEvent(seq);
  proto::Encode(proto::SizeReply{bytes}, body);
  return Status::Ok();
}

void EventFiles::EndAll(Client& c) {
  for (auto& [fid, f] : c.files) accounting_.CloseFile(c, f);
  if (!c.events.empty()) {
    log_.Info("client pid ", c.peer.pid, " disconnected with ", c.events.size(),
              " open event(s); ended them, keeping what was written");
  }
  for (auto& [eid, seq] : c.events) store_.EndEvent(seq);
  c.files.clear();
  c.events.clear();
}

}  // namespace atraced
