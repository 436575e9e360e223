#include "control_server.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "device_log.h"

namespace atraced::hal_double::device {
namespace {

constexpr size_t kMaxLine = 4096;

bool SendLine(int fd, const std::string& reply) {
  const std::string line = reply + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::send(fd, line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

struct QuitSignal {
  std::mutex mu;
  std::condition_variable cv;
  bool quit = false;
};

void Serve(int fd, Commands& commands, QuitSignal& quit) {
  std::string pending;
  char buf[1024];
  for (;;) {
    const size_t nl = pending.find('\n');
    if (nl == std::string::npos) {
      if (pending.size() > kMaxLine) break;  // not a command: drop the connection
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      pending.append(buf, static_cast<size_t>(n));
      continue;
    }
    std::string line = pending.substr(0, nl);
    pending.erase(0, nl + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    Say("control: %s", line.c_str());
    bool stop = false;
    const std::string reply = commands.Execute(line, &stop);
    const bool sent = SendLine(fd, reply);
    if (stop) {
      std::lock_guard lock(quit.mu);
      quit.quit = true;
      quit.cv.notify_all();
    }
    if (!sent) break;
  }
  ::close(fd);
}

}  // namespace

int ListenControl(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) return -1;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  ::unlink(path.c_str());
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void ServeControl(int listen_fd, Commands& commands) {
  // The acceptor runs detached; this thread waits for a quit from any connection.
  static QuitSignal quit;
  std::thread([listen_fd, &commands] {
    for (;;) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        Say("control accept failed: %s", std::strerror(errno));
        return;
      }
      std::thread([fd, &commands] { Serve(fd, commands, quit); }).detach();
    }
  }).detach();
  std::unique_lock lock(quit.mu);
  quit.cv.wait(lock, [] { return quit.quit; });
}

}  // namespace atraced::hal_double::device
