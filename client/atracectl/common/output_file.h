// The file an atracectl command writes (--output FILE). It is made once, before the command
// does anything else, as a new file (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0640): never over an
// existing file and never through a link, so a name planted there later changes nothing. The
// command then writes only through that descriptor, and never removes the file by name: the
// name may by then be someone else's file. A command that fails after making it leaves it
// empty and says so.
#pragma once

#include <string>
#include <string_view>

namespace atracectl {

class NewOutputFile {
 public:
  // Makes `path` for `command` ("export"); on failure says why on stderr and ok() is false.
  NewOutputFile(std::string command, std::string path);
  // Unless Keep() was called: truncated to nothing (through the descriptor), and stderr says
  // that the file is left empty.
  ~NewOutputFile();
  NewOutputFile(const NewOutputFile&) = delete;
  NewOutputFile& operator=(const NewOutputFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  // Writes all of `data`; false after saying why on stderr.
  bool Write(std::string_view data);
  // The command succeeded: the file keeps what was written.
  void Keep() { keep_ = true; }

 private:
  std::string command_, path_;
  int fd_ = -1;
  bool keep_ = false;
};

}  // namespace atracectl
