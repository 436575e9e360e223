#include "process_dumps.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "atraced/processes/process_identity.h"
#include "atraced/proto/stack_dump_file.h"
#include "atraced/store/trace_time.h"
#include "crash_report.h"

namespace atraced {
namespace {

// CANN's on-demand dump signal, whose stack dump's file names asys looks for; none is sent.
constexpr int32_t kNamedSignal = 35;

// What a save and a report need of a connection, kept when the connection itself may go.
Client StandIn(const Client& c) {
  Client s;
  s.peer = c.peer;
  s.process_dir = c.process_dir;
  s.process_name = c.process_name;
  s.utc_offset_s = c.utc_offset_s;
  s.start_ticks = c.start_ticks;
  s.program = c.program;
  s.labels = c.labels;  // its directory is labelled as its process (LABELS)
  s.cmdline = c.cmdline;
  s.connected = c.connected;
  s.last_activity = c.last_activity;
  return s;
}

// Each uid's processes in pid order, the uids taking turns (the fewest processes first, then
// by uid): the first ATR_MAX_DUMP_PROCESSES of this order hold every uid's first ones.
std::vector<std::pair<int32_t, ClientId>> TakingTurns(const std::map<uint32_t, std::map<int32_t, ClientId>>& by_uid) {
  std::vector<std::pair<std::map<int32_t, ClientId>::const_iterator, std::map<int32_t, ClientId>::const_iterator>> queues;
  for (const auto& [uid, processes] : by_uid) queues.emplace_back(processes.begin(), processes.end());
  std::stable_sort(queues.begin(), queues.end(), [](const auto& a, const auto& b) {
    return std::distance(a.first, a.second) < std::distance(b.first, b.second);
  });
  std::vector<std::pair<int32_t, ClientId>> order;
  for (bool more = true; more;) {
    more = false;
    for (auto& [next, end] : queues) {
      if (next == end) continue;
      order.emplace_back(next->first, next->second);
      ++next;
      more = more || next != end;
    }
  }
  return order;
}

proto::ProcessDumpEntry Refused(int32_t pid, int err, const std::string& why) {
  return {pid, proto::WireStatus(Status::Error(err, why)), 0, 0, 0, why};
}

std::string Mine(const Client& c) {
  return "uid " + std::to_string(c.peer.uid) + " may dump only its own processes (root may dump any)";
}

}  // namespace

void ProcessDumps::Dump(Client& c, std::span<const uint8_t> payload, DeferredReply reply) {
  proto::ProcessDump m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return reply.Answer(std::move(st));
  Request r;
  r.payer = StandIn(c);
  if (Status refused = Choose(c, m, &r); !refused.ok()) return reply.Answer(std::move(refused));
  r.reply = std::move(reply);
  const uint64_t token = next_token_++;
  pending_.emplace(token, std::move(r));
  Step(token);  // the reply comes with the last process's directory
}

void ProcessDumps::DumpOnOwn(std::vector<OwnTarget> targets, OwnDone done) {
  Request r;
  r.own = std::move(done);
  for (OwnTarget& t : targets) {
    const Client* holder = clients_.Find(t.holder);
    const int32_t pid = holder != nullptr ? holder->peer.pid : 0;
    r.pids.push_back(pid);
    r.holders.push_back(holder != nullptr ? t.holder : 0);
    r.entries.push_back(holder != nullptr ? proto::ProcessDumpEntry{pid, 0, 0, 0, 0, ""}
                                          : Refused(0, ENOENT, "it let go of its rings before its turn"));
    r.notes.push_back(std::move(t.note));
  }
  r.backtraces.resize(r.pids.size());
  const uint64_t token = next_token_++;
  pending_.emplace(token, std::move(r));
  Step(token);
}

Status ProcessDumps::Choose(const Client& c, const proto::ProcessDump& m, Request* r) {
  const bool root = c.peer.uid == 0;
  auto holder_of = [this](int32_t pid) -> ClientId {
    for (auto& [cid, client] : clients_) {
      if (client.peer.pid == pid && !client.rings.empty()) return cid;
    }
    return 0;
  };
  auto add = [this, r, &c](int32_t pid, ClientId holder, proto::ProcessDumpEntry entry) {
    if (r->pids.size() >= ATR_MAX_DUMP_PROCESSES) {
      ++r->omitted;
      return;
    }
    // A look at another user's process is what the log should show (through the throttle).
    uint64_t suppressed = 0;
    if (entry.status == ATR_EPERM && admission_.ShouldLogRefusal(c.peer.uid, &suppressed)) {
      log_.Notice("refused PROCESS_DUMP from pid ", c.peer.pid, " uid ", c.peer.uid, ": ", entry.text,
                  suppressed > 0 ? " (" + std::to_string(suppressed) + " more for this uid since its last line)" : "");
    }
    r->pids.push_back(pid);
    r->holders.push_back(holder);
    r->entries.push_back(std::move(entry));
  };
  if (m.select == 0) {
    for (int32_t pid : m.pids) {
      const ClientId holder = holder_of(pid);
      const Client* held = clients_.Find(holder);
      if (held == nullptr) {
        add(pid, 0, Unheld(c, pid));
      } else if (!root && held->peer.uid != c.peer.uid) {
        add(pid, 0, Refused(pid, EPERM, "pid " + std::to_string(pid) + " is uid " + std::to_string(held->peer.uid) +
                                            "'s; " + Mine(c)));
      } else {
        add(pid, holder, {pid, 0, 0, 0, 0, ""});
      }
    }
    return Status::Ok();
  }
  if ((m.select & ATR_PROCESS_DUMP_UID) && !root && m.uid != c.peer.uid) {
    return Status::Error(EPERM, "select: uid " + std::to_string(m.uid) + " is not yours; " + Mine(c));
  }
  std::map<uint32_t, std::map<int32_t, ClientId>> by_uid;  // one holder per pid, in pid order, per uid
  for (auto& [cid, client] : clients_) {
    if (client.rings.empty() || (!root && client.peer.uid != c.peer.uid)) continue;
    if ((m.select & ATR_PROCESS_DUMP_UID) && client.peer.uid != m.uid) continue;
    if ((m.select & ATR_PROCESS_DUMP_COMM) && client.program != m.comm) continue;
    if ((m.select & ATR_PROCESS_DUMP_JOB) && client.labels.job != m.job) continue;  // the holder's: its process's
    by_uid[client.peer.uid].emplace(client.peer.pid, cid);
  }
  // Past ATR_MAX_DUMP_PROCESSES, the uids take turns: a label is anyone's word, so one user's
  // many processes claiming a job cannot displace the job's own (dump --job by root).
  std::vector<std::pair<int32_t, ClientId>> order = TakingTurns(by_uid);
  const auto taken = order.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(order.size(), ATR_MAX_DUMP_PROCESSES));
  std::sort(order.begin(), taken);  // those dumped, in pid order
  std::string left_out;
  for (auto it = order.begin(); it != order.end(); ++it) {
    if (it >= taken && left_out.size() < 1024) left_out += (left_out.empty() ? "" : " ") + std::to_string(it->first);
    add(it->first, it->second, {it->first, 0, 0, 0, 0, ""});
  }
  if (r->omitted > 0) {
    log_.Notice("PROCESS_DUMP from pid ", c.peer.pid, " uid ", c.peer.uid, " chose ", order.size(), " processes, ",
                r->omitted, " past the ", ATR_MAX_DUMP_PROCESSES, " a dump takes, each uid in turn; left out: ", left_out);
  }
  return Status::Ok();
}

