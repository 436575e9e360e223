// STATUS, LIST (paged until exhausted) and VACUUM.
#include <errno.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "atraced/atrace_client.h"
#include "atraced/proto/codec.h"
#include "client.h"
#include "guard.h"

using namespace atrace_client_internal;
namespace proto = atraced::proto;

namespace {

// Sends one query and decodes its reply body into *out; the handle's lock must be held.
template <class Request, class Body>
int Query(atrace_client& c, uint16_t opcode, const Request& request, Body* out) {
  int rc = Ready(c);
  if (rc != 0) return rc;
  std::vector<uint8_t> payload;
  proto::Encode(request, payload);
  c.conn->Queue(opcode, payload, 0);
  std::vector<Reply> replies;
  rc = Transact(c, &replies);
  if (rc != 0) return rc;
  rc = FirstError(c, replies);
  if (rc != 0) return rc;
  return proto::Decode(replies.front().body, out).ok() ? 0 : -EPROTO;
}

static_assert(ATRACE_LIST_INCOMPLETE == ATR_LIST_INCOMPLETE, "LIST flags pass through as the daemon sent them");
static_assert(ATRACE_LIST_HIDDEN == ATR_LIST_HIDDEN && ATRACE_LIST_HIDDEN_UID == ATR_LIST_HIDDEN_UID,
              "LIST flags pass through as the daemon sent them");
static_assert(ATRACE_LIST_DUMP == ATR_LIST_DUMP && ATRACE_LIST_HANG == ATR_LIST_HANG, "LIST flags pass through");
static_assert(ATRACE_LIST_CLIENT == ATR_LIST_CLIENT, "LIST flags pass through");
static_assert(ATRACE_LIVE_WATCHED == ATR_LIVE_WATCHED && ATRACE_LIVE_STALLED == ATR_LIVE_STALLED &&
                  ATRACE_LIVE_BUSY == ATR_LIVE_BUSY && ATRACE_LIVE_CAPTURED == ATR_LIVE_CAPTURED &&
                  ATRACE_LIVE_NEVER_WROTE == ATR_LIVE_NEVER_WROTE,
              "LIST_LIVE flags pass through as the daemon sent them");
static_assert(ATRACE_AGED_COUNT == ATR_AGED_COUNT && ATRACE_AGED_BYTES == ATR_AGED_BYTES &&
                  ATRACE_AGED_KEEP_FREE == ATR_AGED_KEEP_FREE && ATRACE_AGED_AGE == ATR_AGED_AGE &&
                  ATRACE_AGED_VACUUM == ATR_AGED_VACUUM && ATRACE_AGED_EXPORTED == ATR_AGED_EXPORTED &&
                  ATRACE_AGED_HANG == ATR_AGED_HANG,
              "AGED_DUMPS reasons and flags pass through as the daemon sent them");

// The whole struct from a STATUS reply; the entry points copy as much as their caller has.
void FillStatus(const proto::StatusReply& s, atrace_status* out) {
  out->record_num = s.record_num;
  out->host_dirs = s.host_dirs;
  out->device_dirs = s.device_dirs;
  out->exit_dirs = s.exit_dirs;
  out->clients = s.clients;
  out->events_begun = s.events_begun;
  out->dirs_aged = s.dirs_aged;
  out->bytes_written = s.bytes_written;
  out->removal_failures = s.removal_failures;
  out->requests_refused = s.requests_refused;
  size_t n = std::min(s.root.size(), sizeof out->root - 1);
  std::memcpy(out->root, s.root.data(), n);
  out->root[n] = '\0';
  out->bytes_apparent = s.bytes_apparent;
  const auto& r = s.retention;
  out->retention_known = r.present ? 1 : 0;
  out->aging_policy = r.aging_policy;
  out->max_use = r.max_use;
  out->keep_free = r.keep_free;
  out->fs_free = r.fs_free;
  out->used_host = r.used_host;
  out->used_device = r.used_device;
  out->used_exit = r.used_exit;
  out->bytes_freed = r.bytes_freed;
  out->aged_count = r.aged_count;
  out->aged_max_use = r.aged_max_use;
  out->aged_keep_free = r.aged_keep_free;
  out->aged_max_age = r.aged_max_age;
  out->aged_vacuum = r.aged_vacuum;
  out->refused_max_use = r.refused_max_use;
  out->refused_keep_free = r.refused_keep_free;
  out->refused_rate_limit = r.refused_rate_limit;
  out->refused_client_bytes = r.refused_client_bytes;
  out->exit_record_num = r.exit_record_num;
  out->reserved = 0;
  out->max_age_s = r.max_age_s;
  out->incomplete_known = s.incomplete_sent ? 1 : 0;
  out->incomplete_dirs = s.incomplete_dirs;
  out->dumps_known = s.dumps_sent ? 1 : 0;
  out->dumps_kept = s.dumps_kept;
  out->dumps_aged_early = s.dumps_aged_early;
}

std::string PoolName(uint8_t pool) {
  switch (pool) {
    case ATR_POOL_CONNECTIONS: return "connections";
    case ATR_POOL_DESCRIPTORS: return "descriptors";
    case ATR_POOL_RINGS: return "rings";
    case ATR_POOL_RING_MEMORY: return "ring_memory";
    case ATR_POOL_QUEUED_SAVES: return "queued_saves";
    default: return "pool-" + std::to_string(pool);
  }
}

// STATUS under the handle's lock; the caller reads the reply without it, so a callback may
// call into the handle.
int StatusOf(atrace_client& c, proto::StatusReply* s) {
  std::lock_guard<std::mutex> lock(c.mu);
  return Query(c, ATR_OP_STATUS, proto::StatusRequest{}, s);
}

// Calls fn for each path; non-zero from it stops and is returned.
int EachPath(const std::vector<std::string>& paths, atrace_path_fn fn, void* user) {
  if (fn == nullptr) return 0;
  for (const auto& path : paths) {
    if (int stop = fn(path.c_str(), user)) return stop;
  }
  return 0;
}

}  // namespace

