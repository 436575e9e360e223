#include "crashes.h"

#include <algorithm>
#include <memory>
#include <string>

#include "atraced/processes/signal_names.h"
#include "atraced/store/trace_time.h"
#include "atraced/proto/stack_dump_file.h"
#include "crash_report.h"

namespace atraced {

Status Crashes::Check(Client& c, uint16_t opcode, std::span<const uint8_t> payload, Ask* ask, Client** holder) {
  ask->opcode = opcode;
  const char* what = ask->stack_dump() ? "STACK_DUMP" : "CRASH";
  if (Status st = ask->stack_dump() ? proto::Decode(payload, &ask->dump) : proto::Decode(payload, &ask->crash); !st.ok()) {
    return st;
  }
  *holder = clients_.RingHolderOf(c);
  // A stack dump of a process with no object yet has stacks to write, no ring: the asking
  // connection, of the same process, stands in for the holder.
  if (!*holder && ask->stack_dump()) *holder = &c;
  if (!*holder) {
    return Status::Error(ENOENT, "CRASH: no connection of pid " + std::to_string(c.peer.pid) +
                                   " holds a ring (register one first): there is nothing to save");
  }
  ProcessRecord* process = records_.Find(c.peer.pid, c.start_ticks);
  if ((*holder)->crash_recorded || (process != nullptr && process->crash_recorded)) {
    return Status::Error(EEXIST, std::string(what) + ": the crash of pid " + std::to_string(c.peer.pid) +
                                   " is already recorded");
  }
  if (ask->stack_dump() && (*holder)->crash_pending) {
    return Status::Error(EBUSY, "STACK_DUMP: pid " + std::to_string(c.peer.pid) + " is being looked at already");
  }
  // The process must still be the one that connected, as it connected (process_identity.h):
  // else the look from outside would be at someone else. Nothing is written of it.
  for (const Client* asker : {static_cast<const Client*>(&c), static_cast<const Client*>(*holder)}) {
    if (auto why = WhyNotInspectable(processes_, asker->identity(), asker->pidfd)) {
      return Status::Error(EPERM, std::string(what) + ": not inspected: " + *why);
    }
  }
  if (ask->stack_dump()) return admission_.AdmitEvent(**holder, EventKind::kStackcore);  // it may ask again
  (*holder)->crash_recorded = c.crash_recorded = true;
  if (process != nullptr) process->crash_recorded = true;
  return Status::Ok();
}

CrashTarget Crashes::TargetOf(const Client& c, const Ask& ask) const {
  CrashTarget t{c.peer.pid, ask.tid(), c.peer.uid, c.peer.gid};
  t.every_thread = ask.stack_dump() && (ask.dump.flags & ATR_STACK_DUMP_ALL_THREADS);
  return t;
}

void Crashes::Look(ClientId id, Client& c, uint16_t opcode, std::span<const uint8_t> payload, DeferredReply reply) {
  Ask ask;
  Client* holder = nullptr;
  if (Status refused = Check(c, opcode, payload, &ask, &holder); !refused.ok()) return reply.Answer(std::move(refused));
  const ClientId found = clients_.IdOf(holder);
  const ClientId holder_id = found != 0 ? found : id;
  holder->crash_pending = true;
  const uint64_t token = next_token_++;
  pending_.emplace(token, PendingCrash{holder_id, c.peer.pid, ask, clock_.Now(), std::move(reply)});
  // The process waits in its handler while the runner looks at it from outside; every other
  // client is served meanwhile. The reply, and this connection's next request, wait.
  inspection_.Look(TargetOf(c, ask), c.peer.uid, [this, token](CrashFacts facts) { Finish(token, std::move(facts)); });
}

void Crashes::Finish(uint64_t token, CrashFacts facts) {
  auto p = pending_.find(token);
  if (p == pending_.end()) return;
  PendingCrash crash = std::move(p->second);
  pending_.erase(p);
  // The holder may have closed its connection meanwhile: it waited in parked_.
  Client* holder = nullptr;
  Client* live = clients_.Find(crash.holder);
  auto waiting = parked_.find(crash.holder);
  if (live != nullptr) {
    holder = live;
  } else if (waiting != parked_.end()) {
    holder = &waiting->second;
  }
  // The reply, once the stackcore dir is written, if the CRASH connection is still there;
  // with ATR_FEATURE_CRASH_PATH it names the report, so the handler can tell the user.
  ReportDone reply = [this, to = SharedReply(std::move(crash.reply)), opcode = crash.ask.opcode](
                         Status r, const std::string& report) {
    const Client* asker = clients_.Find(to->client());
    std::vector<uint8_t> body;
    if (r.ok() && opcode == ATR_OP_CRASH && asker != nullptr && (asker->features & ATR_FEATURE_CRASH_PATH)) {
      proto::Encode(proto::CrashReply{report}, body);
    }
    to->Answer(std::move(r), body);
  };
  if (holder) {
    WriteReport(crash.pid, *holder, crash.ask, facts, crash.looked, std::move(reply));
    holder->crash_pending = false;
  } else {
    reply(Status::Error(ENOENT, std::string(crash.ask.stack_dump() ? "STACK_DUMP" : "CRASH") + ": the rings of pid " +
                                  std::to_string(crash.pid) + " are gone"),
          "");
  }
  if (waiting != parked_.end()) {
    log_.Info("pid ", crash.pid, " closed its connection after CRASH; its stackcore dir is written, not a second one");
    forget_(waiting->second);  // the save holds its rings' mappings
    parked_.erase(waiting);
  }
}

void Crashes::WriteReport(int32_t pid, const Client& holder, const Ask& ask, const CrashFacts& facts,
                          std::chrono::system_clock::time_point looked, ReportDone done) {
  std::string ring_list;
  const auto now = clock_.Now();
  const auto inspect_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - looked).count();
  std::vector<const HeldRing*> chosen;
  std::vector<HeldRing::File> reports;
  std::string what;
  std::string report_name;  // a crash's: its path goes back in the reply
  if (ask.stack_dump()) {
    // The process runs on: its live rings, as DUMP saves them (destroyed exitSave ones wait
    // for its exit). The .bin asys waits for, named with the pid as asys looks for it, and
    // the text it turns into, already beside it.
    for (const HeldRing* ring : RingSaver::Unreleased(holder)) {
      chosen.push_back(ring);
      ring_list += (ring_list.empty() ? "" : ", ") + ring->name();
    }
    const std::string text = StackDumpReportText(pid, holder, ask.dump, facts, now, chosen.size(), ring_list);
    const std::vector<uint8_t> bin = proto::EncodeStackDumpFile(text);
    const StackcoreFileName name{ask.dump.signo, pid, holder.program, FormatTraceTime(now, holder.utc_offset_s),
                                 /*binary=*/true};
    StackcoreFileName text_name = name;
    text_name.binary = false;
    reports.push_back({TraceFileName::Stackcore(name), std::string(bin.begin(), bin.end())});
    reports.push_back({TraceFileName::Stackcore(text_name), text});
    ++counters_.stack_dumps_written;
    what = std::to_string(pid) + " (" + holder.program + ") asked for its stacks (" + SignalName(ask.dump.signo) +
           ", thread " + std::to_string(ask.dump.tid) + "); inspected in " + std::to_string(inspect_ms) +
           " ms; stackcore dir with " + std::to_string(chosen.size()) + " ring(s)";
  } else {
    const proto::Crash& m = ask.crash;
    chosen = RingSaver::AtDeath(holder, &ring_list);
    const StackcoreFileName name{m.signo, m.tid, holder.program, FormatTraceTime(now, holder.utc_offset_s)};
    report_name = FormatStackcoreFileName(name);
    reports.push_back({TraceFileName::Stackcore(name), CrashReportText(pid, holder, m, facts, now, chosen.size(), ring_list)});
    ++counters_.crashes_recorded;
    what = std::to_string(pid) + " (" + holder.program + ") caught signal " + SignalName(m.signo) + " in thread " +
           std::to_string(m.tid) + "; inspected in " + std::to_string(inspect_ms) + " ms; stackcore dir with " +
           std::to_string(chosen.size()) + " ring(s)";
  }
  auto dir = std::make_shared<std::string>();  // set by Save once the directory is made
  saver_.Save(
      holder, EventKind::kStackcore, chosen, std::move(reports),
      [this, what = std::move(what), done = std::move(done), dir, report_name](Status r) {
        const std::string report = !r.ok() || dir->empty() || report_name.empty() ? "" : *dir + "/" + report_name;
        log_.Notice("pid ", what, !r.ok() ? " failed: " + r.message() : " written" + (report.empty() ? "" : " to " + report));
        done(std::move(r), report);
      },
      dir.get());
}

void Crashes::Park(ClientId id, Client client) { parked_.emplace(id, std::move(client)); }

void Crashes::ForgetAll() {
  for (auto& [id, c] : parked_) forget_(c);
  parked_.clear();
  pending_.clear();  // a runner's late `done` finds nothing; the service stopped their replies
}

}  // namespace atraced
