// The dispatcher: the client table, what every request must satisfy, and the reply. Each
// opcode's work is in the handler of its concern.
#include "atraced/service/trace_service.h"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "admission.h"
#include "atraced/proto/wire.h"
#include "client.h"
#include "client_table.h"
#include "crashes.h"
#include "deaths.h"
#include "device_reports.h"
#include "event_files.h"
#include "file_accounting.h"
#include "hang_watch.h"
#include "live_processes.h"
#include "inspection.h"
#include "opcode_rules.h"
#include "atraced/base/cycle_counter.h"
#include "process_dumps.h"
#include "process_names.h"
#include "process_records.h"
#include "queries.h"
#include "reply_route.h"
#include "ring_saver.h"
#include "rings.h"
#include "service_context.h"

namespace atraced {
namespace {

// Scratch larger than this (a big LIST or STATUS reply) is released after the request, so
// one rare reply does not keep its memory for the daemon's lifetime.
constexpr size_t kMaxKeptScratch = 64 * 1024;

// The parts no handler can do without: a service built without one is a programming error.
TraceService::Dependencies Checked(TraceService::Dependencies deps) {
  if (!deps.store || !deps.processes || !deps.clock || !deps.log || !deps.crash_runner || !deps.io_runner) {
    throw std::invalid_argument("TraceService: the store, the process table, the clock, the log and both runners are required");
  }
  return deps;
}

}  // namespace

// Everything the service holds, wired once: each handler gets references to the parts it
// needs and nothing else. Declared in the order they depend on each other.
struct TraceService::Rooms {
  Rooms(Dependencies the_deps, ServiceLimits the_limits)
      : deps(std::move(the_deps)), limits(std::move(the_limits)),
        store(*deps.store), processes(*deps.processes), clock(*deps.clock), log(*deps.log),
        ring_slots("rings", "ring", "uid-ring-share", limits.max_rings_total, limits.uid_ring_share),
        ring_memory("ring memory", "byte", "uid-ring-share", limits.max_ring_memory, limits.uid_ring_share),
        queued_saves("queued save bytes", "byte", "uid-queued-share", limits.max_queued_bytes, limits.uid_queued_share),
        records(processes, clock, log),
        admission(ctx, records),
        accounting(store, records),
        saver(ctx, admission, queued_saves),
        devices(records, counters),
        events(ctx, records, admission, accounting, devices),
        rings(ctx, clients, records, ring_slots, ring_memory, saver, admission),
        queries(ctx, clients, accounting, ring_slots, ring_memory, queued_saves),
        departures(ctx, saver, [this](Client& c) { Forget(c); }),
        crashes(ctx, clients, records, saver, admission, inspection, [this](Client& c) { Forget(c); }),
        dumps(ctx, clients, saver, admission, inspection), hang(ctx, clients, dumps) {}

  // Releases what a client still holds once it is gone for good.
  void Forget(Client& c) {
    rings.ReleaseAll(c);
    store.ReleaseProcessDir(c.process_dir);
  }

  Status OnHello(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body, bool* close_after);
  // The opcode's handler: the reply now, or nullopt when it comes later (a save on the I/O
  // workers, a CRASH inspected on the crash runner's thread).
  std::optional<Status> Dispatch(ClientId id, Client& c, const proto::FrameHeader& h, std::span<const uint8_t> payload,
                                 UniqueFd attached, ReplyBatch& out, UniqueFd* passed, FdCharge* passed_charge);
  // A handler whose reply may wait gets a DeferredReply, which it answers now or later.
  template <typename Handler>
  std::optional<Status> Later(ClientId id, const proto::FrameHeader& h, Handler handler) {
    handler(route->Begin(id, h));
    return route->End(body_scratch);
  }

