// Header-only C++ wrapper over the C ABI in atrace_client.h: RAII handles and
// std::error_code (generic_category, so `ec == std::errc::timed_out` works). It adds no
// behaviour; the C header documents timeouts, reconnects, fork and threads. C++17.
#ifndef ATRACED_ATRACE_CLIENT_HPP_
#define ATRACED_ATRACE_CLIENT_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "atraced/atrace_client.h"

namespace atrace {

inline std::error_code MakeError(int rc) {
  return rc < 0 ? std::error_code(-rc, std::generic_category()) : std::error_code();
}

struct EventSpec {
  int kind = ATRACE_EVENT_SCHEDULE;
  int side = ATRACE_SIDE_HOST;
  uint32_t device_id = 0;
  std::string time;  // "" = the daemon's clock

  // The C view borrows `time`; keep this object alive while it is used.
  atrace_event_spec c() const { return {kind, side, device_id, time.empty() ? nullptr : time.c_str()}; }
};

struct FileSpec {
  int form = ATRACE_FILE_OBJECT;
  std::string name;
  bool binary = false;
  uint32_t device_id = 0;
  int signo = 0;
  int tid = 0;
  std::string time;

  static FileSpec Object(std::string object, bool bin = false) {
    FileSpec f;
    f.name = std::move(object);
    f.binary = bin;
    return f;
  }
  atrace_file_spec c() const {
    return {form, name.c_str(), binary ? 1 : 0, device_id, signo, tid, time.empty() ? nullptr : time.c_str()};
  }
};

struct Share {
  std::string pool;  // see atrace_share
  uint32_t uid = ATRACE_SHARE_TOTAL;
  uint64_t held = 0;
  uint64_t limit = 0;
  uint64_t uid_share = 0;
};

struct ListEntry {
  uint64_t seq = 0;
  int kind = 0;
  int side = 0;
  uint32_t device_id = 0;
  int32_t pid = 0;
  uint32_t uid = 0;
  uint64_t bytes = 0;
  uint64_t created_unix_us = 0;
  std::string path;  // relative to <root>/atrace
  uint64_t apparent_bytes = 0;
  std::string comm;  // the program that made it; "" unknown
  uint32_t flags = 0;  // ATRACE_LIST_*
  std::string job, rank, world_size;  // the process's labels; "" not sent
};

class File {
 public:
  File() = default;
  explicit File(atrace_file* f) : f_(f) {}
  File(File&& o) noexcept : f_(std::exchange(o.f_, nullptr)) {}
  File& operator=(File&& o) noexcept {
    if (this != &o) {
      Close();
      f_ = std::exchange(o.f_, nullptr);
    }
    return *this;
  }
  ~File() { Close(); }

  explicit operator bool() const { return f_ != nullptr; }
  std::string path() const { return atrace_file_path(f_); }
  std::error_code Write(std::string_view data) { return MakeError(atrace_file_write(f_, data.data(), data.size())); }
  // The descriptor stays owned by this File.
  std::error_code GetFd(int* fd) { return MakeError(atrace_file_get_fd(f_, fd)); }
  std::error_code Close(uint64_t* size = nullptr) {
    if (f_ == nullptr) return {};
    return MakeError(atrace_file_close(std::exchange(f_, nullptr), size));
  }

 private:
  atrace_file* f_ = nullptr;
};

class Event {
 public:
  Event() = default;
  explicit Event(atrace_event* e) : e_(e) {}
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      End();
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  ~Event() { End(); }

  explicit operator bool() const { return e_ != nullptr; }
  std::string path() const { return atrace_event_path(e_); }
  File Open(const FileSpec& spec, std::error_code& ec) {
    atrace_file* f = nullptr;
    atrace_file_spec s = spec.c();
    ec = MakeError(atrace_file_open(e_, &s, &f));
    return File(f);
  }
  std::error_code End(uint64_t* bytes = nullptr) {
    if (e_ == nullptr) return {};
    return MakeError(atrace_event_end(std::exchange(e_, nullptr), bytes));
  }