proto::ProcessDumpEntry ProcessDumps::Unheld(const Client& c, int32_t pid) {
  const std::optional<ProcessFacts> facts = processes_.Lookup(pid);
  const std::string name = "pid " + std::to_string(pid);
  if (!facts) return Refused(pid, ESRCH, name + " does not exist");
  if (c.peer.uid != 0 && facts->creds && facts->creds->uids[0] != c.peer.uid) {
    return Refused(pid, EPERM, name + " is uid " + std::to_string(facts->creds->uids[0]) + "'s; " + Mine(c));
  }
  return Refused(pid, ENOENT, name + " (" + facts->program + ") holds no ring here: it does not use libascend_trace, "
                                     "has created no tracer yet, or is connected to another daemon");
}

void ProcessDumps::Step(uint64_t token) {
  for (;;) {
    auto it = pending_.find(token);
    if (it == pending_.end()) return;
    Request& r = it->second;
    if (r.next >= r.pids.size()) return Finish(token);
    const size_t i = r.next++;
    if (r.holders[i] == 0) continue;  // refused when chosen
    const int32_t pid = r.pids[i];
    const Client* holder = clients_.Find(r.holders[i]);
    if (holder == nullptr || holder->rings.empty()) {
      r.entries[i] = Refused(pid, ENOENT, "pid " + std::to_string(pid) + " let go of its rings before its turn (it "
                                                                         "exited, or said GOODBYE)");
      continue;
    }
    // As for CRASH: only the process that connected, as it connected (process_identity.h).
    if (auto why = WhyNotInspectable(processes_, holder->identity(), holder->pidfd)) {
      r.entries[i] = Refused(pid, EPERM, "not inspected: " + *why);
      continue;
    }
    if (r.own) r.payer = StandIn(*holder);  // the daemon's own dump: as the process's own user
    if (Status refused = admission_.AdmitEvent(r.payer, EventKind::kSchedule); !refused.ok()) {
      r.entries[i] = Refused(pid, refused.err(), refused.message());
      continue;
    }
    // The rings as they are now, held: a process that exits while its stacks are read (its
    // connection gone, its rings released) still gets them saved.
    auto turn = std::make_shared<Turn>();
    turn->owner = StandIn(*holder);
    for (const HeldRing* ring : RingSaver::WithLedger(*holder, RingSaver::Unreleased(*holder))) {  // the stand-in holds none
      turn->rings.push_back(*ring);
      turn->ring_names += (turn->ring_names.empty() ? "" : ", ") + ring->name();
    }
    CrashTarget target{pid, pid, holder->peer.uid, holder->peer.gid};
    target.live = true;
    // The asker's unwinds count against its uid's limit, as its crashes do; root's do not (an
    // administrator dumping every rank of a hung job), nor the hang watch's, which has its own
    // bound (hang-dumps-per-hour) and must read every rank of a job in one pass.
    const bool unlimited = r.own || r.payer.peer.uid == 0;
    const std::optional<uint32_t> payer = unlimited ? std::nullopt : std::optional(r.payer.peer.uid);
    inspection_.Look(target, payer, [this, token, turn](CrashFacts facts) { Looked(token, turn, std::move(facts)); });
    return;
  }
}

