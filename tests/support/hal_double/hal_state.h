// The double's internal state: what it reads from the environment, and the registries
// that turn the opaque handles the API hands out (HDC_CLIENT, HDC_SESSION, HDC_SERVER,
// drvHdcMsg*) back into objects. Every call looks its handle up, so a stale or foreign
// handle is an error code instead of a crash, and a session closed by one thread stays
// alive (shared_ptr) for another thread still inside halHdcRecv on it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ascend_hal_double.h"

namespace atraced::hal_double::drv {

// The environment, read at every call (tests change it between cases; nothing is cached).
std::string SocketDir();           // ATRACE_HAL_DOUBLE_DIR, empty = no device
uint32_t Platform();               // ATRACE_HAL_DOUBLE_PLATFORM, default 1 (host side)
uint32_t MaxSegment();             // ATRACE_HAL_DOUBLE_MAX_SEGMENT, default 524288
// The socket a device's server of one service type listens on.
std::string SocketPath(const std::string& dir, int devid, int service_type);

// A stderr line per call when ATRACE_HAL_DOUBLE_LOG=1.
void Log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Logs "name(...) -> rc" and returns rc, so every exit of an API function is one line.
drvError_t Ret(const char* name, drvError_t rc);

struct Client {
  int service_type = 0;
  int max_sessions = 0;
  std::atomic<int> open_sessions{0};  // drvHdcClientDestroy refuses while > 0 (CLIENT_BUSY)
};

struct Session {
  explicit Session(int f) : fd(f) {}
  ~Session();  // closes fd: only when the last user is gone
  const int fd;  // non-blocking; every wait is a poll
  int dev_id = 0;
  pid_t local_pid = 0;
  pid_t peer_pid = 0;  // SO_PEERCRED of the connection: the process that connected/accepted
  std::shared_ptr<Client> client;  // null on the device (accepted) side
  std::mutex send_mu;  // one message at a time per direction: frames never interleave
  std::mutex recv_mu;
  std::atomic<bool> closed{false};  // drvHdcSessionClose ran, or a message broke off mid-frame
};

struct Server {
  explicit Server(int f) : fd(f) {}
  ~Server();
  const int fd;
  int dev_id = 0;
  std::string path;
  std::atomic<bool> closing{false};
};

// A message head from drvHdcAllocMsg: the caller-visible drvHdcMsg plus whether the double
// allocated bufList[0] (halHdcRecv) and must free it.
struct MsgState {
  ~MsgState();
  drvHdcMsg* head = nullptr;
  bool driver_owned = false;
};

template <typename T>
class Registry {
 public:
  // The handle is the object's address unless given (a message head is known by its drvHdcMsg*).
  void* Add(std::shared_ptr<T> object, void* handle = nullptr) {
    std::lock_guard lock(mu_);
    if (handle == nullptr) handle = object.get();
    map_[handle] = std::move(object);
    return handle;
  }
  std::shared_ptr<T> Find(const void* handle) {
    std::lock_guard lock(mu_);
    auto it = map_.find(handle);
    return it == map_.end() ? nullptr : it->second;
  }
  std::shared_ptr<T> Remove(const void* handle) {
    std::lock_guard lock(mu_);
    auto it = map_.find(handle);
    if (it == map_.end()) return nullptr;
    auto object = std::move(it->second);
    map_.erase(it);
    return object;
  }

 private:
  std::mutex mu_;
  std::unordered_map<const void*, std::shared_ptr<T>> map_;
};

// Process-wide, never destroyed (a thread may still call in while the process exits).
Registry<Client>& Clients();
Registry<Session>& Sessions();
Registry<Server>& Servers();
Registry<MsgState>& Msgs();

}  // namespace atraced::hal_double::drv
