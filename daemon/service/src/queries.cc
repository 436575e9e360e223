#include "queries.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace atraced {
namespace {

// A pool for STATUS: its figures and its largest holders (ATR_MAX_POOL_UIDS of them).
template <class ByUid>
proto::StatusReply::Pool PoolOf(uint8_t kind, uint64_t limit, uint64_t per_uid, uint64_t held, const ByUid& by_uid) {
  proto::StatusReply::Pool p{kind, limit, per_uid, held, {by_uid.begin(), by_uid.end()}};
  std::sort(p.uids.begin(), p.uids.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (p.uids.size() > ATR_MAX_POOL_UIDS) p.uids.resize(ATR_MAX_POOL_UIDS);
  return p;
}

proto::StatusReply::Pool PoolOf(uint8_t kind, const UidShare& share) {
  return PoolOf(kind, share.limit(), share.per_uid(), share.total(), share.by_uid());
}

}  // namespace

Status Queries::OnStatus(std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::StatusRequest m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  accounting_.AccountPassedFiles(clients_);
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
  r.root = limits_.root;
  auto& t = r.retention;
  t.present = true;
  t.max_use = store_.space().limits().max_use;
  t.keep_free = store_.space().limits().keep_free;
  t.fs_free = store_.space().free_bytes();
  t.used_host = store_.space().used(AgeClass::kHost);
  t.used_device = store_.space().used(AgeClass::kDevice);
  t.used_exit = store_.space().used(AgeClass::kExit);
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
  // Each pool shared between users, and who holds it (issue 21).
  r.shares.present = true;
  if (deps_.connections != nullptr) r.shares.pools.push_back(PoolOf(ATR_POOL_CONNECTIONS, *deps_.connections));
  if (const FdBudget* fds = deps_.fd_budget) {
    r.shares.pools.push_back(
        PoolOf(ATR_POOL_DESCRIPTORS, fds->plan().budget, fds->plan().per_uid, fds->total(), fds->by_uid()));
  }
  r.shares.pools.push_back(PoolOf(ATR_POOL_RINGS, ring_slots_));
  r.shares.pools.push_back(PoolOf(ATR_POOL_RING_MEMORY, ring_memory_));
  r.shares.pools.push_back(PoolOf(ATR_POOL_QUEUED_SAVES, queued_saves_));
  // Each device whose traces came here (issue 24), in device order (the map's).
  r.devices.present = true;
  for (const auto& [id, d] : counters_.devices) {
    r.devices.devices.push_back({id, d.events, d.received, d.saved, d.dropped_invalid, d.dropped_daemon, d.reconnects});
  }
  r.incomplete_sent = true;
  r.incomplete_dirs = store_.IncompleteDirs();
  r.dumps_sent = true;
  r.dumps_kept = store_.KeptDumps();
  r.dumps_aged_early = sc.kept_dumps_aged;
  proto::Encode(r, body);
  return Status::Ok();
}

Status Queries::OnList(const Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::ListRequest m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  accounting_.AccountPassedFiles(clients_);
  proto::ListReply r;
  for (const EventInfo& e : store_.List(m.after_seq, m.max_entries)) {
    proto::ListEntry le;
    le.seq = e.seq;
    if (!c.Reads(e.uid)) {  // another user's: that it exists, nothing of it
      le.uid = ATR_LIST_HIDDEN_UID;
      // Fixed values where a reader checks the field (PROTOCOL.md, LIST): no directory's.
      le.kind = ATR_EVENT_SCHEDULE;
      le.side = ATR_SIDE_HOST;
      le.path = "hidden";
      le.flags = ATR_LIST_HIDDEN;
      r.entries.push_back(std::move(le));
      continue;
    }
    le.kind = static_cast<uint8_t>(e.kind);
    le.side = static_cast<uint8_t>(e.side);
    le.device_id = e.device_id;
    le.pid = e.pid;
    le.uid = e.uid;
    le.bytes = e.bytes;
    le.apparent_bytes = e.apparent_bytes;
    le.created_unix_us = static_cast<uint64_t>(std::max<int64_t>(0, e.created_us));
    le.path = e.rel_path;
    le.comm = e.comm;
    le.labels = e.labels;
    le.flags = (e.incomplete ? ATR_LIST_INCOMPLETE : 0) | (e.dump == DumpKind::kOperator ? ATR_LIST_DUMP : 0) |
               (e.dump == DumpKind::kHang ? ATR_LIST_HANG : 0) | (e.saved ? 0 : ATR_LIST_CLIENT);
    r.entries.push_back(std::move(le));
  }
  proto::Encode(r, body);
  return Status::Ok();
}

Status Queries::OnDumpsExported(const Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::DumpsExported m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  auto released = store_.MarkExported(m.paths, [&c](uint32_t uid) { return c.Reads(uid); });
  if (!released.ok()) return released.status();
  proto::DumpsExportedReply r;
  r.released = static_cast<uint32_t>(*released);
  r.skipped = static_cast<uint32_t>(m.paths.size() - *released);
  if (r.released != 0) {
    log_.Info("export: uid ", c.peer.uid, " exported ", r.released, " dump dir(s): dump-keep spares them no more");
  }
  proto::Encode(r, body);
  return Status::Ok();
}

Status Queries::OnAgedDumps(const Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::ListLive m;  // AGED_DUMPS' request is LIST_LIVE's: a job, or every one
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  proto::AgedDumpsReply r;
  for (const AgedDump& a : store_.aged_dumps()) {
    if (!c.Reads(a.uid) || (!m.job.empty() && a.labels.job != m.job)) continue;
    if (r.entries.size() >= ATR_MAX_AGED_ENTRIES) {
      ++r.omitted;
      continue;
    }
    r.entries.push_back({.aged_unix_us = a.aged_us < 0 ? 0 : static_cast<uint64_t>(a.aged_us),
                         .uid = a.uid,
                         .reason = static_cast<uint8_t>(a.reason),  // AgingReason's values are ATR_AGED_*'s
                         .flags = static_cast<uint8_t>((a.exported ? ATR_AGED_EXPORTED : 0u) |
                                                       (a.dump == DumpKind::kHang ? ATR_AGED_HANG : 0u)),
                         .path = a.process_dir + "/" + a.event_dir,
                         .labels = a.labels});
  }
  proto::Encode(r, body);
  return Status::Ok();
}

namespace {

// At most ATR_MAX_VACUUM_PATHS listed, the rest counted: a reply must fit in one frame.
template <class VacuumReplyT>
void ListRemoved(std::vector<std::string>& removed, VacuumReplyT* r) {
  for (auto& path : removed) {
    if (r->paths.size() < ATR_MAX_VACUUM_PATHS) {
      r->paths.push_back(std::move(path));
    } else {
      ++r->omitted;
    }
  }
}

}  // namespace

Status Queries::OnVacuum(std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  proto::VacuumRequest m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  AgingReport report = store_.Vacuum(m.dry_run);
  proto::VacuumReply r;
  ListRemoved(report.removed, &r);
  proto::Encode(r, body);
  return Status::Ok();
}

Status Queries::OnVacuumBy(const Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body) {
  const PeerCredentials& peer = c.peer;
  proto::VacuumBy m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  // The configured limits (VACUUM) bind everyone alike; these verbs remove other users'
  // evidence beyond them, so only root and the daemon's own user may. What would go is no
  // more than LIST shows: a dry run is anyone's.
  if (!m.dry_run && peer.uid != 0 && peer.uid != limits_.daemon_uid) {
    return Status::Error(EPERM, "vacuum: only root or the daemon's user may remove beyond the configured limits "
                   "(a dry run is allowed)", Status::LogAs::kWarning);
  }
  VacuumSpec spec;
  spec.dry_run = m.dry_run;
  if (m.verbs & ATR_VACUUM_OLDER_THAN) spec.older_than = std::chrono::microseconds(static_cast<int64_t>(
                                           std::min<uint64_t>(m.older_than_us, INT64_MAX / 2)));
  if (m.verbs & ATR_VACUUM_MAX_USE) spec.max_use = m.max_use;
  if (m.verbs & ATR_VACUUM_KEEP) spec.keep = m.keep;
  auto report = store_.VacuumBy(spec);
  if (!report.ok()) return Status::Error(report.status().err(), "vacuum: " + report.status().message());
  if (!m.dry_run) {
    log_.Notice("vacuum by pid ", peer.pid, " uid ", peer.uid, ": removed ", report->removed.size(), " event dir(s), ",
                report->bytes, " bytes");
  }
  proto::VacuumByReply r;
  r.bytes = report->bytes;
  if (m.dry_run && !c.reads_all) {  // what would go of other users' is counted, never named
    std::vector<std::string> own;
    for (size_t i = 0; i < report->removed.size(); ++i) {
      if (i < report->removed_uids.size() && report->removed_uids[i] == peer.uid) {
        own.push_back(std::move(report->removed[i]));
      } else {
        ++r.omitted;
      }
    }
    report->removed = std::move(own);
  }
  ListRemoved(report->removed, &r);
  proto::Encode(r, body);
  return Status::Ok();
}

}  // namespace atraced