  const Dependencies deps;
  ServiceLimits limits;  // ApplyLimits changes some at SIGHUP
  ServiceCounters counters;
  const ServiceContext ctx{deps, limits, counters};  // what every handler shares
  TraceStore& store;
  ProcessTable& processes;
  Clock& clock;
  Logger& log;
  // Before the clients: a client's rings hold charges of these.
  UidShare ring_slots;
  UidShare ring_memory;
  UidShare queued_saves;  // charged by saves in flight (RingSaver)
  ClientTable clients;
  // Where a DeferredReply's answer goes; shared with the replies still owed, which may
  // outlive the service (stopped first, in ~TraceService).
  std::shared_ptr<DispatchRoute> route = std::make_shared<DispatchRoute>(clients, counters);
  ProcessRecords records;
  Admission admission;
  FileAccounting accounting;
  RingSaver saver;
  DeviceReports devices;
  EventFiles events;
  Rings rings;
  Queries queries;
  Departures departures;
  Inspection inspection{ctx};  // CRASH's, STACK_DUMP's and PROCESS_DUMP's look from outside
  Crashes crashes;
  ProcessDumps dumps;
  HangWatch hang;
  bool destroying = false;
  // Scratch for Handle: a request's reply body and its encoded reply. Kept between requests
  // so that a steady stream of requests encodes its replies without allocating (a fresh
  // vector grew by push_back several times per reply). Handle is never re-entered.
  std::vector<uint8_t> body_scratch;
  std::vector<uint8_t> reply_scratch;
};

TraceService::TraceService(Dependencies deps, ServiceLimits limits)
    : rooms_(std::make_unique<Rooms>(Checked(std::move(deps)), std::move(limits))) {}

TraceService::~TraceService() {
  // The daemon is stopping: its clients are alive, and nobody will run a check any more.
  // Replies still owed go nowhere: their connections go with the service.
  rooms_->route->Stop();
  rooms_->destroying = true;
  rooms_->departures.ForgetAll();
  rooms_->crashes.ForgetAll();
  std::vector<ClientId> ids;
  for (auto& [id, c] : rooms_->clients) ids.push_back(id);
  for (ClientId id : ids) Disconnect(id);
}

TraceService::ClientId TraceService::Connect(const PeerCredentials& peer, UniqueFd pidfd) {
  Rooms& r = *rooms_;
  // Pinned: facts of a pid the connector no longer holds would be someone else's.
  auto facts = LookupPinned(r.processes, peer.pid, pidfd);
  ProcessRecord* rec = r.records.RecordForConnection(peer.pid, facts, peer.uid);
  ++rec->connections;
  Client c;
  c.peer = peer;
  c.pidfd = std::move(pidfd);
  c.process_dir = FormatProcessDirName(rec->name);
  c.process_name = ParseProcessDirName(c.process_dir);
  c.utc_offset_s = rec->utc_offset_s;
  c.start_ticks = facts ? facts->start_ticks : 0;
  c.program = facts ? facts->program : "unknown";
  c.connected = r.clock.Now();
  auto in_group = [&](const std::optional<gid_t>& gid) {
    return gid && (peer.gid == *gid || (facts && std::count(facts->groups.begin(), facts->groups.end(), *gid) > 0));
  };
  c.may_forward = peer.uid == 0 || peer.uid == r.limits.daemon_uid || in_group(r.limits.forwarder_gid);
  c.reads_all = peer.uid == 0 || peer.uid == r.limits.daemon_uid || in_group(r.limits.reader_gid);
  r.store.HoldProcessDir(c.process_dir);
  const ClientId id = r.clients.Add(std::move(c));
  r.log.Debug("client ", id, " connected: pid ", peer.pid, " uid ", peer.uid, " gid ", peer.gid);
  return id;
}

void TraceService::SetReplySink(ClientId id, std::function<void(ReplyBatch&&)> sink) {
  if (Client* c = rooms_->clients.Find(id)) c->reply_sink = std::move(sink);
}

void TraceService::Disconnect(ClientId id) {
  Rooms& r = *rooms_;
  Client* found = r.clients.Find(id);
  if (found == nullptr) return;
  Client& c = *found;
  c.reply_sink = nullptr;
  r.events.EndAll(c);
  r.records.Disconnected(c.peer.pid, c.start_ticks);
  const ProcessRecord* rec = r.records.Find(c.peer.pid, c.start_ticks);
  const bool crash_recorded = c.crash_recorded || (rec != nullptr && rec->crash_recorded);
  if (c.crash_pending && !r.destroying) {
    // Its CRASH is being inspected: the rings stay until the report is written.
    r.crashes.Park(id, r.clients.Take(id));
    return;
  }
  if (crash_recorded && !c.goodbye && !c.rings.empty()) {
    r.log.Info("pid ", c.peer.pid, " closed its connection after CRASH; its stackcore dir is written, not a second one");
  } else if (!r.destroying && (c.features & ATR_FEATURE_MEMFD) && !c.goodbye && !c.rings.empty()) {
    // No GOODBYE: the process may have died. It keeps its rings and its process dir until
    // the kernel says (Departures).
    r.departures.Depart(r.clients.Take(id));
    return;
  }
  r.Forget(c);
  r.clients.Take(id);
}

bool TraceService::ShouldLogRefusal(uint32_t uid, uint64_t* suppressed) {
  return rooms_->admission.ShouldLogRefusal(uid, suppressed);
}

bool TraceService::HoldsRings(ClientId id) const {
  const Client* c = rooms_->clients.Find(id);
  return c != nullptr && !c->rings.empty();
}

bool TraceService::KeepWhileIdle(ClientId id) const {
  const Client* c = rooms_->clients.Find(id);
  if (c == nullptr) return false;
  if (!c->rings.empty()) return true;
  if (!(c->features & ATR_FEATURE_CRASH)) return false;
  const ProcessRecord* rec = rooms_->records.Find(c->peer.pid, c->start_ticks);
  return rec != nullptr && rec->ring_holders > 0;
}

void TraceService::CheckDepartures() { rooms_->departures.Check(); }
size_t TraceService::departures() const { return rooms_->departures.size(); }

TraceService::Reply TraceService::Handle(ClientId id, const proto::FrameHeader& h, std::span<const uint8_t> payload,
                                         ReplyBatch& out, UniqueFd attached) {
  Rooms& r = *rooms_;
  ++r.counters.requests;
  Client* found = r.clients.Find(id);
  if (found == nullptr) return Reply::kInBatch;
  Client& c = *found;
  std::vector<uint8_t>& body = r.body_scratch;  // reused: see body_scratch
  body.clear();
  UniqueFd passed;
  FdCharge passed_charge;
  Status refusal;
  const OpcodeRule* rule = RuleOf(h.opcode);  // opcode_rules.h: what it needs; nullptr: ENOSYS below
  if (attached.valid() && !(rule != nullptr && rule->descriptor)) {
    // A descriptor the protocol did not ask for: the stream is not what the peer thinks.
    refusal = Status::Error(EBADMSG, "descriptor: only RING_REGISTER carries one; closing");
    out.close_after = true;
  } else if (h.flags & ATR_FLAG_REPLY) {
    refusal = Status::Error(EPROTO, "flags: a request must not carry the reply flag");
  } else if (!c.hello_done && h.opcode != ATR_OP_HELLO) {
    refusal = Status::Error(EPROTO, "opcode: send HELLO first");
  } else if (rule != nullptr && rule->needs != 0 && !(c.features & rule->needs)) {
    refusal = Status::Error(ENOTSUP, std::string(proto::OpcodeName(h.opcode)) + ": " + FeatureName(rule->needs) +
                                         " was not negotiated in HELLO");
  } else {
    // A directory of the process may be made from here on: its name is settled now.
    if (h.opcode == ATR_OP_EVENT_BEGIN || h.opcode == ATR_OP_STACK_DUMP) {
      SettleProcessName(c, r.records, r.clients, r.store);
    }
    std::optional<Status> now = r.Dispatch(id, c, h, payload, std::move(attached), out, &passed, &passed_charge);
    if (!now) {
      // A DeferredReply answers through the reply sink (Crashes, RingSaver).
      c.last_activity = r.clock.Now();
      return Reply::kLater;
    }
    refusal = std::move(*now);
    if (h.opcode == ATR_OP_RING_REGISTER && refusal.ok()) {
      SettleProcessName(c, r.records, r.clients, r.store);  // with the process's UTC offset
    }
  }
  if (c.features & ATR_FEATURE_MEMFD) c.last_activity = r.clock.Now();  // for a death report
  std::vector<uint8_t>& reply = r.reply_scratch;  // reused: see reply_scratch
  reply.clear();
  if (!refusal.ok()) {
    ++r.counters.requests_refused;
    // Refusals come in floods from one uid: one line per interval for each.
    uint64_t suppressed = 0;
    if (refusal.log_as() == Status::LogAs::kSummarized) {
      // Counted, and summed up in lines of their own (the store's, and Admission's).
    } else if (r.admission.ShouldLogRefusal(c.peer.uid, &suppressed)) {
      const bool warn = refusal.log_as() == Status::LogAs::kWarning;
      const bool count = warn || suppressed > 0;
      r.log.Log(warn ? LogLevel::kWarning : LogLevel::kNotice, "refused ", proto::OpcodeName(h.opcode), " from pid ",
                c.peer.pid, " uid ", c.peer.uid, ": ", proto::StatusName(proto::WireStatus(refusal)), " ",
                refusal.message(),
                count ? " (" + std::to_string(suppressed) + " more for this uid since its last line)" : "");
    }
    proto::EncodeReplyError(refusal, reply);
  } else {
    proto::EncodeReplyOk(reply);
    reply.insert(reply.end(), body.begin(), body.end());
  }
  if (passed.valid()) out.fds.push_back({out.bytes.size(), std::move(passed), std::move(passed_charge)});
  proto::AppendFrame(out.bytes, h.opcode, ATR_FLAG_REPLY, h.request_id, reply);
  if (body.capacity() > kMaxKeptScratch) std::vector<uint8_t>().swap(body);
  if (reply.capacity() > kMaxKeptScratch) std::vector<uint8_t>().swap(reply);
  return Reply::kInBatch;
}

std::optional<Status> TraceService::Rooms::Dispatch(ClientId id, Client& c, const proto::FrameHeader& h,
                                                   std::span<const uint8_t> payload, UniqueFd attached,
                                                   ReplyBatch& out, UniqueFd* passed, FdCharge* passed_charge) {
  std::vector<uint8_t>& body = body_scratch;
  switch (h.opcode) {
    case ATR_OP_HELLO: return OnHello(c, payload, body, &out.close_after);
    case ATR_OP_EVENT_BEGIN: return events.OnEventBegin(c, payload, body);
    case ATR_OP_FILE_OPEN: return events.OnFileOpen(c, payload, body);
    case ATR_OP_FILE_APPEND: return events.OnFileAppend(c, payload, body);
    case ATR_OP_FILE_GET_FD: return events.OnFileGetFd(c, payload, passed, passed_charge);
    case ATR_OP_FILE_CLOSE: return events.OnFileClose(c, payload, body);
    case ATR_OP_EVENT_END: return events.OnEventEnd(c, payload, body);
    case ATR_OP_STATUS: return queries.OnStatus(payload, body);
    case ATR_OP_LIST: return queries.OnList(c, payload, body);
    case ATR_OP_VACUUM: return queries.OnVacuum(payload, body);
    case ATR_OP_VACUUM_BY: return queries.OnVacuumBy(c, payload, body);
    case ATR_OP_DUMPS_EXPORTED: return queries.OnDumpsExported(c, payload, body);
    case ATR_OP_AGED_DUMPS: return queries.OnAgedDumps(c, payload, body);
    case ATR_OP_RING_REGISTER: return rings.OnRingRegister(c, payload, std::move(attached));
    case ATR_OP_RING_RELEASE: return rings.OnRingRelease(c, payload);
    case ATR_OP_RING_REPORT:
      return Later(id, h, [&](DeferredReply reply) { rings.OnRingReport(c, payload, std::move(reply)); });
    case ATR_OP_RING_SAVE_ALL:
      return Later(id, h, [&](DeferredReply reply) { rings.OnRingSaveAll(c, payload, std::move(reply)); });
    case ATR_OP_GOODBYE:
      return Later(id, h, [&](DeferredReply reply) { rings.OnGoodbye(c, payload, std::move(reply)); });
    case ATR_OP_CRASH:
    case ATR_OP_STACK_DUMP:
      return Later(id, h, [&](DeferredReply reply) { crashes.Look(id, c, h.opcode, payload, std::move(reply)); });
    case ATR_OP_DUMP:
      return Later(id, h, [&](DeferredReply reply) { rings.OnDump(c, payload, std::move(reply)); });
    case ATR_OP_DEVICE_STATS: return devices.OnDeviceStats(c, payload);
    case ATR_OP_PROCESS_DUMP: return Later(id, h, [&](DeferredReply r) { dumps.Dump(c, payload, std::move(r)); });
    case ATR_OP_LABELS: return ApplyLabels(c, payload, clients, records, log, [this](const Client& l) { hang.Started(l); });
    case ATR_OP_LIST_LIVE: return OnListLive(c, payload, clients, hang, body);
    default: return Status::Error(ENOSYS, "opcode: " + std::to_string(h.opcode) + " is not an operation of protocol 1");
  }
}

Status TraceService::Rooms::OnHello(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body,
                                   bool* close_after) {
  proto::Hello m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  if (c.hello_done) return Status::Error(EPROTO, "HELLO: already done on this connection");
  if (m.major != ATR_VERSION_MAJOR) {
    *close_after = true;
    return Status::Error(EPROTONOSUPPORT, "version: major " + std::to_string(m.major) + " is not supported; this daemon speaks " +
                                            std::to_string(ATR_VERSION_MAJOR) + "." + std::to_string(ATR_VERSION_MINOR));
  }
  c.hello_done = true;
  c.features = GrantedFeatures(m.features);  // opcode_rules.h
  // Counter-stamped rings only while the daemon's measurements trust the counter.
  if (deps.counter_clock == nullptr || !deps.counter_clock->Granted()) c.features &= ~ATR_FEATURE_RING_COUNTER;
  proto::HelloReply r;
  r.major = ATR_VERSION_MAJOR;
  r.minor = static_cast<uint16_t>(std::min<unsigned>(m.minor, ATR_VERSION_MINOR));
  if (c.features & ATR_FEATURE_MEMFD) {
    r.daemon_pid = static_cast<uint32_t>(::getpid());  // for PR_SET_PTRACER
    // For a death report, read only of the process that connected, as it connected: after
    // an exit and a pid reuse, or an exec of a set-id program, it would be someone else's.
    if (auto why = WhyNotInspectable(processes, c.identity(), c.pidfd)) {
      log.Notice("pid ", c.peer.pid, ": not reading its command line and memory cgroup: ", *why);
      c.oom_at_hello = {"", std::nullopt, "not read at HELLO: " + *why};
    } else {
      if (auto cmdline = processes.CommandLine(c.peer.pid)) c.cmdline = std::move(*cmdline);
      c.oom_at_hello = processes.OomKills(c.peer.pid);  // compared at a death without GOODBYE
    }
  } else {
    c.pidfd.reset();  // nothing of this process will be looked at: its descriptor goes back
  }
  r.max_payload = ATR_MAX_PAYLOAD;
  r.features = c.features;
  r.peer_pid = static_cast<uint32_t>(c.peer.pid);
  r.peer_uid = c.peer.uid;
  proto::Encode(r, body);
  return Status::Ok();
}

void TraceService::ApplyLimits(const ServiceLimits& limits) {
  rooms_->limits.rate_limit = limits.rate_limit;
  rooms_->limits.max_bytes_per_client = limits.max_bytes_per_client;
  rooms_->limits.crash_budget = limits.crash_budget;
  rooms_->limits.hang = limits.hang;
}
void TraceService::Tick() {
  rooms_->admission.Tick();
  rooms_->accounting.AccountPassedFiles(rooms_->clients);
  rooms_->accounting.RemeasureWatched();
  rooms_->hang.Tick();
}

size_t TraceService::clients() const { return rooms_->clients.size(); }
uint64_t TraceService::features(ClientId id) const {
  const Client* c = rooms_->clients.Find(id);
  return c == nullptr ? 0 : c->features;
}
size_t TraceService::rings() const { return rooms_->rings.total(); }
size_t TraceService::saves_in_flight() const { return rooms_->saver.in_flight(); }
size_t TraceService::DropQueuedSaves() { return rooms_->saver.DropQueued(); }
size_t TraceService::AbandonRunningSaves() { return rooms_->saver.AbandonRunning(); }
const ServiceCounters& TraceService::counters() const { return rooms_->counters; }
TraceStore& TraceService::store() { return rooms_->store; }

std::string TraceService::StatusLine() const {
  const TraceStore& store = rooms_->store;
  return "host " + std::to_string(store.count(AgeClass::kHost)) + "/" + std::to_string(store.record_num()) +
         ", device " + std::to_string(store.count(AgeClass::kDevice)) + "/" + std::to_string(store.record_num()) +
         ", exit " + std::to_string(store.count(AgeClass::kExit)) + ", clients " + std::to_string(rooms_->clients.size()) +
         (store.counters().kept_dumps_aged ? ", dumps aged early " + std::to_string(store.counters().kept_dumps_aged) : "");
}

}  // namespace atraced
