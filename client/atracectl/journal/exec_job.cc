#include "journal/exec_job.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/child_process.h"
#include "common/shell_words.h"

namespace atracectl::journal {

std::string SubstituteCommand(std::string_view cmd) {
  std::string out;
  for (size_t i = 0; i < cmd.size(); ++i) {
    if (cmd[i] != '%' || i + 1 == cmd.size()) {
      out += cmd[i];
      continue;
    }
    const char next = cmd[++i];
    if (next == 'j') {
      out += "\"$1\"";
    } else if (next == 'h') {
      out += "\"$2\"";
    } else if (next == '%') {
      out += '%';
    } else {
      out += '%';
      out += next;
    }
  }
  return out;
}

int RunJobCommand(const std::string& cmd, const std::string& job, const std::vector<std::string>& hosts,
                  std::string* error) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/atracectl-hang.XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    *error = "cannot make a directory for the hosts file: " + std::string(std::strerror(errno));
    return -1;
  }
  const std::string file = dir + "/hosts";
  int status = -1;
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = "cannot write the hosts file: " + std::string(std::strerror(errno));
  } else {
    std::string text;
    for (const std::string& h : hosts) {
      if (SafeHostName(h)) text += h + "\n";
    }
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!written) {
      *error = "cannot write the hosts file";
    } else {
      const pid_t pid = StartChild({"/bin/sh", "-c", SubstituteCommand(cmd), "atracectl-hang", job, file});
      if (pid < 0) {
        *error = ChildOutcome(pid, false);
      } else {
        status = WaitChild(pid);
      }
    }
  }
  ::unlink(file.c_str());
  ::rmdir(dir.c_str());
  return status;
}

}  // namespace atracectl::journal