 private:
  atrace_event* e_ = nullptr;
};

class Client {
 public:
  struct Options {
    std::string socket_path;  // "" = $ATRACED_SOCKET, then the default paths
    int connect_timeout_ms = ATRACE_DEFAULT_CONNECT_TIMEOUT_MS;
    int io_timeout_ms = ATRACE_DEFAULT_IO_TIMEOUT_MS;
    unsigned max_in_flight = ATRACE_DEFAULT_MAX_IN_FLIGHT;
    unsigned flags = 0;
  };

  Client() = default;
  static Client Open(const Options& options, std::error_code& ec) {
    atrace_client_options o;
    atrace_client_options_init(&o);
    o.socket_path = options.socket_path.empty() ? nullptr : options.socket_path.c_str();
    o.connect_timeout_ms = options.connect_timeout_ms;
    o.io_timeout_ms = options.io_timeout_ms;
    o.max_in_flight = options.max_in_flight;
    o.flags = options.flags;
    atrace_client* c = nullptr;
    ec = MakeError(atrace_client_open(&o, &c));
    return Client(c);
  }

  explicit operator bool() const { return c_ != nullptr; }
  atrace_client* get() const { return c_.get(); }
  // The daemon's explanation of the last refused request.
  std::string last_message() const { return atrace_client_last_message(c_.get()); }

  std::error_code Emit(const EventSpec& event, const FileSpec& file, std::string_view data,
                       std::string* path = nullptr, unsigned flags = 0) {
    atrace_event_spec e = event.c();
    atrace_file_spec f = file.c();
    std::string buf(ATRACE_PATH_MAX, '\0');
    int rc = atrace_emit(c_.get(), &e, &f, data.data(), data.size(), flags, &buf[0], buf.size());
    if (path != nullptr) *path = buf.c_str();
    return MakeError(rc);
  }
  std::error_code EmitAsync(const EventSpec& event, const FileSpec& file, std::string_view data) {
    atrace_event_spec e = event.c();
    atrace_file_spec f = file.c();
    return MakeError(atrace_emit_async(c_.get(), &e, &f, data.data(), data.size()));
  }
  std::error_code Flush() { return MakeError(atrace_client_flush(c_.get())); }

  Event Begin(const EventSpec& spec, std::error_code& ec) {
    atrace_event* e = nullptr;
    atrace_event_spec s = spec.c();
    ec = MakeError(atrace_event_begin(c_.get(), &s, &e));
    return Event(e);
  }

  std::error_code Status(atrace_status* out) { return MakeError(atrace_client_status_ex(c_.get(), out, sizeof *out)); }

  std::error_code List(std::vector<ListEntry>* out) {
    out->clear();
    return MakeError(atrace_client_list(
        c_.get(),
        [](const atrace_list_entry* e, void* user) {
          auto* v = static_cast<std::vector<ListEntry>*>(user);
          v->push_back(ListEntry{e->seq, e->kind, e->side, e->device_id, e->pid, e->uid, e->bytes,
                                 e->created_unix_us, e->path, e->apparent_bytes, e->comm, e->flags,
                                 e->job,  e->rank,           e->world_size});
          return 0;
        },
        out));
  }

  std::error_code Shares(std::vector<Share>* out) {
    out->clear();
    return MakeError(atrace_client_shares(
        c_.get(),
        [](const atrace_share* s, void* user) {
          static_cast<std::vector<Share>*>(user)->push_back(Share{s->pool, s->uid, s->held, s->limit, s->uid_share});
          return 0;
        },
        out));
  }

  std::error_code Devices(std::vector<atrace_device_stat>* out) {
    out->clear();
    return MakeError(atrace_client_devices(
        c_.get(),
        [](const atrace_device_stat* d, void* user) {
          static_cast<std::vector<atrace_device_stat>*>(user)->push_back(*d);
          return 0;
        },
        out));
  }

  std::error_code Vacuum(bool dry_run, std::vector<std::string>* removed) {
    removed->clear();
    return MakeError(atrace_client_vacuum(
        c_.get(), dry_run ? 1 : 0,
        [](const char* path, void* user) {
          static_cast<std::vector<std::string>*>(user)->emplace_back(path);
          return 0;
        },
        removed));
  }

