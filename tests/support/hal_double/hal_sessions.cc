// Clients, servers and sessions. A session is one connection on a Unix stream socket named
// for (device id, service type) in $ATRACE_HAL_DOUBLE_DIR (hal_io.cc frames messages on
// it). The peer's pid comes from SO_PEERCRED, as the kernel driver reports the process that
// created the other end; drvHdcSetSessionReference needs no work because the kernel closes
// a dead process's sockets, which is what the reference is for.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "hal_export.h"
#include "hal_state.h"

using namespace atraced::hal_double::drv;

namespace {

constexpr int kMaxDeviceId = 1024;  // HOST_MAX_DEV_NUM
constexpr auto kConnectPatience = std::chrono::seconds(3);  // a full backlog is "busy", not a hang

bool FillAddress(const std::string& path, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  if (path.size() >= sizeof addr->sun_path) return false;
  std::memcpy(addr->sun_path, path.data(), path.size());
  return true;
}

pid_t PeerPid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : 0;
}

}  // namespace

extern "C" {

drvError_t drvHdcClientCreate(HDC_CLIENT* client, int maxSessionNum, int serviceType, int flag) {
  Log("drvHdcClientCreate(max=%d, service=%d, flag=%d)", maxSessionNum, serviceType, flag);
  if (client == nullptr || maxSessionNum <= 0 || serviceType < 0) return Ret("drvHdcClientCreate", DRV_ERROR_INVALID_VALUE);
  auto state = std::make_shared<Client>();
  state->service_type = serviceType;
  state->max_sessions = maxSessionNum;
  *client = Clients().Add(std::move(state));
  return Ret("drvHdcClientCreate", DRV_ERROR_NONE);
}

drvError_t drvHdcClientDestroy(HDC_CLIENT client) {
  auto state = Clients().Find(client);
  if (!state) return Ret("drvHdcClientDestroy", DRV_ERROR_INVALID_VALUE);
  // The real driver refuses while a session of the client is open (hdc_client.c).
  if (state->open_sessions.load() > 0) return Ret("drvHdcClientDestroy", DRV_ERROR_CLIENT_BUSY);
  Clients().Remove(client);
  return Ret("drvHdcClientDestroy", DRV_ERROR_NONE);
}

drvError_t drvHdcSessionConnect(int peer_node, int peer_devid, HDC_CLIENT client, HDC_SESSION* session) {
  Log("drvHdcSessionConnect(node=%d, devid=%d)", peer_node, peer_devid);
  auto owner = Clients().Find(client);
  if (!owner || session == nullptr || peer_node != 0) return Ret("drvHdcSessionConnect", DRV_ERROR_INVALID_VALUE);
  if (peer_devid < 0 || peer_devid >= kMaxDeviceId) return Ret("drvHdcSessionConnect", DRV_ERROR_INVALID_DEVICE);
  const std::string dir = SocketDir();
  if (dir.empty()) return Ret("drvHdcSessionConnect", DRV_ERROR_NO_DEVICE);
  if (owner->open_sessions.load() >= owner->max_sessions) return Ret("drvHdcSessionConnect", DRV_ERROR_OVER_LIMIT);
  sockaddr_un addr{};
  if (!FillAddress(SocketPath(dir, peer_devid, owner->service_type), &addr)) {
    return Ret("drvHdcSessionConnect", DRV_ERROR_PARA_ERROR);
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Ret("drvHdcSessionConnect", DRV_ERROR_SOCKET_CREATE);
  auto state = std::make_shared<Session>(fd);  // owns fd from here
  // A non-blocking Unix connect completes at once or fails with EAGAIN when the server's
  // backlog is full: retry for a while, then report a busy device.
  const auto deadline = std::chrono::steady_clock::now() + kConnectPatience;
  while (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno == EINTR) continue;
    if (errno == EAGAIN && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    // No socket file, or a file nobody listens on: the peer is not there. The real driver
    // answers DRV_ERROR_SOCKET_CONNECT in its socket mode (REMOTE_NOT_LISTEN over PCIe).
    Log("connect %s: %s", addr.sun_path, std::strerror(errno));
    return Ret("drvHdcSessionConnect", errno == EAGAIN ? DRV_ERROR_DEVICE_NOT_READY : DRV_ERROR_SOCKET_CONNECT);
  }
  state->dev_id = peer_devid;
  state->local_pid = ::getpid();
  state->peer_pid = PeerPid(fd);
  state->client = owner;
  owner->open_sessions.fetch_add(1);
  *session = Sessions().Add(std::move(state));
  return Ret("drvHdcSessionConnect", DRV_ERROR_NONE);
}

drvError_t drvHdcSetSessionReference(HDC_SESSION session) {
  return Ret("drvHdcSetSessionReference", Sessions().Find(session) ? DRV_ERROR_NONE : DRV_ERROR_INVALID_VALUE);
}

drvError_t drvHdcSessionClose(HDC_SESSION session) {
  auto state = Sessions().Remove(session);
  if (!state) return Ret("drvHdcSessionClose", DRV_ERROR_INVALID_VALUE);
  state->closed = true;
  // shutdown, not close: a thread blocked in halHdcRecv on this session wakes up (EOF →
  // SOCKET_CLOSE), and the peer sees the session end now. The descriptor itself is closed
  // when the last thread using the session lets go of it.
  ::shutdown(state->fd, SHUT_RDWR);
  if (state->client) state->client->open_sessions.fetch_sub(1);
  return Ret("drvHdcSessionClose", DRV_ERROR_NONE);
}

drvError_t drvHdcServerCreate(int devid, int serviceType, HDC_SERVER* pServer) {
  Log("drvHdcServerCreate(devid=%d, service=%d)", devid, serviceType);
  if (pServer == nullptr || devid < 0 || devid >= kMaxDeviceId) return Ret("drvHdcServerCreate", DRV_ERROR_INVALID_VALUE);
  const std::string dir = SocketDir();
  if (dir.empty()) return Ret("drvHdcServerCreate", DRV_ERROR_NO_DEVICE);
  const std::string path = SocketPath(dir, devid, serviceType);
  sockaddr_un addr{};
  if (!FillAddress(path, &addr)) return Ret("drvHdcServerCreate", DRV_ERROR_PARA_ERROR);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Ret("drvHdcServerCreate", DRV_ERROR_SOCKET_CREATE);
  auto state = std::make_shared<Server>(fd);
  ::unlink(path.c_str());  // a stale socket of a device that died (a restart takes its place)
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 128) != 0) {
    Log("bind/listen %s: %s", path.c_str(), std::strerror(errno));
    return Ret("drvHdcServerCreate", DRV_ERROR_SOCKET_CREATE);
  }
  state->dev_id = devid;
  state->path = path;
  *pServer = Servers().Add(std::move(state));
  return Ret("drvHdcServerCreate", DRV_ERROR_NONE);
}