void ProcessDumps::Looked(uint64_t token, std::shared_ptr<Turn> turn, CrashFacts facts) {
  auto it = pending_.find(token);
  if (it == pending_.end()) return;
  Request& r = it->second;
  const size_t i = r.next - 1;
  const Client& owner = turn->owner;
  const auto now = clock_.Now();
  std::vector<const HeldRing*> chosen;
  for (const HeldRing& ring : turn->rings) chosen.push_back(&ring);
  const std::string text =
      ProcessDumpReportText(owner, r.payer.peer, facts, now, chosen.size(), turn->ring_names, r.own ? r.notes[i] : "");
  const std::vector<uint8_t> bin = proto::EncodeStackDumpFile(text);
  StackcoreFileName name{kNamedSignal, owner.peer.pid, owner.program, FormatTraceTime(now, owner.utc_offset_s),
                         /*binary=*/true};
  std::vector<HeldRing::File> reports;
  reports.push_back({TraceFileName::Stackcore(name), std::string(bin.begin(), bin.end())});
  name.binary = false;
  reports.push_back({TraceFileName::Stackcore(name), text});
  r.entries[i].threads = facts.threads_written;
  r.entries[i].max_stop_us = facts.max_stop_us;
  r.entries[i].rings = static_cast<uint32_t>(chosen.size());
  auto dir = std::make_shared<std::string>();  // set by Save once the directory is made
  const PeerCredentials asker = r.payer.peer;
  saver_.Save(
      owner, r.payer, EventKind::kSchedule, chosen, std::move(reports),
      [this, token, i, dir, turn, facts, asker](Status st) {
        auto found = pending_.find(token);
        if (found == pending_.end()) return;
        Request& request = found->second;
        proto::ProcessDumpEntry& e = request.entries[i];
        const Client& dumped = turn->owner;
        if (st.ok()) {
          e.text = *dir;
          if (request.own) request.backtraces[i] = facts.backtrace;
        } else {
          e = Refused(dumped.peer.pid, st.err(), "save: " + st.message());
        }
        if (st.err() == ESHUTDOWN) {  // the daemon is stopping: no further look
          for (size_t k = request.next; k < request.pids.size(); ++k) {
            if (request.holders[k] != 0) request.entries[k] = Refused(request.pids[k], ESHUTDOWN, "the daemon is stopping");
          }
          request.next = request.pids.size();
        }
        log_.Notice("pid ", dumped.peer.pid, " (", dumped.program, ") dumped from outside ",
                    request.own ? std::string("by the hang watch") :
                                  "for uid " + std::to_string(asker.uid) + " (pid " + std::to_string(asker.pid) + ")",
                    ": ", facts.stacks_read, " of ", facts.thread_count, " stacks read, ", facts.stacks_written,
                    " written, the longest stop ", facts.max_stop_us, " us; schedule dir with ", turn->rings.size(),
                    " ring(s)", st.ok() ? " written to " + *dir : " failed: " + st.message());
        Step(token);
      },
      dir.get(), r.own ? DumpKind::kHang : DumpKind::kOperator);
}

void ProcessDumps::Finish(uint64_t token) {
  auto it = pending_.find(token);
  if (it == pending_.end()) return;
  Request r = std::move(it->second);
  pending_.erase(it);
  if (r.own) {
    std::vector<OwnResult> results;
    for (size_t i = 0; i < r.entries.size(); ++i) results.push_back({std::move(r.entries[i]), std::move(r.backtraces[i])});
    return r.own(std::move(results));
  }
  std::vector<uint8_t> body;
  proto::Encode(proto::ProcessDumpReply{std::move(r.entries), r.omitted}, body);
  r.reply.Answer(Status::Ok(), body);
}

}  // namespace atraced
