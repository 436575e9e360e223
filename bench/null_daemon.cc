// The null daemon's server loop (see null_daemon.h). Runs only in the forked child: every
// failure there is printed to stderr and ends the child, which the client then sees as a
// closed connection (and Fails on).
#include "null_daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bench_util.h"
#include "cann_baseline.h"

namespace atraced_bench {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "null daemon: %s: %s\n", what.c_str(), std::strerror(errno));
  ::_exit(1);
}

// The next pending connection of the non-blocking listener `lfd`, non-blocking itself; -1
// when none is pending.
int AcceptPending(int lfd) {
  for (;;) {
    const int fd = ::accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
    if (errno != EINTR && errno != ECONNABORTED) Die("accept4");
  }
}

constexpr size_t kInCap = sizeof(NullHeader) + kNullMaxPayload;

struct Conn {
  int fd = -1;
  // Uninitialised on purpose: an event connection only ever touches its first 4 KiB, so 64
  // connections do not cost 64 x 256 KiB of resident memory.
  std::unique_ptr<char[]> in{new char[kInCap]};
  size_t have = 0;
  std::string out;          // replies the socket did not take yet
  bool watching_out = false;
  uint64_t appended = 0;
  int append_error = 0;     // first failed append, reported with the next reply asked for
};

// One epoll loop. Single-threaded mode: it watches the listening socket and accepts itself
// (listen_fd >= 0). Worker mode (listen_fd < 0): the acceptor adds connections to this loop's
// epoll from another thread (epoll_ctl is safe for that), and the loop makes a connection's
// state when it first sees it ready; everything else is the same code.
class Server {
 public:
  Server(int listen_fd, const std::string& event_root, size_t record_num, int append_fd)
      : lfd_(listen_fd), append_fd_(append_fd), writer_(event_root, record_num) {
    struct stat st {};
    if (::stat(writer_.process_dir().c_str(), &st) != 0) Die("creating " + writer_.process_dir());
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) Die("epoll_create1");
    if (lfd_ >= 0) Watch(lfd_, EPOLLIN, EPOLL_CTL_ADD);
  }

  // Worker mode: called by the acceptor thread for a connection this loop is to serve.
  void Adopt(int fd) { Watch(fd, EPOLLIN, EPOLL_CTL_ADD); }

  [[noreturn]] void Run() {
    epoll_event evs[64];
    for (;;) {
      int n = ::epoll_wait(ep_, evs, 64, -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        Die("epoll_wait");
      }
      // Level-triggered: a connection with more queued is reported again on the next pass,
      // after the others, so each ready connection gets one read per pass (round-robin).
      for (int i = 0; i < n; ++i) {
        const int fd = evs[i].data.fd;
        if (lfd_ >= 0 && fd == lfd_) {
          Accept();
          continue;
        }
        auto it = conns_.find(fd);
        if (it == conns_.end()) {
          if (lfd_ >= 0) continue;
          // Worker mode: a connection the acceptor added (a closed one left this map, and
          // its epoll registration, before its number could be reused).
          auto c = std::make_unique<Conn>();
          c->fd = fd;
          it = conns_.emplace(fd, std::move(c)).first;
        }
        Conn& c = *it->second;
        bool ok = true;
        if (evs[i].events & EPOLLOUT) ok = Flush(c);
        if (ok && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) ok = OnReadable(c);
        if (!ok) {
          if (::close(fd) != 0) Die("close");
          conns_.erase(it);
        }
      }
    }
  }

 private:
  void Watch(int fd, uint32_t events, int op) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (::epoll_ctl(ep_, op, fd, &ev) != 0) Die("epoll_ctl");
  }

  void Accept() {
    for (int fd; (fd = AcceptPending(lfd_)) >= 0;) {
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      Watch(fd, EPOLLIN, EPOLL_CTL_ADD);
      conns_[fd] = std::move(c);
    }
  }

  // One read, then every whole request in the buffer. False: close the connection.
  bool OnReadable(Conn& c) {
    ssize_t r = ::read(c.fd, c.in.get() + c.have, kInCap - c.have);
    if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (r == 0) return false;  // the client closed
    c.have += static_cast<size_t>(r);
    size_t pos = 0;
    while (c.have - pos >= sizeof(NullHeader)) {
      NullHeader h;
      std::memcpy(&h, c.in.get() + pos, sizeof h);
      if (h.len > kNullMaxPayload) {
        std::fprintf(stderr, "null daemon: request of %u bytes, at most %u\n", h.len, kNullMaxPayload);
        return false;
      }
      if (c.have - pos - sizeof h < h.len) break;
      if (!Handle(c, h, c.in.get() + pos + sizeof h)) return false;
      pos += sizeof h + h.len;
    }
    std::memmove(c.in.get(), c.in.get() + pos, c.have - pos);
    c.have -= pos;
    return c.out.empty() || Flush(c);
  }

  bool Handle(Conn& c, const NullHeader& h, const char* payload) {
    const uint32_t kind = h.kind & ~kWantReply;
    switch (kind) {
      case kNullPing:
        Reply(c, kind, 0, 0);
        return true;
      case kNullEvent: {
        int rc = writer_.Emit(payload, h.len);
        if (rc == 0) ++events_;
        Reply(c, kind, rc, events_);
        return true;
      }
      case kNullAppend:
        if (!WriteFull(append_fd_, payload, h.len) && c.append_error == 0) c.append_error = errno ? -errno : -EIO;
        c.appended += h.len;
        if (h.kind & kWantReply) {
          Reply(c, kind, c.append_error, c.appended);
          c.append_error = 0;
        }
        return true;
      default:
        std::fprintf(stderr, "null daemon: unknown request kind %u\n", h.kind);
        return false;
    }
  }

  static void Reply(Conn& c, uint32_t kind, int status, uint64_t value) {
    const NullReply r{kind, status, value};
    c.out.append(reinterpret_cast<const char*>(&r), sizeof r);
  }

  // Writes what the socket takes; watches for EPOLLOUT only while something is left.
  bool Flush(Conn& c) {
    while (!c.out.empty()) {
      ssize_t w = ::write(c.fd, c.out.data(), c.out.size());
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
        if (!c.watching_out) Watch(c.fd, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
        c.watching_out = true;
        return true;
      }
      c.out.erase(0, static_cast<size_t>(w));
    }
    if (c.watching_out) Watch(c.fd, EPOLLIN, EPOLL_CTL_MOD);
    c.watching_out = false;
    return true;
  }

  int lfd_;
  int ep_ = -1;
  int append_fd_ = -1;
  CannWriter writer_;
  uint64_t events_ = 0;
  std::unordered_map<int, std::unique_ptr<Conn>> conns_;
};

