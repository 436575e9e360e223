#include "atraced/base/socket_remedy.h"

#include <grp.h>
#include <sys/stat.h>

namespace atraced {

namespace {

std::string FileKind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "a file";
}

constexpr const char* kOwnDaemon = "use your own daemon ('systemctl --user start atraced.socket')";

}  // namespace

std::string DescribeNonSocket(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISSOCK(st.st_mode)) return "";
  return path + " is " + FileKind(st.st_mode) + ", not a socket";
}

std::string SocketAccessRemedy(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return kOwnDaemon;
  if (st.st_gid == 0) {
    return "the socket's group is root, so only root may connect: ask an administrator to set "
           "socket-group in atraced.conf (the packages' units use group 'atrace'), or " +
           std::string(kOwnDaemon);
  }
  const group* gr = ::getgrgid(st.st_gid);
  const std::string name = gr != nullptr ? gr->gr_name : std::to_string(st.st_gid);
  return "it is for members of group '" + name + "'; join it ('sudo usermod -aG " + name +
         " $USER', then log in again) or " + kOwnDaemon;
}

}  // namespace atraced
