#include "process_dumps.h"

#include <string>
#include <utility>

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

proto::ProcessDumpEntry Refused(int32_t pid, int err, const std::string& why) {
  return {pid, proto::WireStatus(Status::Error(err, why)), 0, 0, 0, why};
}

std::string Mine(const Client& c) {
  return "uid " + std::to_string(c.peer.uid) + " may dump only its own processes (root may dump any)";
}

}  // namespace

void ProcessDumps::Dump(Client& c, std::span<const uint8_t> payload, DeferredReply reply) {
  if (!(c.features & ATR_FEATURE_PROCESS_DUMP)) {
    return reply.Answer(Status::Error(ENOTSUP, "PROCESS_DUMP: ATR_FEATURE_PROCESS_DUMP was not negotiated in HELLO"));
  }
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
  std::map<int32_t, ClientId> chosen;  // by pid: one holder each, in pid order
  for (auto& [cid, client] : clients_) {
    if (client.rings.empty() || (!root && client.peer.uid != c.peer.uid)) continue;
    if ((m.select & ATR_PROCESS_DUMP_UID) && client.peer.uid != m.uid) continue;
    if ((m.select & ATR_PROCESS_DUMP_COMM) && client.program != m.comm) continue;
    if ((m.select & ATR_PROCESS_DUMP_JOB) && client.labels.job != m.job) continue;  // the holder's: its process's
    chosen.emplace(client.peer.pid, cid);
  }
  for (const auto& [pid, holder] : chosen) add(pid, holder, {pid, 0, 0, 0, 0, ""});
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
    CrashInspector* inspector = deps_.crash_inspector;
    const auto budget = limits_.crash_budget;
    auto look = [inspector, target, budget]() -> CrashFacts {
      if (inspector == nullptr) {
        return {"(not listed: this daemon has no crash inspector)\n", "(none: this daemon has no unwinder)\n",
                "(not read: this daemon has no crash inspector)\n"};
      }
      return inspector->Inspect(target, budget);
    };
    // Off the loop: reading the stacks takes up to the unwind deadline.
    deps_.crash_runner->Run(target.uid, std::move(look),
                               [this, token, turn](CrashFacts facts) { Looked(token, turn, std::move(facts)); });
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
  const std::string text = ProcessDumpReportText(owner, r.payer.peer, facts, now, chosen.size(), turn->ring_names);
  const std::vector<uint8_t> bin = proto::EncodeStackDumpFile(text);
  StackcoreFileName name{kNamedSignal, owner.peer.pid, owner.program, FormatTraceTime(now, owner.utc_offset_s),
                         /*binary=*/true};
  std::vector<HeldRing::File> reports;
  reports.push_back({TraceFileName::Stackcore(name), std::string(bin.begin(), bin.end())});
  name.binary = false;
  reports.push_back({TraceFileName::Stackcore(name), text});
  r.entries[i].threads = facts.thread_count;
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
        } else {
          e = Refused(dumped.peer.pid, st.err(), "save: " + st.message());
        }
        if (st.err() == ESHUTDOWN) {  // the daemon is stopping: no further look
          for (size_t k = request.next; k < request.pids.size(); ++k) {
            if (request.holders[k] != 0) request.entries[k] = Refused(request.pids[k], ESHUTDOWN, "the daemon is stopping");
          }
          request.next = request.pids.size();
        }
        log_.Notice("pid ", dumped.peer.pid, " (", dumped.program, ") dumped from outside for uid ", asker.uid, " (pid ",
                    asker.pid, "): ", facts.stacks_read, " of ", facts.thread_count,
                    " stacks, the longest stop ", facts.max_stop_us, " us; schedule dir with ", turn->rings.size(),
                    " ring(s)", st.ok() ? " written to " + *dir : " failed: " + st.message());
        Step(token);
      },
      dir.get());
}

void ProcessDumps::Finish(uint64_t token) {
  auto it = pending_.find(token);
  if (it == pending_.end()) return;
  Request r = std::move(it->second);
  pending_.erase(it);
  std::vector<uint8_t> body;
  proto::Encode(proto::ProcessDumpReply{std::move(r.entries), r.omitted}, body);
  r.reply.Answer(Status::Ok(), body);
}

}  // namespace atraced