std::string WorkerRoot(const std::string& event_root, int k) { return event_root + "/w" + std::to_string(k); }

// The multi-threaded server: `threads` workers, each a Server in worker mode on its own
// thread, and this thread accepting and dealing the connections out in turn.
[[noreturn]] void RunWorkers(int lfd, const NullDaemon::Options& o, int append_fd) {
  std::vector<std::unique_ptr<Server>> servers;
  for (int k = 0; k < o.threads; ++k) {
    const std::string root = WorkerRoot(o.event_root, k);
    if (!MakeDirs(root)) Die("mkdir " + root);
    servers.push_back(std::make_unique<Server>(-1, root, o.record_num, append_fd));
  }
  std::vector<std::thread> threads;
  for (auto& s : servers) threads.emplace_back([srv = s.get()] { srv->Run(); });
  size_t next = 0;
  for (;;) {
    pollfd pfd{lfd, POLLIN, 0};
    if (::poll(&pfd, 1, -1) < 0) {
      if (errno == EINTR) continue;
      Die("poll");
    }
    for (int fd; (fd = AcceptPending(lfd)) >= 0;) servers[next++ % servers.size()]->Adopt(fd);
  }
}

}  // namespace

std::vector<std::string> NullDaemon::event_roots() const {
  if (options_.threads <= 0) return {options_.event_root};
  std::vector<std::string> roots;
  for (int k = 0; k < options_.threads; ++k) roots.push_back(WorkerRoot(options_.event_root, k));
  return roots;
}

NullDaemon::NullDaemon(const Options& options) : options_(options) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (options.socket.size() >= sizeof addr.sun_path) Fail("null daemon: socket path too long: " + options.socket);
  std::memcpy(addr.sun_path, options.socket.c_str(), options.socket.size() + 1);
  if (!MakeDirs(options.event_root)) Fail("mkdir " + options.event_root + ": " + std::strerror(errno));
  if (::unlink(options.socket.c_str()) != 0 && errno != ENOENT) Fail("unlink " + options.socket + ": " + std::strerror(errno));
  int lfd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (lfd < 0) Fail(std::string("socket: ") + std::strerror(errno));
  if (::bind(lfd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(lfd, 512) != 0) {
    int err = errno;
    ::close(lfd);
    Fail("null daemon: listen on " + options.socket + ": " + std::strerror(err));
  }
  const pid_t parent = ::getpid();
  std::fflush(nullptr);  // the child must not flush the harness's buffered output again
  pid_ = ::fork();
  if (pid_ < 0) {
    int err = errno;
    ::close(lfd);
    Fail(std::string("fork: ") + std::strerror(err));
  }
  if (pid_ == 0) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) Die("prctl");
    if (::getppid() != parent) ::_exit(1);
    try {
      const int append_fd = ::open(options_.append_file.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_APPEND | O_CLOEXEC, 0640);
      if (append_fd < 0) Die("open " + options_.append_file);
      if (options_.threads <= 0) {
        Server server(lfd, options_.event_root, options_.record_num, append_fd);
        server.Run();
      }
      RunWorkers(lfd, options_, append_fd);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "null daemon: %s\n", e.what());
    }
    ::_exit(1);
  }
  if (::close(lfd) != 0) Fail(std::string("close: ") + std::strerror(errno));
}

NullDaemon::~NullDaemon() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

}  // namespace atraced_bench