extern "C" {

int atrace_client_status(atrace_client* client, atrace_status* out) {
  return atrace_client_status_ex(client, out, offsetof(atrace_status, bytes_apparent));
}

int atrace_client_status_ex(atrace_client* client, atrace_status* out, size_t size) {
  if (client == nullptr || out == nullptr) return -EINVAL;
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(client->mu);
    proto::StatusReply s;
    int rc = Query(*client, ATR_OP_STATUS, proto::StatusRequest{}, &s);
    if (rc != 0) return rc;
    atrace_status full{};  // filled whole, copied as far as the caller's struct goes
    FillStatus(s, &full);
    std::memcpy(out, &full, std::min(size, sizeof full));
    return 0;
  });
}

int atrace_client_shares(atrace_client* client, atrace_share_fn fn, void* user) {
  if (client == nullptr || fn == nullptr) return -EINVAL;
  return Guarded([&] {
    proto::StatusReply s;
    if (int rc = StatusOf(*client, &s); rc != 0) return rc;
    if (!s.shares.present) return -ENOTSUP;
    // The callback runs without the lock, so it may call into this handle.
    for (const auto& p : s.shares.pools) {
      const std::string name = PoolName(p.pool);
      atrace_share line{name.c_str(), ATRACE_SHARE_TOTAL, p.held, p.limit, p.per_uid};
      if (int stop = fn(&line, user)) return stop;
      for (const auto& [uid, held] : p.uids) {
        line = {name.c_str(), uid, held, p.limit, p.per_uid};
        if (int stop = fn(&line, user)) return stop;
      }
    }
    return 0;
  });
}

int atrace_client_list(atrace_client* client, atrace_list_fn fn, void* user) {
  if (client == nullptr || fn == nullptr) return -EINVAL;
  return Guarded([&] {
    proto::ListRequest request;
    request.max_entries = proto::kMaxListEntries;
    for (;;) {
      proto::ListReply page;
      {
        std::lock_guard<std::mutex> lock(client->mu);
        int rc = Query(*client, ATR_OP_LIST, request, &page);
        if (rc != 0) return rc;
      }
      // The callback runs without the lock, so it may call into this handle.
      for (const auto& e : page.entries) {
        atrace_list_entry entry{e.seq,   e.kind,          e.side,         e.device_id,      e.pid,
                                e.uid,   e.bytes,         e.created_unix_us, e.path.c_str(), e.apparent_bytes,
                                e.comm.c_str(), e.flags, e.labels.job.c_str(), e.labels.rank.c_str(),
                                e.labels.world_size.c_str()};
        int stop = fn(&entry, user);
        if (stop != 0) return stop;
        request.after_seq = e.seq;
      }
      if (page.entries.size() < request.max_entries) return 0;  // fewer than asked: the end
    }
  });
}

int atrace_client_vacuum(atrace_client* client, int dry_run, atrace_path_fn fn, void* user) {
  if (client == nullptr) return -EINVAL;
  return Guarded([&] {
    proto::VacuumReply removed;
    {
      std::lock_guard<std::mutex> lock(client->mu);
      proto::VacuumRequest request;
      request.dry_run = dry_run != 0;
      int rc = Query(*client, ATR_OP_VACUUM, request, &removed);
      if (rc != 0) return rc;
    }
    return EachPath(removed.paths, fn, user);
  });
}