  // journalctl's verbs (atrace_client_vacuum_by).
  std::error_code VacuumBy(const atrace_vacuum_spec& spec, std::vector<std::string>* removed,
                           atrace_vacuum_result* result) {
    removed->clear();
    return MakeError(atrace_client_vacuum_by(
        c_.get(), &spec,
        [](const char* path, void* user) {
          static_cast<std::vector<std::string>*>(user)->emplace_back(path);
          return 0;
        },
        removed, result));
  }

  // Live processes saved from outside (atrace_client_dump_processes).
  struct DumpEntry {
    int32_t pid = 0;
    int status = 0;
    uint32_t threads = 0, rings = 0, max_stop_us = 0;
    std::string text;  // the directory, or the reason
  };
  std::error_code DumpProcesses(const atrace_dump_spec& spec, std::vector<DumpEntry>* entries, uint32_t* omitted) {
    entries->clear();
    return MakeError(atrace_client_dump_processes(
        c_.get(), &spec,
        [](const atrace_dump_entry* e, void* user) {
          static_cast<std::vector<DumpEntry>*>(user)->push_back(
              {e->pid, e->status, e->threads, e->rings, e->max_stop_us, e->text});
          return 0;
        },
        entries, omitted));
  }

  // The live processes the daemon holds rings for (atrace_client_list_live).
  struct LiveEntry {
    int32_t pid = 0;
    uint32_t uid = 0, flags = 0, rings = 0;
    uint64_t last_moved_unix_us = 0, still_ms = 0, timeout_ms = 0;
    std::string comm, job, rank, world_size;
  };
  std::error_code ListLive(const std::string& job, std::vector<LiveEntry>* entries, uint32_t* omitted) {
    entries->clear();
    return MakeError(atrace_client_list_live(
        c_.get(), job.c_str(),
        [](const atrace_live_entry* e, void* user) {
          static_cast<std::vector<LiveEntry>*>(user)->push_back({e->pid, e->uid, e->flags, e->rings,
                                                                 e->last_moved_unix_us, e->still_ms, e->timeout_ms,
                                                                 e->comm, e->job, e->rank, e->world_size});
          return 0;
        },
        entries, omitted));
  }
  // The dump directories aging removed (atrace_client_aged_dumps).
  struct AgedEntry {
    uint64_t aged_unix_us = 0;
    uint32_t uid = 0, reason = 0, flags = 0;
    std::string path, job, rank, world_size;
  };
  std::error_code AgedDumps(const std::string& job, std::vector<AgedEntry>* entries, uint32_t* omitted) {
    entries->clear();
    return MakeError(atrace_client_aged_dumps(
        c_.get(), job.c_str(),
        [](const atrace_aged_entry* e, void* user) {
          static_cast<std::vector<AgedEntry>*>(user)->push_back(
              {e->aged_unix_us, e->uid, e->reason, e->flags, e->path, e->job, e->rank, e->world_size});
          return 0;
        },
        entries, omitted));
  }
  // A bundle holds these dump directories (atrace_client_dumps_exported).
  std::error_code DumpsExported(const std::vector<std::string>& paths, uint32_t* released, uint32_t* skipped) {
    std::vector<const char*> c_paths;
    c_paths.reserve(paths.size());
    for (const std::string& p : paths) c_paths.push_back(p.c_str());
    return MakeError(atrace_client_dumps_exported(c_.get(), c_paths.data(), c_paths.size(), released, skipped));
  }

  atrace_client_stats Stats() const {
    atrace_client_stats s{};
    atrace_client_get_stats(c_.get(), &s);
    return s;
  }

 private:
  struct Closer {
    void operator()(atrace_client* c) const { atrace_client_close(c); }
  };
  explicit Client(atrace_client* c) : c_(c) {}
  std::unique_ptr<atrace_client, Closer> c_;
};

}  // namespace atrace

#endif  // ATRACED_ATRACE_CLIENT_HPP_
