#include "atraced/core/trace_service.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atraced/core/signal_names.h"
#include "atraced/core/trace_time.h"
#include "atraced/proto/wire.h"

namespace atraced {
namespace {

constexpr uint64_t kSupportedFeatures = ATR_FEATURE_FD_PASSING | ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH;
constexpr size_t kMaxProcessRecords = 4096;  // beyond this, records of gone processes are pruned
// A departed connection's process is checked at its close, then after 5, 10, 20 ... 640 ms:
// about 3 s in all before a process that keeps running is taken to have only let go.
constexpr uint32_t kMaxDepartureChecks = 12;

std::chrono::milliseconds DepartureBackoff(uint32_t checks) {
  return std::chrono::milliseconds(5) * (1u << std::min<uint32_t>(checks > 0 ? checks - 1 : 0, 7));
}

// CANN's line time, "YYYY-MM-DD hh:mm:ss.mmm.uuu", from the 20-digit form.
std::string HumanTime(std::chrono::system_clock::time_point when) {
  const std::string t = FormatTraceTime(when);
  return t.substr(0, 4) + "-" + t.substr(4, 2) + "-" + t.substr(6, 2) + " " + t.substr(8, 2) + ":" + t.substr(10, 2) +
         ":" + t.substr(12, 2) + "." + t.substr(14, 3) + "." + t.substr(17, 3);
}

// Control characters of a command line as \xNN: the report is one line per fact.
std::string Printable(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char ch : text) {
    if (ch < 0x20 || ch == 0x7f || ch == '\\') {
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

int32_t Neg(int err) { return -err; }

// The lines a death report and a crash report share: who the process was.
template <typename ClientT>
std::string ProcessLines(const ClientT& c) {
  return "pid: " + std::to_string(c.peer.pid) + "\n"
         "uid: " + std::to_string(c.peer.uid) + "\n"
         "program: " + c.program + "\n"
         "command line: " + (c.cmdline.empty() ? "(not readable)" : Printable(c.cmdline)) + "\n"
         "start time: " + std::to_string(c.start_ticks) + " clock ticks after boot (/proc/<pid>/stat)\n"
         "connected: " + HumanTime(c.connected) + "\n"
         "last request: " + HumanTime(c.last_activity) + "\n";
}

std::string RingsLine(size_t count, const std::string& names) {
  return "rings: " + std::to_string(count) + (names.empty() ? "" : " (" + names + ")") +
         "; a ring with no record has no file\n";
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

TraceService::TraceService(TraceStore& store, ProcessTable& processes, Clock& clock, Logger& log, ServiceOptions options)
    : store_(store), processes_(processes), clock_(clock), log_(log), options_(std::move(options)) {}

TraceService::~TraceService() {
  // The daemon is stopping: its clients are alive, and nobody will run a check any more.
  destroying_ = true;
  schedule_departures_ = nullptr;
  for (Departure& d : departures_) Forget(d.client);
  departures_.clear();
  for (auto& [id, c] : crash_waiting_) Forget(c);
  crash_waiting_.clear();
  pending_crashes_.clear();  // a runner's late `done` finds nothing
  std::vector<ClientId> ids;
  for (auto& [id, c] : clients_) ids.push_back(id);
  for (ClientId id : ids) Disconnect(id);
}

TraceService::ProcessRecord* TraceService::RecordFor(int32_t pid, const std::optional<ProcessFacts>& facts) {
  const uint64_t start = facts ? facts->start_ticks : 0;
  auto it = process_records_.find(pid);
  if (it != process_records_.end() && it->second.start_ticks == start) return &it->second;
  if (it != process_records_.end() && it->second.connections > 0) {
    // The same pid with a new start time while the old one is connected cannot happen for a
    // live process; keep the record that is in use.
    return &it->second;
  }
  if (process_records_.size() >= kMaxProcessRecords) {
    for (auto r = process_records_.begin(); r != process_records_.end();) {
      r = (r->second.connections == 0 && !processes_.Lookup(r->first)) ? process_records_.erase(r) : std::next(r);
    }
  }
  // A process directory carries the time of the pid's first connection.
  ProcessRecord rec;
  rec.start_ticks = start;
  rec.name = {facts ? facts->pgid : pid, pid, FormatTraceTime(clock_.Now())};
  rec.program = facts ? facts->program : "";
  if (rec.name.pgid <= 0) rec.name.pgid = pid;
  auto [pos, inserted] = process_records_.insert_or_assign(pid, rec);
  (void)inserted;
  return &pos->second;
}

TraceService::ClientId TraceService::Connect(const PeerCredentials& peer) {
  auto facts = processes_.Lookup(peer.pid);
  ProcessRecord* rec = RecordFor(peer.pid, facts);
  ++rec->connections;
  Client c;
  c.peer = peer;
  c.process_dir = FormatProcessDirName(rec->name);
  c.process_name = ParseProcessDirName(c.process_dir);
  c.start_ticks = facts ? facts->start_ticks : 0;
  c.program = facts ? facts->program : "unknown";
  c.connected = clock_.Now();
  bool in_group = false;
  if (options_.forwarder_gid) {
    in_group = peer.gid == *options_.forwarder_gid ||
               (facts && std::count(facts->groups.begin(), facts->groups.end(), *options_.forwarder_gid) > 0);
  }
  c.may_forward = peer.uid == 0 || peer.uid == options_.daemon_uid || in_group;
  store_.HoldProcessDir(c.process_dir);
  ClientId id = next_client_++;
  clients_.emplace(id, std::move(c));
  log_.Debug("client ", id, " connected: pid ", peer.pid, " uid ", peer.uid, " gid ", peer.gid);
  return id;
}

void TraceService::Account(const Client& c, OpenFile& f) {
  if (f.passed) (void)f.file->Refresh();  // a failed fstat keeps the last figures
  // Growth only: the counters count what was written since start, and a file its holder
  // shrank keeps being charged for its peak until its directory is aged, which errs on the
  // side of the budget.
  const DiskUsage now = f.file->usage();
  const DiskUsage grown{now.allocated > f.accounted.allocated ? now.allocated - f.accounted.allocated : 0,
                        now.apparent > f.accounted.apparent ? now.apparent - f.accounted.apparent : 0};
  if (grown == DiskUsage{}) return;
  if (auto rec = process_records_.find(c.peer.pid); rec != process_records_.end()) rec->second.bytes += grown.allocated;
  store_.AddBytes(f.seq, grown);
  f.accounted = {std::max(now.allocated, f.accounted.allocated), std::max(now.apparent, f.accounted.apparent)};
}

void TraceService::AccountPassedFiles() {
  for (auto& [id, c] : clients_) {
    for (auto& [file_id, f] : c.files) {
      if (f.passed && f.file) Account(c, f);
    }
  }
}

uint64_t TraceService::CloseFile(const Client& c, OpenFile& f) {
  if (!f.file) return f.accounted.apparent;
  Account(c, f);
  const uint64_t length = f.file->size();
  f.file.reset();
  f.charge.Reset();
  return length;
}

void TraceService::SetReplySink(ClientId id, std::function<void(ReplyBatch&&)> sink) {
  if (auto it = clients_.find(id); it != clients_.end()) it->second.reply_sink = std::move(sink);
}

void TraceService::Disconnect(ClientId id) {
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  Client& c = it->second;
  c.reply_sink = nullptr;
  for (auto& [fid, f] : c.files) CloseFile(c, f);
  if (!c.events.empty()) {
    log_.Info("client pid ", c.peer.pid, " disconnected with ", c.events.size(),
              " open event(s); ended them, keeping what was written");
  }
  for (auto& [eid, seq] : c.events) store_.EndEvent(seq);
  c.files.clear();
  c.events.clear();
  if (auto rec = process_records_.find(c.peer.pid);
      rec != process_records_.end() && FormatProcessDirName(rec->second.name) == c.process_dir &&
      rec->second.connections > 0) {
    --rec->second.connections;
  }
  if (c.crash_pending && !destroying_) {
    // Its CRASH is being inspected: the rings stay until the report is written (FinishCrash).
    crash_waiting_.emplace(id, std::move(c));
    clients_.erase(it);
    return;
  }
  if (c.crash_recorded && !c.goodbye && !c.rings.empty()) {
    log_.Info("pid ", c.peer.pid, " closed its connection after CRASH; its stackcore dir is written, not a second one");
  } else if (!destroying_ && (c.features & ATR_FEATURE_MEMFD) && !c.goodbye && !c.rings.empty()) {
    // No GOODBYE: the process may have died. It keeps its rings and its process dir until
    // the kernel says (CheckDepartures).
    departures_.push_back({std::move(c), clock_.Now(), 0});
    clients_.erase(it);
    CheckDepartures();
    return;
  }
  Forget(c);
  clients_.erase(it);
}

void TraceService::Forget(Client& c) {
  rings_total_ -= c.rings.size();  // their mappings go with the client
  c.rings.clear();
  c.released.clear();
  store_.ReleaseProcessDir(c.process_dir);
}

bool TraceService::HoldsRings(ClientId id) const {
  auto it = clients_.find(id);
  return it != clients_.end() && !it->second.rings.empty();
}

void TraceService::ScheduleDepartures() {
  if (departures_.empty() || !schedule_departures_) return;
  uint32_t fewest = kMaxDepartureChecks;
  for (const Departure& d : departures_) fewest = std::min(fewest, d.checks);
  schedule_departures_(DepartureBackoff(fewest));
}

void TraceService::CheckDepartures() {
  for (size_t i = 0; i < departures_.size();) {
    Departure& d = departures_[i];
    const ProcessEnd end = processes_.CheckEnded(d.client.peer.pid, d.client.start_ticks);
    ++d.checks;
    if (end.gone) {
      RecordDeath(d, end);
    } else if (d.checks >= kMaxDepartureChecks) {
      log_.Info("pid ", d.client.peer.pid, " closed its connection without GOODBYE and is still running (an exec, ",
                "a closed descriptor, or a connection the daemon dropped); dropping its ", d.client.rings.size(),
                " ring(s)");
    } else {
      ++i;
      continue;
    }
    Forget(d.client);
    departures_.erase(departures_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  ScheduleDepartures();
}

void TraceService::RecordDeath(const Departure& d, const ProcessEnd& end) {
  const Client& c = d.client;
  int signo = 0;
  std::string how;
  if (end.wait_status && WIFSIGNALED(*end.wait_status)) {
    signo = WTERMSIG(*end.wait_status);
    how = "killed by signal " + SignalName(signo) + (WCOREDUMP(*end.wait_status) ? ", core dumped" : "");
  } else if (end.wait_status && *end.wait_status != 0 && WIFEXITED(*end.wait_status)) {
    how = "exited with status " + std::to_string(WEXITSTATUS(*end.wait_status)) + " without GOODBYE (_exit, or exit "
          "before the library's destructor ran)";
  } else if (end.wait_status) {
    how = "vanished without reporting a signal; its exit status reads 0 (an _exit(0), or a status the daemon may "
          "not read)";
  } else {
    how = "vanished without reporting a signal (SIGKILL, the OOM killer, _exit or a crash are possible); the "
          "daemon cannot tell which: the process was reaped before it could read its status";
  }
  // The OOM killer sends SIGKILL: asked whenever that is possible (also when the status is
  // unknown or unreadable), never for an end the status explains otherwise.
  const bool maybe_oom = signo == SIGKILL || !end.wait_status || *end.wait_status == 0;
  // Printable: a cgroup's name may hold control characters, and the report is one line per fact.
  const std::string oom =
      maybe_oom ? Printable(DescribeOomKill(c.oom_at_hello, processes_.OomKillsIn(c.oom_at_hello.file))) : "";
  std::string ring_list;
  std::vector<const HeldRing*> chosen = RingsAtDeath(c, &ring_list);
  const auto now = clock_.Now();
  std::string text = "atraced: process " + std::to_string(c.peer.pid) + " (" + c.program +
                     ") ended without GOODBYE\n"
                     "how: " + how + "\n" + (oom.empty() ? "" : "oom: " + oom + "\n") + ProcessLines(c) +
                     "connection closed: " + HumanTime(d.closed) + "\n"
                     "written: " + HumanTime(now) + "\n" +
                     RingsLine(chosen.size(), ring_list);
  HeldRing::File report{TraceFileName::Stackcore({signo, c.peer.pid, c.program, FormatTraceTime(now)}), text};
  Reply r = SaveRings(c, EventKind::kStackcore, chosen, &report);
  ++counters_.deaths_recorded;
  log_.Notice("pid ", c.peer.pid, " (", c.program, ") ended without GOODBYE: ", how, oom.empty() ? "" : "; " + oom,
              "; stackcore dir with ",
              chosen.size(), " ring(s)", r ? " failed: " + r->message : std::string(" written"));
}

std::vector<const HeldRing*> TraceService::UnreleasedRings(const Client& c) {
  std::vector<const HeldRing*> chosen;
  for (auto& [id, ring] : c.rings) {
    if (!c.released.count(id)) chosen.push_back(&ring);
  }
  return chosen;
}

std::vector<const HeldRing*> TraceService::RingsAtDeath(const Client& c, std::string* names) {
  // ids ascend: a later one of the same name is newer.
  std::map<std::string, std::pair<uint32_t, const HeldRing*>> by_name;
  for (auto& [id, ring] : c.rings) {
    const bool live = !c.released.count(id);
    auto [pos, inserted] = by_name.try_emplace(ring.name(), id, &ring);
    if (!inserted && (live || c.released.count(pos->second.first))) pos->second = {id, &ring};
  }
  std::vector<const HeldRing*> chosen;
  for (auto& [name, entry] : by_name) {
    chosen.push_back(entry.second);
    *names += (names->empty() ? "" : ", ") + name + (c.released.count(entry.first) ? " (destroyed, exitSave)" : "");
  }
  return chosen;
}

void TraceService::Handle(ClientId id, const proto::FrameHeader& h, std::span<const uint8_t> payload, ReplyBatch& out,
                          UniqueFd attached) {
  ++counters_.requests;
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  Client& c = it->second;
  std::vector<uint8_t>& body = body_scratch_;  // reused: see body_scratch_
  body.clear();
  UniqueFd passed;
  FdCharge passed_charge;
  Reply refusal;
  const bool ring_op = h.opcode >= ATR_OP_RING_REGISTER && h.opcode <= ATR_OP_GOODBYE;
  if (attached.valid() && h.opcode != ATR_OP_RING_REGISTER) {
    // A descriptor the protocol did not ask for: the stream is not what the peer thinks.
    refusal = Refusal{ATR_EBADMSG, "descriptor: only RING_REGISTER carries one; closing"};
    out.close_after = true;
  } else if (h.flags & ATR_FLAG_REPLY) {
    refusal = Refusal{ATR_EPROTO, "flags: a request must not carry the reply flag"};
  } else if (!c.hello_done && h.opcode != ATR_OP_HELLO) {
    refusal = Refusal{ATR_EPROTO, "opcode: send HELLO first"};
  } else if ((h.opcode == ATR_OP_CRASH || h.opcode == ATR_OP_DUMP) && !(c.features & ATR_FEATURE_CRASH)) {
    refusal = Refusal{ATR_ENOTSUP, std::string(proto::OpcodeName(h.opcode)) + ": ATR_FEATURE_CRASH was not negotiated in HELLO"};
  } else if (ring_op && !(c.features & ATR_FEATURE_MEMFD)) {
    refusal = Refusal{ATR_ENOTSUP, std::string(proto::OpcodeName(h.opcode)) + ": ATR_FEATURE_MEMFD was not negotiated in HELLO"};
  } else {
    switch (h.opcode) {
      case ATR_OP_HELLO: refusal = OnHello(c, payload, body, &out.close_after); break;
      case ATR_OP_EVENT_BEGIN: refusal = OnEventBegin(c, payload, body); break;
      case ATR_OP_FILE_OPEN: refusal = OnFileOpen(c, payload, body); break;
      case ATR_OP_FILE_APPEND: refusal = OnFileAppend(c, payload, body); break;
      case ATR_OP_FILE_GET_FD: refusal = OnFileGetFd(c, payload, &passed, &passed_charge); break;
      case ATR_OP_FILE_CLOSE: refusal = OnFileClose(c, payload, body); break;
      case ATR_OP_EVENT_END: refusal = OnEventEnd(c, payload, body); break;
      case ATR_OP_STATUS: refusal = OnStatus(payload, body); break;
      case ATR_OP_LIST: refusal = OnList(payload, body); break;
      case ATR_OP_VACUUM: refusal = OnVacuum(payload, body); break;
      case ATR_OP_RING_REGISTER: refusal = OnRingRegister(c, payload, std::move(attached)); break;
      case ATR_OP_RING_RELEASE: refusal = OnRingRelease(c, payload); break;
      case ATR_OP_RING_REPORT: refusal = OnRingReport(c, payload); break;
      case ATR_OP_RING_SAVE_ALL: refusal = OnRingSaveAll(c, payload); break;
      case ATR_OP_GOODBYE: refusal = OnGoodbye(c, payload); break;
      case ATR_OP_CRASH:
        if (options_.crash_runner) {
          refusal = StartCrash(id, c, h, payload);
          if (!refusal) {
            // The reply comes through the reply sink (FinishCrash).
            c.last_activity = clock_.Now();
            out.deferred = true;
            return;
          }
        } else {
          refusal = OnCrash(c, payload);
        }
        break;
      case ATR_OP_DUMP: refusal = OnDump(c, payload); break;
      default: refusal = Refusal{ATR_ENOSYS, "opcode: " + std::to_string(h.opcode) + " is not an operation of protocol 1"};
    }
  }
  if (c.features & ATR_FEATURE_MEMFD) c.last_activity = clock_.Now();  // for a death report
  std::vector<uint8_t>& reply = reply_scratch_;  // reused: see reply_scratch_
  reply.clear();
  if (refusal) {
    ++counters_.requests_refused;
    // Descriptor refusals come in floods from one uid: one line per interval for each.
    uint64_t suppressed = 0;
    if (refusal->logged_elsewhere) {
      // Counted, and summed up in lines of their own (the store's, and Tick's).
    } else if (!refusal->fd_budget || options_.fd_budget->ShouldLogRefusal(c.peer.uid, &suppressed)) {
      log_.Log(refusal->fd_budget ? LogLevel::kWarning : LogLevel::kNotice, "refused ", proto::OpcodeName(h.opcode),
               " from pid ", c.peer.pid, " uid ", c.peer.uid, ": ", proto::StatusName(refusal->status), " ",
               refusal->message,
               refusal->fd_budget ? " (" + std::to_string(suppressed) + " more for this uid since its last line)" : "");
    }
    proto::EncodeReplyError(refusal->status, refusal->message, reply);
  } else {
    proto::EncodeReplyOk(reply);
    reply.insert(reply.end(), body.begin(), body.end());
  }
  if (passed.valid()) out.fds.push_back({out.bytes.size(), std::move(passed), std::move(passed_charge)});
  proto::AppendFrame(out.bytes, h.opcode, ATR_FLAG_REPLY, h.request_id, reply);
  if (body.capacity() > kMaxKeptScratch) std::vector<uint8_t>().swap(body);
  if (reply.capacity() > kMaxKeptScratch) std::vector<uint8_t>().swap(reply);
}

TraceService::Reply TraceService::OnHello(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body,
                                          bool* close_after) {
  proto::Hello m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  if (c.hello_done) return Refusal{ATR_EPROTO, "HELLO: already done on this connection"};
  if (m.major != ATR_VERSION_MAJOR) {
    *close_after = true;
    return Refusal{ATR_EPROTONOSUPPORT, "version: major " + std::to_string(m.major) + " is not supported; this daemon speaks " +
                                            std::to_string(ATR_VERSION_MAJOR) + "." + std::to_string(ATR_VERSION_MINOR)};
  }
  c.hello_done = true;
  c.features = m.features & kSupportedFeatures;
  if (!(c.features & ATR_FEATURE_MEMFD)) c.features &= ~ATR_FEATURE_CRASH;  // a crash saves rings
  proto::HelloReply r;
  r.major = ATR_VERSION_MAJOR;
  r.minor = static_cast<uint16_t>(std::min<unsigned>(m.minor, ATR_VERSION_MINOR));
  if (c.features & ATR_FEATURE_MEMFD) {
    r.daemon_pid = static_cast<uint32_t>(::getpid());  // for PR_SET_PTRACER
    if (auto cmdline = processes_.CommandLine(c.peer.pid)) c.cmdline = std::move(*cmdline);  // for a death report
    c.oom_at_hello = processes_.OomKills(c.peer.pid);  // compared at a death without GOODBYE
  }
  r.max_payload = ATR_MAX_PAYLOAD;
  r.features = c.features;
  r.peer_pid = static_cast<uint32_t>(c.peer.pid);
  r.peer_uid = c.peer.uid;
  proto::Encode(r, body);
  return std::nullopt;
}

TraceService::Reply TraceService::OnEventBegin(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::EventBegin m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  if (c.events.count(m.event_id)) return Refusal{ATR_EEXIST, "event_id: " + std::to_string(m.event_id) + " is already open"};
  if (c.events.size() >= options_.max_events_per_client) {
    return Refusal{ATR_EBUSY, "events: this connection already has " + std::to_string(c.events.size()) +
                                  " open events, the limit"};
  }
  const Side side = m.side == ATR_SIDE_DEVICE ? Side::kDevice : Side::kHost;
  if (side == Side::kHost && m.device_id != 0) return Refusal{ATR_EINVAL, "device_id: must be 0 for a host event"};
  if (side == Side::kHost && !m.time.empty()) return Refusal{ATR_EINVAL, "time: only device events carry their own time"};
  std::string why;
  if (!m.time.empty() && !IsValidTraceTime(m.time, &why)) return Refusal{ATR_EINVAL, "time: " + why};

  int32_t pid = c.peer.pid;
  const ProcessDirName* process = c.process_name ? &*c.process_name : nullptr;
  if (m.host_pid != 0 && m.host_pid != c.peer.pid) {
    if (!c.may_forward) {
      log_.Warning("forwarder claim refused: pid ", c.peer.pid, " uid ", c.peer.uid, " may not write for host pid ",
                   m.host_pid, " (not root, not the daemon's uid, not in the forwarder group)");
      return Refusal{ATR_EPERM, "host_pid: only root, the daemon's uid or the forwarder group may write for another process"};
    }
    if (side != Side::kDevice) return Refusal{ATR_EINVAL, "host_pid: only device events may be written for another process"};
    if (m.host_pid < 0) return Refusal{ATR_EINVAL, "host_pid: must be positive"};
    auto facts = processes_.Lookup(m.host_pid);
    auto known = process_records_.find(m.host_pid);
    if (!facts && (known == process_records_.end() || known->second.connections == 0)) {
      return Refusal{ATR_ESRCH, "host_pid: no process " + std::to_string(m.host_pid)};
    }
    ProcessRecord* rec = RecordFor(m.host_pid, facts);
    process = &rec->name;
    pid = m.host_pid;
    ++counters_.forwarder_claims;
    log_.Notice("forwarder pid ", c.peer.pid, " uid ", c.peer.uid, " writes a device event for host pid ", pid);
  }
  if (!process) return Refusal{ATR_EINVAL, "process: malformed process directory " + c.process_dir};
  EventSpec spec{*process, static_cast<EventKind>(m.kind), pid, m.time, side, m.device_id, c.peer.uid};
  if (auto refused = AdmitEvent(c, spec.kind)) return refused;
  auto r = store_.BeginEvent(spec);
  if (!r.ok()) return Refusal{Neg(r.status().err()), r.status().message(), false, r.status().err() == ENOSPC};
  c.events.emplace(m.event_id, r->seq);
  EncodePath({store_.fs().trace_dir(), "/", r->rel_path}, body);
  return std::nullopt;
}

void TraceService::EncodePath(std::initializer_list<std::string_view> parts, std::vector<uint8_t>& body) {
  // Two replies per event carry a path: built in a buffer kept between requests rather than
  // by string concatenation (a few allocations each).
  std::string& path = path_reply_.path;
  path.clear();
  for (std::string_view part : parts) path.append(part);
  proto::Encode(path_reply_, body);
}

TraceService::Reply TraceService::OnFileOpen(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::FileOpen m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  auto ev = c.events.find(m.event_id);
  if (ev == c.events.end()) return Refusal{ATR_ENOENT, "event_id: " + std::to_string(m.event_id) + " is not open"};
  if (c.files.count(m.file_id)) return Refusal{ATR_EEXIST, "file_id: " + std::to_string(m.file_id) + " is already open"};
  if (c.files.size() >= options_.max_files_per_client) {
    return Refusal{ATR_EBUSY, "files: this connection already has " + std::to_string(c.files.size()) + " open files, the limit"};
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
      if (m.signo <= 0 || m.tid <= 0) return Refusal{ATR_EINVAL, "signo/tid: must be positive"};
      if (!m.time.empty() && !IsValidTraceTime(m.time, &why)) return Refusal{ATR_EINVAL, "time: " + why};
      std::string time = m.time.empty() ? FormatTraceTime(clock_.Now()) : m.time;
      name = TraceFileName::Stackcore({m.signo, m.tid, program, time});
      break;
    }
    default:
      return Refusal{ATR_EINVAL, "form: unknown file form " + std::to_string(m.form)};
  }
  FdCharge charge;
  if (auto refused = ChargeFd(c, &charge)) return refused;
  auto file = store_.OpenFile(ev->second, *name);
  if (!file.ok()) return Refusal{Neg(file.status().err()), file.status().message()};
  const std::string* dir = store_.PathOf(ev->second);
  const DiskUsage usage = (*file)->usage();
  c.files.emplace(m.file_id, OpenFile{ev->second, m.event_id, std::move(*file), std::move(charge), usage, false});
  EncodePath({store_.fs().trace_dir(), "/", dir ? std::string_view(*dir) : std::string_view(), "/", name->str()}, body);
  return std::nullopt;
}

TraceService::Reply TraceService::OnFileAppend(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::FileAppend m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  auto f = c.files.find(m.file_id);
  if (f == c.files.end()) return Refusal{ATR_ENOENT, "file_id: " + std::to_string(m.file_id) + " is not open"};
  OpenFile& of = f->second;
  if (auto refused = AdmitBytes(c, m.data.size())) return refused;
  if (Status st = store_.MakeRoom(of.seq, m.data.size()); !st.ok()) {
    return Refusal{Neg(st.err()), st.message(), false, true};
  }
  if (Status st = of.file->Append(m.data); !st.ok()) return Refusal{Neg(st.err()), st.message()};
  Account(c, of);
  proto::Encode(proto::SizeReply{of.file->size()}, body);
  return std::nullopt;
}

TraceService::Reply TraceService::ChargeFd(const Client& c, FdCharge* charge) {
  FdBudget::Verdict verdict;
  *charge = FdCharge::Take(options_.fd_budget, c.peer.uid, &verdict);
  if (verdict == FdBudget::Verdict::kOk) return std::nullopt;
  // Refused requests are logged by Handle; the reason names the uid and the bound.
  return Refusal{verdict == FdBudget::Verdict::kUidShare ? ATR_EBUSY : ATR_EMFILE,
                 "descriptors: " + options_.fd_budget->Describe(verdict, c.peer.uid), true};
}

TraceService::Reply TraceService::OnFileGetFd(Client& c, std::span<const uint8_t> payload, UniqueFd* passed,
                                              FdCharge* charge) {
  proto::IdRequest m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  if (!(c.features & ATR_FEATURE_FD_PASSING)) return Refusal{ATR_ENOTSUP, "FILE_GET_FD: fd passing was not negotiated in HELLO"};
  auto f = c.files.find(m.id);
  if (f == c.files.end()) return Refusal{ATR_ENOENT, "file_id: " + std::to_string(m.id) + " is not open"};
  // What the holder writes is only seen afterwards: a process at its byte bound gets no more.
  if (auto refused = AdmitBytes(c, 1)) return refused;
  if (auto refused = ChargeFd(c, charge)) return refused;
  auto dup = f->second.file->Dup();
  if (!dup.ok()) return Refusal{Neg(dup.status().err()), dup.status().message()};
  f->second.passed = true;
  *passed = std::move(*dup);
  return std::nullopt;
}

TraceService::Reply TraceService::OnFileClose(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::IdRequest m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  auto f = c.files.find(m.id);
  if (f == c.files.end()) return Refusal{ATR_ENOENT, "file_id: " + std::to_string(m.id) + " is not open"};
  const uint64_t size = CloseFile(c, f->second);
  c.files.erase(f);
  proto::Encode(proto::SizeReply{size}, body);
  return std::nullopt;
}

TraceService::Reply TraceService::OnEventEnd(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::IdRequest m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  auto ev = c.events.find(m.id);
  if (ev == c.events.end()) return Refusal{ATR_ENOENT, "event_id: " + std::to_string(m.id) + " is not open"};
  const uint64_t seq = ev->second;
  for (auto f = c.files.begin(); f != c.files.end();) {  // files still open in the event end with it
    if (f->second.event_id == m.id) {
      CloseFile(c, f->second);
      f = c.files.erase(f);
    } else {
      ++f;
    }
  }
  const uint64_t bytes = store_.AllocatedBytesOf(seq);  // not Find: it copies the path
  c.events.erase(ev);
  store_.EndEvent(seq);
  proto::Encode(proto::SizeReply{bytes}, body);
  return std::nullopt;
}

TraceService::Reply TraceService::OnStatus(std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::StatusRequest m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  AccountPassedFiles();
  const StoreCounters& sc = store_.counters();
  proto::StatusReply r;
  r.record_num = store_.record_num();
  r.host_dirs = static_cast<uint32_t>(store_.count(AgeClass::kHost));
  r.device_dirs = static_cast<uint32_t>(store_.count(AgeClass::kDevice));
  r.exit_dirs = static_cast<uint32_t>(store_.count(AgeClass::kExit));
  r.clients = static_cast<uint32_t>(clients_.size());
  r.events_begun = sc.events_created;
  r.dirs_aged = sc.dirs_aged;
  r.bytes_written = sc.bytes_written;
  r.bytes_apparent = sc.bytes_apparent;
  r.removal_failures = sc.removal_failures;
  r.requests_refused = counters_.requests_refused;
  r.root = options_.root;
  auto& t = r.retention;
  t.present = true;
  t.max_use = store_.byte_limits().max_use;
  t.keep_free = store_.byte_limits().keep_free;
  t.fs_free = store_.free_bytes();
  t.used_host = store_.used_bytes(AgeClass::kHost);
  t.used_device = store_.used_bytes(AgeClass::kDevice);
  t.used_exit = store_.used_bytes(AgeClass::kExit);
  t.bytes_freed = sc.bytes_freed;
  auto aged = [&sc](AgingReason why) { return sc.dirs_aged_by[static_cast<size_t>(why)]; };
  t.aged_count = aged(AgingReason::kCount);
  t.aged_max_use = aged(AgingReason::kMaxUse);
  t.aged_keep_free = aged(AgingReason::kKeepFree);
  t.aged_max_age = aged(AgingReason::kAge);
  t.aged_vacuum = aged(AgingReason::kVacuum);
  t.refused_max_use = sc.refused_by_limit[static_cast<size_t>(ByteLimit::kMaxUse)];
  t.refused_keep_free = sc.refused_by_limit[static_cast<size_t>(ByteLimit::kKeepFree)];
  t.refused_rate_limit = counters_.refused_rate_limit;
  t.refused_client_bytes = counters_.refused_client_bytes;
  t.exit_record_num = store_.exit_record_num();
  t.aging_policy = static_cast<uint32_t>(store_.retention().policy);
  t.max_age_s = static_cast<uint64_t>(store_.retention().max_age.count());
  proto::Encode(r, body);
  return std::nullopt;
}

TraceService::Reply TraceService::OnList(std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::ListRequest m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  AccountPassedFiles();
  proto::ListReply r;
  for (const EventInfo& e : store_.List(m.after_seq, m.max_entries)) {
    proto::ListEntry le;
    le.seq = e.seq;
    le.kind = static_cast<uint8_t>(e.kind);
    le.side = static_cast<uint8_t>(e.side);
    le.device_id = e.device_id;
    le.pid = e.pid;
    le.uid = e.uid;
    le.bytes = e.bytes;
    le.apparent_bytes = e.apparent_bytes;
    le.created_unix_us = static_cast<uint64_t>(std::max<int64_t>(0, e.created_us));
    le.path = e.rel_path;
    r.entries.push_back(std::move(le));
  }
  proto::Encode(r, body);
  return std::nullopt;
}

TraceService::Reply TraceService::OnVacuum(std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::VacuumRequest m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  AgingReport report = store_.Vacuum(m.dry_run);
  proto::VacuumReply r;
  for (auto& path : report.removed) {
    if (r.paths.size() < ATR_MAX_VACUUM_PATHS) {
      r.paths.push_back(std::move(path));
    } else {
      ++r.omitted;  // a reply must fit in one frame
    }
  }
  proto::Encode(r, body);
  return std::nullopt;
}

// ---- 1.1: rings in sealed memfds -------------------------------------------------------

TraceService::Reply TraceService::OnRingRegister(Client& c, std::span<const uint8_t> payload, UniqueFd memfd) {
  proto::RingRegister m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  auto refuse = [this, &c, &m](int32_t status, std::string why) {
    ++counters_.rings_refused;
    log_.Notice("ring ", m.name, " of pid ", c.peer.pid, " refused: ", why);
    return Refusal{status, std::move(why)};
  };
  if (c.rings.count(m.object_id)) return refuse(ATR_EEXIST, "object_id: " + std::to_string(m.object_id) + " is already registered");
  if (c.rings.size() >= options_.max_rings_per_client) {
    return refuse(ATR_EBUSY, "rings: this connection already holds " + std::to_string(c.rings.size()) + " rings, the limit");
  }
  if (rings_total_ >= options_.max_rings_total) {
    return refuse(ATR_EBUSY, "rings: the daemon holds " + std::to_string(rings_total_) + " rings, its limit");
  }
  auto ring = HeldRing::Map(std::move(memfd), m);
  if (!ring.ok()) return refuse(Neg(ring.status().err()), ring.status().message());
  c.rings.emplace(m.object_id, std::move(*ring));
  ++rings_total_;
  return std::nullopt;
}

void TraceService::DropRing(Client& c, std::map<uint32_t, HeldRing>::iterator it) {
  c.released.erase(it->first);
  c.rings.erase(it);
  --rings_total_;
}

TraceService::Reply TraceService::OnRingRelease(Client& c, std::span<const uint8_t> payload) {
  proto::IdRequest m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  auto it = c.rings.find(m.id);
  if (it == c.rings.end() || c.released.count(m.id)) {
    return Refusal{ATR_ENOENT, "object_id: " + std::to_string(m.id) + " is not registered"};
  }
  if (it->second.exit_save()) {
    c.released.insert(m.id);  // CANN saves destroyed exitSave objects at exit too
  } else {
    DropRing(c, it);
  }
  return std::nullopt;
}

TraceService::Reply TraceService::OnRingReport(Client& c, std::span<const uint8_t> payload) {
  proto::RingReport m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  std::vector<const HeldRing*> chosen;
  for (uint32_t id : m.object_ids) {
    auto it = c.rings.find(id);
    if (it == c.rings.end() || c.released.count(id)) {
      return Refusal{ATR_ENOENT, "object_id: " + std::to_string(id) + " is not registered"};
    }
    chosen.push_back(&it->second);
  }
  // Written before the reply either way: `wait` only tells the client whether to wait.
  if (auto refused = AdmitEvent(c, EventKind::kSchedule)) return refused;
  return SaveRings(c, EventKind::kSchedule, chosen);
}

TraceService::Reply TraceService::OnRingSaveAll(Client& c, std::span<const uint8_t> payload) {
  proto::RingSaveAll m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  const std::vector<const HeldRing*> chosen = UnreleasedRings(c);
  if (auto refused = AdmitEvent(c, EventKind::kSchedule)) return refused;
  return SaveRings(c, EventKind::kSchedule, chosen);
}

TraceService::Reply TraceService::OnGoodbye(Client& c, std::span<const uint8_t> payload) {
  proto::Goodbye m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  if (c.goodbye) return Refusal{ATR_EPROTO, "GOODBYE: already said on this connection"};
  c.goodbye = true;
  // exitSave objects, live or destroyed; of several with one name, the newest.
  std::map<std::string, const HeldRing*> by_name;
  for (auto& [id, ring] : c.rings) {
    if (ring.exit_save()) by_name[ring.name()] = &ring;  // ids ascend: the newest wins
  }
  std::vector<const HeldRing*> chosen;
  for (auto& [name, ring] : by_name) chosen.push_back(ring);
  Reply result = AdmitEvent(c, EventKind::kExit);
  if (!result) result = SaveRings(c, EventKind::kExit, chosen);
  // The process is leaving: its rings are of no further use.
  rings_total_ -= c.rings.size();
  c.rings.clear();
  c.released.clear();
  return result;
}

TraceService::Client* TraceService::RingHolderOf(Client& c) {
  if (!c.rings.empty() && !c.goodbye) return &c;
  for (auto& [id, other] : clients_) {
    if (other.peer.pid == c.peer.pid && other.start_ticks == c.start_ticks && !other.rings.empty() && !other.goodbye) {
      return &other;
    }
  }
  return nullptr;
}

bool TraceService::TakeUnwind(uint32_t uid) {
  const auto now = clock_.Now();
  for (auto it = unwinds_by_uid_.begin(); it != unwinds_by_uid_.end();) {  // forget what is a minute old
    auto& times = it->second;
    times.erase(std::remove_if(times.begin(), times.end(), [&](auto t) { return now - t >= std::chrono::minutes(1); }),
                times.end());
    it = times.empty() ? unwinds_by_uid_.erase(it) : std::next(it);
  }
  auto& times = unwinds_by_uid_[uid];
  if (times.size() >= options_.crash_unwinds_per_uid_per_minute) return false;
  times.push_back(now);
  return true;
}

TraceService::Reply TraceService::CheckCrash(Client& c, std::span<const uint8_t> payload, proto::Crash* m,
                                             Client** holder) {
  if (auto e = proto::Decode(payload, m)) return Refusal{e->status, e->message};
  *holder = RingHolderOf(c);
  if (!*holder) {
    return Refusal{ATR_ENOENT, "CRASH: no connection of pid " + std::to_string(c.peer.pid) +
                                   " holds a ring (register one first): there is nothing to save"};
  }
  if ((*holder)->crash_recorded) {
    return Refusal{ATR_EEXIST, "CRASH: the crash of pid " + std::to_string(c.peer.pid) + " is already recorded"};
  }
  (*holder)->crash_recorded = c.crash_recorded = true;
  return std::nullopt;
}

CrashFacts TraceService::NoUnwindFacts(CrashFacts facts, uint32_t uid) const {
  facts.backtrace = "(none: uid " + std::to_string(uid) + " already had " +
                    std::to_string(options_.crash_unwinds_per_uid_per_minute) +
                    " crashes unwound in the last minute)\n";
  return facts;
}

TraceService::Reply TraceService::OnCrash(Client& c, std::span<const uint8_t> payload) {
  proto::Crash m;
  Client* holder = nullptr;
  if (Reply refused = CheckCrash(c, payload, &m, &holder)) return refused;
  // The process waits in its handler while this runs: a bounded look from outside, here on
  // the event loop (no runner: tests and fuzzers).
  CrashFacts facts;
  const auto looked = clock_.Now();
  if (options_.crash_inspector) {
    const bool unwind = TakeUnwind(c.peer.uid);
    facts = options_.crash_inspector->Inspect({c.peer.pid, m.tid, c.peer.uid, c.peer.gid}, unwind ? options_.crash_budget : std::chrono::milliseconds(0));
    if (!unwind) facts = NoUnwindFacts(std::move(facts), c.peer.uid);
  } else {
    facts = {"(not listed: this daemon has no crash inspector)\n", "(none: this daemon has no unwinder)\n",
             "(not read: this daemon has no crash inspector)\n"};
  }
  return WriteCrashReport(c.peer.pid, *holder, m, facts, looked);
}

TraceService::Reply TraceService::StartCrash(ClientId id, Client& c, const proto::FrameHeader& h,
                                             std::span<const uint8_t> payload) {
  proto::Crash m;
  Client* holder = nullptr;
  if (Reply refused = CheckCrash(c, payload, &m, &holder)) return refused;
  ClientId holder_id = id;
  for (auto& [other, client] : clients_) {
    if (&client == holder) holder_id = other;
  }
  holder->crash_pending = true;
  const uint64_t token = next_crash_token_++;
  pending_crashes_[token] = PendingCrash{id, holder_id, c.peer.pid, h.opcode, h.request_id, m, clock_.Now()};
  // The process waits in its handler while the runner looks at it from outside; every other
  // client is served meanwhile. The reply, and this connection's next request, wait.
  CrashInspector* inspector = options_.crash_inspector;
  const bool unwind = inspector != nullptr && TakeUnwind(c.peer.uid);
  const CrashTarget target{c.peer.pid, m.tid, c.peer.uid, c.peer.gid};
  const uint32_t uid = c.peer.uid;
  const auto budget = unwind ? options_.crash_budget : std::chrono::milliseconds(0);
  options_.crash_runner->Run(
      [inspector, target, budget]() -> CrashFacts {
        if (!inspector) {
          return {"(not listed: this daemon has no crash inspector)\n", "(none: this daemon has no unwinder)\n",
                  "(not read: this daemon has no crash inspector)\n"};
        }
        return inspector->Inspect(target, budget);
      },
      [this, token, unwind, uid, inspector](CrashFacts facts) {
        if (inspector && !unwind) facts = NoUnwindFacts(std::move(facts), uid);
        FinishCrash(token, std::move(facts));
      });
  return std::nullopt;
}

void TraceService::FinishCrash(uint64_t token, CrashFacts facts) {
  auto p = pending_crashes_.find(token);
  if (p == pending_crashes_.end()) return;
  const PendingCrash crash = p->second;
  pending_crashes_.erase(p);
  // The holder may have closed its connection meanwhile: it waited in crash_waiting_.
  Client* holder = nullptr;
  auto live = clients_.find(crash.holder);
  auto waiting = crash_waiting_.find(crash.holder);
  if (live != clients_.end()) {
    holder = &live->second;
  } else if (waiting != crash_waiting_.end()) {
    holder = &waiting->second;
  }
  Reply r = holder ? WriteCrashReport(crash.pid, *holder, crash.m, facts, crash.looked)
                   : Reply{Refusal{ATR_ENOENT, "CRASH: the rings of pid " + std::to_string(crash.pid) + " are gone"}};
  if (holder) holder->crash_pending = false;
  if (waiting != crash_waiting_.end()) {
    log_.Info("pid ", crash.pid, " closed its connection after CRASH; its stackcore dir is written, not a second one");
    Forget(waiting->second);
    crash_waiting_.erase(waiting);
  }
  // The reply, if the CRASH connection is still there to read it.
  auto channel = clients_.find(crash.channel);
  if (channel == clients_.end() || !channel->second.reply_sink) return;
  std::vector<uint8_t> reply;
  if (r) {
    ++counters_.requests_refused;
    proto::EncodeReplyError(r->status, r->message, reply);
  } else {
    proto::EncodeReplyOk(reply);
  }
  ReplyBatch batch;
  proto::AppendFrame(batch.bytes, crash.opcode, ATR_FLAG_REPLY, crash.request_id, reply);
  channel->second.reply_sink(std::move(batch));
}

TraceService::Reply TraceService::WriteCrashReport(int32_t pid, const Client& holder, const proto::Crash& m,
                                                   const CrashFacts& facts,
                                                   std::chrono::system_clock::time_point looked) {
  std::string ring_list;
  std::vector<const HeldRing*> chosen = RingsAtDeath(holder, &ring_list);
  const auto now = clock_.Now();
  const auto inspect_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - looked).count();
  const std::string text =
      "atraced: process " + std::to_string(pid) + " (" + holder.program + ") caught a fatal signal\n"
      "signal: " + SignalName(m.signo) + "\n"
      "code: " + SignalCodeName(m.signo, m.code) + "\n"
      "fault address: " + Hex(m.fault_addr) + "\n"
      "thread: " + std::to_string(m.tid) + "\n" + ProcessLines(holder) +
      "written: " + HumanTime(now) + "\n" +
      RingsLine(chosen.size(), ring_list) +
      "\nbacktrace of thread " + std::to_string(m.tid) + ", unwound by atraced from outside the process:\n" +
      facts.backtrace + "\nthreads:\n" + facts.threads + "\nmaps:\n" + facts.maps;
  HeldRing::File report{TraceFileName::Stackcore({m.signo, m.tid, holder.program, FormatTraceTime(now)}), text};
  Reply r = SaveRings(holder, EventKind::kStackcore, chosen, &report);
  ++counters_.crashes_recorded;
  log_.Notice("pid ", pid, " (", holder.program, ") caught signal ", SignalName(m.signo), " in thread ", m.tid,
              "; inspected in ", inspect_ms, " ms; stackcore dir with ", chosen.size(), " ring(s)",
              r ? " failed: " + r->message : std::string(" written"));
  return r;
}

TraceService::Reply TraceService::OnDump(Client& c, std::span<const uint8_t> payload) {
  proto::Dump m;
  if (auto e = proto::Decode(payload, &m)) return Refusal{e->status, e->message};
  // Sent on the crash connection, which holds no ring: the rings are another connection's.
  Client* holder = RingHolderOf(c);
  const std::vector<const HeldRing*> chosen = holder ? UnreleasedRings(*holder) : std::vector<const HeldRing*>{};
  if (chosen.empty()) {
    return Refusal{ATR_ENOENT, "DUMP: no connection of pid " + std::to_string(c.peer.pid) +
                                   " holds an unreleased ring: there is nothing to save"};
  }
  if (auto refused = AdmitEvent(*holder, EventKind::kSchedule)) return refused;
  Reply r = SaveRings(*holder, EventKind::kSchedule, chosen);
  // Logged: a signal from outside the process asked for it, not the application.
  log_.Info("pid ", c.peer.pid, " (", holder->program, ") caught dump signal ", SignalName(m.signo), " in thread ", m.tid,
            "; schedule dir with ", chosen.size(), " ring(s)", r ? " failed: " + r->message : std::string(" written"));
  return r;
}

TraceService::Reply TraceService::SaveRings(const Client& c, EventKind kind, const std::vector<const HeldRing*>& rings,
                                            const HeldRing::File* report) {
  // Format first: an event directory is made only when some ring holds a record.
  std::vector<HeldRing::File> files;
  for (const HeldRing* ring : rings) {
    std::vector<std::string> problems;
    auto file = ring->Save(&problems);
    for (const auto& p : problems) log_.Warning("ring ", ring->name(), " of pid ", c.peer.pid, ": ", p);
    if (file) files.push_back(std::move(*file));
  }
  if (files.empty() && !report) return std::nullopt;
  if (report) files.insert(files.begin(), *report);
  std::optional<ProcessDirName> process = ParseProcessDirName(c.process_dir);
  if (!process) return Refusal{ATR_EINVAL, "process: malformed process directory " + c.process_dir};
  uint64_t total = 0;
  for (const HeldRing::File& f : files) total += f.bytes.size();
  // Room for all of it first: a stackcore dir with half its rings would mislead.
  if (Status st = store_.MakeRoom(0, total); !st.ok()) return Refusal{Neg(st.err()), st.message(), false, true};
  auto begun = store_.BeginEvent({*process, kind, c.peer.pid, "", Side::kHost, 0, c.peer.uid});
  if (!begun.ok()) return Refusal{Neg(begun.status().err()), begun.status().message()};
  Reply result;
  for (HeldRing::File& f : files) {
    auto out = store_.OpenFile(begun->seq, f.name);
    Status st = out.ok() ? (*out)->Append({reinterpret_cast<const uint8_t*>(f.bytes.data()), f.bytes.size()})
                         : out.status();
    if (!st.ok()) {
      if (!result) result = Refusal{Neg(st.err()), st.message()};  // the first failure; the others still try
      continue;
    }
    store_.AddBytes(begun->seq, f.bytes.size());
    if (&f != &files.front() || !report) ++counters_.rings_saved;
  }
  store_.EndEvent(begun->seq);
  return result;
}

TraceService::Reply TraceService::AdmitEvent(const Client& c, EventKind kind) {
  if (!options_.rate_limit.enabled()) return std::nullopt;
  auto rec = process_records_.find(c.peer.pid);
  if (rec == process_records_.end()) return std::nullopt;
  ProcessRecord& r = rec->second;
  const bool final = kind != EventKind::kSchedule;
  const auto now = clock_.Now();
  if ((final ? r.final_bucket : r.schedule_bucket).Take(options_.rate_limit, now)) return std::nullopt;
  if (r.suppressed++ == 0) r.suppressed_since = now;
  if (r.program.empty()) r.program = c.program;
  ++counters_.refused_rate_limit;
  const auto& limit = options_.rate_limit;
  return Refusal{ATR_EAGAIN,
                 std::string("rate limit: this process created its ") + (final ? "exit and stackcore" : "schedule") +
                     " events faster than rate-limit-burst " + std::to_string(limit.burst) + " per rate-limit-interval " +
                     std::to_string(limit.interval.count()) + " ms; retry later",
                 false, true};
}

TraceService::Reply TraceService::AdmitBytes(const Client& c, uint64_t incoming) {
  const uint64_t max = options_.max_bytes_per_client;
  if (max == 0) return std::nullopt;
  auto rec = process_records_.find(c.peer.pid);
  const uint64_t written = rec == process_records_.end() ? 0 : rec->second.bytes;
  if (written + incoming <= max && written + incoming >= written) return std::nullopt;
  ++counters_.refused_client_bytes;
  return Refusal{ATR_EBUSY, "bytes: this process wrote " + std::to_string(written) + " bytes; " +
                                std::to_string(incoming) + " more would pass max-bytes-per-client " + std::to_string(max)};
}

void TraceService::SetClientLimits(const RateLimit& rate_limit, uint64_t max_bytes_per_client) {
  options_.rate_limit = rate_limit;
  options_.max_bytes_per_client = max_bytes_per_client;
}

void TraceService::Tick() {
  const auto now = clock_.Now();
  const auto& limit = options_.rate_limit;
  for (auto& [pid, r] : process_records_) {
    if (r.suppressed == 0 || now - r.suppressed_since < limit.interval) continue;
    log_.Warning("suppressed ", r.suppressed, " events from pid ", pid, " (", r.program.empty() ? "unknown" : r.program,
                 ") in the last ",
                 std::chrono::duration_cast<std::chrono::seconds>(now - r.suppressed_since).count(),
                 " s: rate-limit-burst ", limit.burst, " per rate-limit-interval ",
                 std::chrono::duration_cast<std::chrono::seconds>(limit.interval).count(), " s");
    r.suppressed = 0;
  }
}

std::string TraceService::StatusLine() const {
  return "host " + std::to_string(store_.count(AgeClass::kHost)) + "/" + std::to_string(store_.record_num()) +
         ", device " + std::to_string(store_.count(AgeClass::kDevice)) + "/" + std::to_string(store_.record_num()) +
         ", exit " + std::to_string(store_.count(AgeClass::kExit)) + ", clients " + std::to_string(clients_.size());
}

}  // namespace atraced