int atrace_client_vacuum_by(atrace_client* client, const atrace_vacuum_spec* spec, atrace_path_fn fn, void* user,
                            atrace_vacuum_result* result) {
  if (result != nullptr) *result = atrace_vacuum_result{};
  if (client == nullptr || spec == nullptr || spec->verbs > 0xffffu) return -EINVAL;
  return Guarded([&] {
    proto::VacuumByReply removed;
    {
      std::lock_guard<std::mutex> lock(client->mu);
      proto::VacuumBy request;
      request.dry_run = spec->dry_run != 0;
      request.verbs = static_cast<uint16_t>(spec->verbs);
      if (spec->verbs & ATRACE_VACUUM_KEEP) request.keep = spec->keep;
      if (spec->verbs & ATRACE_VACUUM_OLDER_THAN) request.older_than_us = spec->older_than_us;
      if (spec->verbs & ATRACE_VACUUM_MAX_USE) request.max_use = spec->max_use;
      int rc = Query(*client, ATR_OP_VACUUM_BY, request, &removed);
      if (rc != 0) return rc;
    }
    if (result != nullptr) {
      *result = {removed.bytes, static_cast<uint32_t>(removed.paths.size()), removed.omitted};
    }
    return EachPath(removed.paths, fn, user);
  });
}

int atrace_client_dump_processes(atrace_client* client, const atrace_dump_spec* spec, atrace_dump_fn fn, void* user,
                                 uint32_t* omitted) {
  if (omitted != nullptr) *omitted = 0;
  if (client == nullptr || spec == nullptr || (spec->pid_count > 0 && spec->pids == nullptr) ||
      spec->pid_count > ATR_MAX_DUMP_PROCESSES || ((spec->select & ATRACE_DUMP_COMM) && spec->comm == nullptr) ||
      ((spec->select & ATRACE_DUMP_JOB) && spec->job == nullptr)) {
    return -EINVAL;
  }
  return Guarded([&] {
    proto::ProcessDumpReply reply;
    {
      std::lock_guard<std::mutex> lock(client->mu);
      if (int rc = Ready(*client); rc != 0) return rc;
      if (!(client->conn->granted_features() & ATR_FEATURE_PROCESS_DUMP)) return -ENOTSUP;
      proto::ProcessDump request;
      request.select = spec->select;
      request.uid = spec->uid;
      if (spec->select & ATRACE_DUMP_COMM) request.comm = spec->comm;
      if (spec->select & ATRACE_DUMP_JOB) request.job = spec->job;
      request.pids.assign(spec->pids, spec->pids + spec->pid_count);
      if (int rc = Query(*client, ATR_OP_PROCESS_DUMP, request, &reply); rc != 0) return rc;
    }
    if (omitted != nullptr) *omitted = reply.omitted;
    for (const auto& e : reply.entries) {
      const atrace_dump_entry entry{e.pid, e.status, e.threads, e.rings, e.max_stop_us, e.text.c_str()};
      if (fn != nullptr) {
        if (int stop = fn(&entry, user)) return stop;
      }
    }
    return 0;
  });
}

int atrace_client_list_live(atrace_client* client, const char* job, atrace_live_fn fn, void* user, uint32_t* omitted) {
  if (omitted != nullptr) *omitted = 0;
  if (client == nullptr || fn == nullptr) return -EINVAL;
  if (job != nullptr && !proto::CheckLabel(proto::LabelKind::kJob, job).empty()) return -EINVAL;
  return Guarded([&] {
    proto::ListLiveReply reply;
    {
      std::lock_guard<std::mutex> lock(client->mu);
      if (int rc = Ready(*client); rc != 0) return rc;
      if (!(client->conn->granted_features() & ATR_FEATURE_LIST_LIVE)) return -ENOTSUP;
      proto::ListLive request;
      if (job != nullptr) request.job = job;
      if (int rc = Query(*client, ATR_OP_LIST_LIVE, request, &reply); rc != 0) return rc;
    }
    if (omitted != nullptr) *omitted = reply.omitted;
    // The callback runs without the lock, so it may call into this handle.
    for (const auto& e : reply.entries) {
      const atrace_live_entry entry{e.pid, e.uid, e.flags, e.rings, e.last_moved_unix_us, e.still_ms, e.timeout_ms,
                                    e.comm.c_str(), e.labels.job.c_str(), e.labels.rank.c_str(),
                                    e.labels.world_size.c_str()};
      if (int stop = fn(&entry, user)) return stop;
    }
    return 0;
  });
}