drvError_t drvHdcServerDestroy(HDC_SERVER server) {
  auto state = Servers().Remove(server);
  if (!state) return Ret("drvHdcServerDestroy", DRV_ERROR_INVALID_VALUE);
  state->closing = true;  // an accept in progress sees it within its poll interval
  ::unlink(state->path.c_str());
  return Ret("drvHdcServerDestroy", DRV_ERROR_NONE);
}

drvError_t drvHdcSessionAccept(HDC_SERVER server, HDC_SESSION* session) {
  auto state = Servers().Find(server);
  if (!state || session == nullptr) return Ret("drvHdcSessionAccept", DRV_ERROR_INVALID_VALUE);
  for (;;) {
    if (state->closing) return Ret("drvHdcSessionAccept", DRV_ERROR_SOCKET_CLOSE);
    pollfd p{state->fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int fd = ::accept4(state->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) continue;
      return Ret("drvHdcSessionAccept", DRV_ERROR_SOCKET_CLOSE);
    }
    auto accepted = std::make_shared<Session>(fd);
    accepted->dev_id = state->dev_id;
    accepted->local_pid = ::getpid();
    accepted->peer_pid = PeerPid(fd);
    *session = Sessions().Add(std::move(accepted));
    Log("drvHdcSessionAccept: peer pid %d", static_cast<int>(PeerPid(fd)));
    return Ret("drvHdcSessionAccept", DRV_ERROR_NONE);
  }
}

hdcError_t halHdcGetSessionAttr(HDC_SESSION session, int attr, int* value) {
  auto state = Sessions().Find(session);
  if (!state || value == nullptr) return Ret("halHdcGetSessionAttr", DRV_ERROR_INVALID_VALUE);
  switch (attr) {
    case HDC_SESSION_ATTR_DEV_ID:
      *value = state->dev_id;
      break;
    case HDC_SESSION_ATTR_LOCAL_CREATE_PID:
      *value = static_cast<int>(state->local_pid);
      break;
    case HDC_SESSION_ATTR_PEER_CREATE_PID:
      *value = static_cast<int>(state->peer_pid);
      break;
    case HDC_SESSION_ATTR_STATUS: {
      // As the driver's socket mode does: peek at the socket. A peer that closed (or died)
      // shows as hang-up even while unread data is still queued.
      pollfd p{state->fd, POLLIN | POLLRDHUP, 0};
      const bool gone = state->closed || (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0);
      *value = gone ? HDC_SESSION_STATUS_CLOSE : HDC_SESSION_STATUS_CONNECT;
      break;
    }
    default:  // UID, RUN_ENV, VFID, DFX: nothing the trace path needs
      return Ret("halHdcGetSessionAttr", DRV_ERROR_NOT_SUPPORT);
  }
  Log("halHdcGetSessionAttr(attr=%d): %d", attr, *value);
  return Ret("halHdcGetSessionAttr", DRV_ERROR_NONE);
}

}  // extern "C"
