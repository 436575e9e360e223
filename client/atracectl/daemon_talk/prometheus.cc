#include "daemon_talk/prometheus.h"

#include <sstream>
#include <utility>
#include <vector>

namespace atracectl {
namespace {

using Samples = std::vector<std::pair<std::string, uint64_t>>;  // labels ("" or {k="v"}), value

class Exposition {
 public:
  void Family(const char* name, const char* type, const char* help, const Samples& samples) {
    out_ << "# HELP " << name << ' ' << help << '\n' << "# TYPE " << name << ' ' << type << '\n';
    for (const auto& [labels, value] : samples) out_ << name << labels << ' ' << value << '\n';
  }
  void Gauge(const char* name, const char* help, uint64_t value) { Family(name, "gauge", help, {{"", value}}); }
  void Counter(const char* name, const char* help, uint64_t value) { Family(name, "counter", help, {{"", value}}); }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

std::string Label(const char* key, const char* value) { return std::string("{") + key + "=\"" + value + "\"}"; }

// One sample per class, the label every per-class family carries.
Samples ByClass(uint64_t host, uint64_t device, uint64_t exit) {
  return {{Label("class", "host"), host}, {Label("class", "device"), device}, {Label("class", "exit"), exit}};
}

}  // namespace

std::string PrometheusText(const atrace_status& s, const std::vector<atrace::Share>& shares,
                           const std::vector<atrace_device_stat>& devices) {
  Exposition e;
  e.Family("atraced_event_dirs", "gauge", "Event directories the daemon counts, by class.",
           ByClass(s.host_dirs, s.device_dirs, s.exit_dirs));
  e.Family("atraced_event_dirs_limit", "gauge", "Event directories kept per class (record-num, exit-record-num).",
           ByClass(s.record_num, s.record_num, s.exit_record_num));
  e.Gauge("atraced_clients", "Connections served now.", s.clients);
  e.Counter("atraced_events_created_total", "Event directories created.", s.events_begun);
  e.Counter("atraced_written_bytes_total", "Bytes written into event files (allocated blocks).", s.bytes_written);
  e.Counter("atraced_written_apparent_bytes_total", "Growth of event files by length, holes included.",
            s.bytes_apparent);
  e.Counter("atraced_requests_refused_total", "Requests refused, for any reason.", s.requests_refused);
  e.Counter("atraced_removal_failures_total", "Deletes of aged directories that failed (each is retried).",
            s.removal_failures);
  if (s.incomplete_known) {
    e.Gauge("atraced_incomplete_dirs", "Event directories holding a save that was cut short (a crash or a stop).",
            s.incomplete_dirs);
  }
  if (s.dumps_known) {
    e.Gauge("atraced_dumps_kept", "Dump directories dump-keep spares from record-num aging now (not exported yet).",
            s.dumps_kept);
    e.Counter("atraced_dumps_aged_early_total",
              "Dump directories the byte budget or keep-free aged before dump-keep ran out or they were exported.",
              s.dumps_aged_early);
  }
  if (s.retention_known) {
    e.Family("atraced_used_bytes", "gauge", "Bytes (allocated) held by the counted event directories, by class.",
             ByClass(s.used_host, s.used_device, s.used_exit));
    e.Gauge("atraced_max_use_bytes", "The byte budget of the trace root (max-use).", s.max_use);
    e.Gauge("atraced_keep_free_bytes", "Free space kept on the root's file system (keep-free).", s.keep_free);
    e.Gauge("atraced_fs_free_bytes", "The daemon's estimate of the free space on the root's file system.", s.fs_free);
    e.Gauge("atraced_max_age_seconds", "Event directories older than this are aged; 0: off.", s.max_age_s);
    e.Family("atraced_dirs_aged_total", "counter", "Event directories aged, by the limit that asked.",
             {{Label("reason", "count"), s.aged_count}, {Label("reason", "bytes"), s.aged_max_use},
              {Label("reason", "keep-free"), s.aged_keep_free}, {Label("reason", "age"), s.aged_max_age},
              {Label("reason", "vacuum"), s.aged_vacuum}});
    e.Counter("atraced_freed_bytes_total", "Bytes (allocated) of the directories aged.", s.bytes_freed);
    e.Family("atraced_refusals_total", "counter", "Requests refused by a retention limit, by limit.",
             {{Label("reason", "max-use"), s.refused_max_use}, {Label("reason", "keep-free"), s.refused_keep_free},
              {Label("reason", "rate-limit"), s.refused_rate_limit},
              {Label("reason", "max-bytes-per-client"), s.refused_client_bytes}});
  } else {
    e.Counter("atraced_dirs_aged_total", "Event directories aged.", s.dirs_aged);
  }
  if (!shares.empty()) {
    Samples limit, held, per_uid, uid_held;
    for (const atrace::Share& sh : shares) {
      const std::string pool = Label("pool", sh.pool.c_str());
      if (sh.uid == ATRACE_SHARE_TOTAL) {
        limit.emplace_back(pool, sh.limit);
        held.emplace_back(pool, sh.held);
        per_uid.emplace_back(pool, sh.uid_share);
      } else {
        uid_held.emplace_back("{pool=\"" + sh.pool + "\",uid=\"" + std::to_string(sh.uid) + "\"}", sh.held);
      }
    }
    e.Family("atraced_pool_limit", "gauge", "What a pool shared between users holds at most, by pool.", limit);
    e.Family("atraced_pool_held", "gauge", "What a shared pool holds now, by pool.", held);
    e.Family("atraced_pool_uid_share", "gauge", "What one uid may hold of a shared pool, by pool.", per_uid);
    e.Family("atraced_pool_uid_held", "gauge", "What a uid holds of a shared pool, its largest holders, by pool and uid.",
             uid_held);
  }
  if (!devices.empty()) {
    Samples events, received, saved, dropped, reconnects;
    for (const atrace_device_stat& d : devices) {
      const std::string id = std::to_string(d.device_id);
      const std::string device = "{device=\"" + id + "\"}";
      events.emplace_back(device, d.events);
      received.emplace_back(device, d.received);
      saved.emplace_back(device, d.saved);
      dropped.emplace_back("{device=\"" + id + "\",reason=\"invalid\"}", d.dropped_invalid);
      dropped.emplace_back("{device=\"" + id + "\",reason=\"daemon\"}", d.dropped_daemon);
      reconnects.emplace_back(device, d.reconnects);
    }
    e.Family("atraced_device_events_total", "counter", "Device-side event directories begun, by device.", events);
    e.Family("atraced_device_messages_received_total", "counter",
             "Trace messages applications received from the device and found well formed, by device.", received);
    e.Family("atraced_device_messages_saved_total", "counter", "Of those, written through the daemon, by device.", saved);
    e.Family("atraced_device_messages_dropped_total", "counter",
             "Trace messages dropped, by device and reason (invalid: the device's bytes failed a check; daemon: the "
             "daemon was away or refused).",
             dropped);
    e.Family("atraced_device_reconnects_total", "counter",
             "Trace links applications opened again after the device closed one, by device.", reconnects);
  }
  return e.str();
}

}  // namespace atracectl