int atrace_client_aged_dumps(atrace_client* client, const char* job, atrace_aged_fn fn, void* user, uint32_t* omitted) {
  if (omitted != nullptr) *omitted = 0;
  if (client == nullptr || fn == nullptr) return -EINVAL;
  if (job != nullptr && !proto::CheckLabel(proto::LabelKind::kJob, job).empty()) return -EINVAL;
  return Guarded([&] {
    proto::AgedDumpsReply reply;
    {
      std::lock_guard<std::mutex> lock(client->mu);
      if (int rc = Ready(*client); rc != 0) return rc;
      if (!(client->conn->granted_features() & ATR_FEATURE_AGED_DUMPS)) return -ENOTSUP;
      proto::ListLive request;  // AGED_DUMPS' request is LIST_LIVE's
      if (job != nullptr) request.job = job;
      if (int rc = Query(*client, ATR_OP_AGED_DUMPS, request, &reply); rc != 0) return rc;
    }
    if (omitted != nullptr) *omitted = reply.omitted;
    // The callback runs without the lock, so it may call into this handle.
    for (const auto& e : reply.entries) {
      const atrace_aged_entry entry{e.aged_unix_us, e.uid, e.reason, e.flags, e.path.c_str(), e.labels.job.c_str(),
                                    e.labels.rank.c_str(), e.labels.world_size.c_str()};
      if (int stop = fn(&entry, user)) return stop;
    }
    return 0;
  });
}

int atrace_client_dumps_exported(atrace_client* client, const char* const* paths, size_t count, uint32_t* released,
                                 uint32_t* skipped) {
  if (released != nullptr) *released = 0;
  if (skipped != nullptr) *skipped = 0;
  if (client == nullptr || (count > 0 && paths == nullptr)) return -EINVAL;
  for (size_t i = 0; i < count; ++i) {
    if (paths[i] == nullptr || paths[i][0] == '\0' || paths[i][0] == '/') return -EINVAL;
  }
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(client->mu);
    if (int rc = Ready(*client); rc != 0) return rc;
    if (!(client->conn->granted_features() & ATR_FEATURE_DUMPS_EXPORTED)) return -ENOTSUP;
    // In requests of at most ATR_MAX_LIST_ENTRIES paths, each well under ATR_MAX_PAYLOAD.
    size_t i = 0;
    while (i < count) {
      proto::DumpsExported request;
      size_t bytes = sizeof(atr_dumps_exported);
      for (; i < count && request.paths.size() < ATR_MAX_LIST_ENTRIES; ++i) {
        const size_t len = std::strlen(paths[i]);
        if (len > UINT16_MAX) return -ENAMETOOLONG;
        if (!request.paths.empty() && bytes + 2 + len > ATR_MAX_PAYLOAD) break;
        bytes += 2 + len;
        request.paths.emplace_back(paths[i], len);
      }
      proto::DumpsExportedReply reply;
      if (int rc = Query(*client, ATR_OP_DUMPS_EXPORTED, request, &reply); rc != 0) return rc;
      if (released != nullptr) *released += reply.released;
      if (skipped != nullptr) *skipped += reply.skipped;
    }
    return 0;
  });
}

int atrace_client_devices(atrace_client* client, atrace_device_fn fn, void* user) {
  if (client == nullptr || fn == nullptr) return -EINVAL;
  return Guarded([&] {
    proto::StatusReply s;
    if (int rc = StatusOf(*client, &s); rc != 0) return rc;
    if (!s.devices.present) return -ENOTSUP;
    for (const auto& d : s.devices.devices) {
      atrace_device_stat line{d.device_id, d.events, d.received, d.saved, d.dropped_invalid, d.dropped_daemon,
                              d.reconnects};
      if (int stop = fn(&line, user)) return stop;
    }
    return 0;
  });
}

}  // extern "C"

int atrace_client_internal::SendDeviceStats(atrace_client& c, const proto::DeviceStats& delta) {
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(c.mu);
    int rc = Ready(c);
    if (rc != 0) return rc;
    if (!(c.conn->granted_features() & ATR_FEATURE_DEVICE_STATS)) return -ENOTSUP;
    std::vector<uint8_t> payload;
    proto::Encode(delta, payload);
    c.conn->Queue(ATR_OP_DEVICE_STATS, payload, 0);
    std::vector<Reply> replies;
    rc = Transact(c, &replies);
    return rc != 0 ? rc : FirstError(c, replies);
  });
}
