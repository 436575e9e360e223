#include "atraced/app/listen_socket.h"

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "atraced/base/unique_fd.h"

namespace atraced {
namespace {

Status Errno(const std::string& what, int err) { return Status::Error(err, ErrnoMessage(what, err)); }

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Status MakeParents(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      int err = errno;  // before the message allocates
      return Errno("mkdir " + prefix, err);
    }
  }
  return Status::Ok();
}

// True if something accepts connections on `path` right now.
// Whether a socket file at `addr` is stale: only a refused connection says nobody listens.
// Any other failure (EACCES: a socket someone else serves and this user may not use) is
// not proof, and the file is left alone.
Status CheckStale(const sockaddr_un& addr, const std::string& path) {
  UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe.valid()) {
    int err = errno;
    return Errno("socket", err);
  }
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    return Status::Error(EADDRINUSE, "another daemon is already listening on " + path + "; not starting a second one");
  }
  const int err = errno;
  if (err == ECONNREFUSED) return Status::Ok();
  return Status::Error(err, ErrnoMessage("cannot tell whether " + path + " is served (connect)", err) +
                                "; not replacing it: give this daemon another --socket");
}

constexpr const char* kSocketRemedy =
    "give --socket a path in a directory this user may write (e.g. --socket /tmp/atraced-$USER.sock)";

}  // namespace

Status CheckDefaultSocketPlace(const std::string& default_path) {
  if (::geteuid() == 0 || ::sd_listen_fds(0) > 0) return Status::Ok();
  // The nearest directory that exists is the one bind (or mkdir) needs to write in.
  std::string dir = ParentOf(default_path);
  while (dir != "/" && ::access(dir.c_str(), F_OK) != 0) dir = ParentOf(dir);
  if (::access(dir.c_str(), W_OK | X_OK) == 0) return Status::Ok();
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const bool no_runtime = runtime == nullptr || *runtime == '\0';
  return Status::Error(EACCES, "cannot listen on " + default_path + ": uid " + std::to_string(::geteuid()) +
                                   " may not write in " + dir +
                                   (no_runtime ? " (XDG_RUNTIME_DIR is unset, so the default is the system socket, "
                                                 "which only root may make)"
                                               : "") +
                                   ": " + kSocketRemedy + (no_runtime ? ", or set XDG_RUNTIME_DIR (a login session "
                                                                        "does) for $XDG_RUNTIME_DIR/atraced.sock"
                                                                      : ""));
}

Result<ListenSocket> OpenListenSocket(asio::io_context& io, const ListenSocketOptions& options, Logger& log) {
  const auto protocol = asio::local::stream_protocol();
  int passed = ::sd_listen_fds(1);
  if (passed > 0) {
    if (passed > 1) log.Warning("systemd passed ", passed, " sockets; using the first");
    int fd = SD_LISTEN_FDS_START;
    if (::sd_is_socket_unix(fd, SOCK_STREAM, 1, nullptr, 0) <= 0) {
      return Status::Error(EINVAL, "the socket passed by systemd is not a listening AF_UNIX stream socket");
    }
    boost::system::error_code ec;
    LocalAcceptor acceptor(io);
    acceptor.assign(protocol, fd, ec);
    if (ec) return Status::Error(ec.value(), "cannot adopt the socket passed by systemd: " + ec.message());
    sockaddr_un addr{};
    socklen_t len = sizeof addr;
    std::string where = "fd 3";
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 && addr.sun_path[0] != '\0') where = addr.sun_path;
    return ListenSocket{std::move(acceptor), where + " (socket activation)", std::nullopt};
  }

  const std::string& path = options.path;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    return Status::Error(ENAMETOOLONG, "socket path [" + path + "] must be 1-107 bytes");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

  std::optional<gid_t> gid;
  if (options.group) {
    const struct group* g = ::getgrnam(options.group->c_str());
    if (g == nullptr) return Status::Error(EINVAL, "socket-group: no group named [" + *options.group + "]");
    gid = g->gr_gid;
  }
  const std::string dir = ParentOf(path);
  struct stat dir_st {};
  if (::stat(dir.c_str(), &dir_st) != 0) {
    const int err = errno;
    if (err != ENOENT || !options.make_directory) {
      return Status::Error(err, ErrnoMessage("socket directory " + dir, err) +
                                    (err == ENOENT ? ": create it, or give --socket a path in a directory that exists" : ""));
    }
    if (Status st = MakeParents(dir); !st.ok()) return st;
    log.Notice("created socket directory ", dir, " (mode 0755)");
  } else if (!S_ISDIR(dir_st.st_mode)) {
    return Status::Error(ENOTDIR, "socket directory " + dir + " is not a directory");
  }

  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return Status::Error(EEXIST, path + " exists and is not a socket; not replacing it");
    if (Status stale = CheckStale(addr, path); !stale.ok()) return stale;
    log.Notice("replacing stale socket ", path);
    if (::unlink(path.c_str()) != 0) {
      int err = errno;  // before the message allocates
      return Errno("unlink stale socket " + path, err);
    }
  }

  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    int err = errno;  // before the message allocates
    return Errno("socket", err);
  }
  // Bind with a restrictive umask so the socket is never briefly open to everyone.
  mode_t old = ::umask(0177);
  int rc = ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  int bind_err = errno;
  ::umask(old);
  if (rc != 0) {
    return Status::Error(bind_err, ErrnoMessage("bind " + path, bind_err) +
                                       (bind_err == EACCES ? std::string(": ") + kSocketRemedy : std::string()));
  }
  if (gid && ::chown(path.c_str(), static_cast<uid_t>(-1), *gid) != 0) {
    int err = errno;  // before the message allocates
    return Errno("chgrp " + path, err);
  }
  if (::chmod(path.c_str(), 0660) != 0) {
    int err = errno;  // before the message allocates
    return Errno("chmod " + path, err);
  }
  if (::listen(fd.get(), SOMAXCONN) != 0) {
    int err = errno;  // before the message allocates
    return Errno("listen " + path, err);
  }
  struct stat bound {};
  if (::lstat(path.c_str(), &bound) != 0) {
    int err = errno;
    return Errno("stat " + path, err);
  }

  boost::system::error_code ec;
  LocalAcceptor acceptor(io);
  acceptor.assign(protocol, fd.get(), ec);
  if (ec) return Status::Error(ec.value(), "cannot use socket " + path + ": " + ec.message());
  fd.release();
  return ListenSocket{std::move(acceptor), path, BoundSocketFile{path, bound.st_dev, bound.st_ino}};
}

void RemoveSocketFile(const BoundSocketFile& file, Logger& log) {
  struct stat st {};
  if (::lstat(file.path.c_str(), &st) != 0 || st.st_dev != file.dev || st.st_ino != file.ino) {
    log.Info("socket ", file.path, " is no longer the one this daemon bound; leaving it");
    return;
  }
  if (::unlink(file.path.c_str()) != 0) {
    int err = errno;
    log.Warning(ErrnoMessage("cannot remove socket " + file.path, err));
    return;
  }
  log.Info("removed socket ", file.path);
}

}  // namespace atraced
