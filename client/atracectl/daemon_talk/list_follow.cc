#include "daemon_talk/list_follow.h"

#include <dirent.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <set>
#include <vector>

#include "atraced/base/unique_fd.h"
#include "common/command_line.h"
#include "daemon_talk/connect.h"

namespace atracectl {
namespace {

constexpr uint32_t kDirEvents = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR;

// Adds a watch on every process directory (trace_*) of `trace_dir` not watched yet.
void WatchProcessDirs(int fd, const std::string& trace_dir, std::set<std::string>* watched) {
  DIR* d = ::opendir(trace_dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("trace_", 0) != 0 || watched->count(name)) continue;
    if (::inotify_add_watch(fd, (trace_dir + "/" + name).c_str(), kDirEvents) >= 0) watched->insert(name);
  }
  ::closedir(d);
}

}  // namespace

int Follow(atrace::Client& client, const std::function<atrace::Client()>& reconnect, const std::string& trace_dir,
           uint64_t after, const std::function<void(const atrace::ListEntry&)>& print) {
  atraced::UniqueFd fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!fd.valid() || ::inotify_add_watch(fd.get(), trace_dir.c_str(), kDirEvents) < 0) {
    std::cerr << "atracectl: list --follow: cannot watch " << trace_dir << ": " << std::strerror(errno)
              << (errno == EACCES ? " (only root and the reader group may watch the trace directory; 'atracectl list' "
                                  "without --follow shows your own directories)"
                                : "") << "\n";
    return kExitFailed;
  }
  std::set<std::string> watched;
  WatchProcessDirs(fd.get(), trace_dir, &watched);
  std::vector<char> buf(64 * 1024);
  // The first pass lists without waiting: a directory made after the caller's LIST and before
  // the watches were added raised no event.
  for (bool first = true;; first = false) {
    pollfd p{fd.get(), POLLIN, 0};
    const int ready = first ? 0 : ::poll(&p, 1, 1000);
    if (ready < 0 && errno != EINTR) return kExitFailed;
    bool woke = first || ready > 0;
    while (::read(fd.get(), buf.data(), buf.size()) > 0) woke = true;  // drain; LIST says what is new
    WatchProcessDirs(fd.get(), trace_dir, &watched);
    if (!woke) continue;
    std::vector<atrace::ListEntry> entries;
    if (client.List(&entries)) {
      client = reconnect();  // idle too long: a new connection, once
      if (!client) return kExitFailed;
      if (auto ec = client.List(&entries)) return Fail(client, "list", ec);
    }
    for (const auto& e : entries) {
      if (e.seq <= after) continue;
      after = e.seq;
      print(e);
    }
  }
}

}  // namespace atracectl
