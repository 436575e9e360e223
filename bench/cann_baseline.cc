#include "cann_baseline.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bench_util.h"

namespace atraced_bench {

CannWriter::CannWriter(std::string root, size_t record_num, std::string object)
    : object_file_("schedule_tracer_" + object + ".txt"), record_num_(record_num) {
  std::string trace = root + "/atrace";
  MakeDirs(trace);
  process_dir_ = trace + "/trace_" + std::to_string(::getpgrp()) + "_" + std::to_string(::getpid()) + "_" +
                 TraceTimeNow();
  ::mkdir(process_dir_.c_str(), 0750);
}

int CannWriter::Begin(std::string* dir) {
  *dir = process_dir_ + "/schedule_event_" + std::to_string(::getpid()) + "_" + TraceTimeNow();
  if (::mkdir(dir->c_str(), 0750) != 0) {
    if (errno != EEXIST) return -errno;
    last_created_ = false;  // CANN reuses a directory made in the same microsecond
    ++reused_;
    return 0;
  }
  last_created_ = true;
  return 0;
}

int CannWriter::Finish(const std::string& dir, bool created, const void* data, size_t len) {
  std::string file = dir + "/" + object_file_;
  int fd = ::open(file.c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) return -errno;
  auto p = static_cast<const char*>(data);
  size_t off = 0;
  while (off < len) {
    ssize_t n = ::write(fd, p + off, len - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return -err;
    }
    off += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return -errno;
  if (created) {
    dirs_.push_back(dir);
    while (dirs_.size() > record_num_) {
      int rc = RemoveDirRecursive(dirs_.front());
      dirs_.pop_front();
      if (rc != 0) return rc;
    }
  }
  return 0;
}

int CannWriter::Emit(const void* data, size_t len) {
  std::string dir;
  int rc = Begin(&dir);
  if (rc != 0) return rc;
  return Finish(dir, last_created_, data, len);
}

int RemoveDirRecursive(const std::string& path) {
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return errno == ENOENT ? 0 : -errno;
  int rc = 0;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    std::string child = path + "/" + e->d_name;
    if (e->d_type == DT_DIR) {
      if (int r = RemoveDirRecursive(child); r != 0 && rc == 0) rc = r;
    } else if (::unlink(child.c_str()) != 0 && errno != ENOENT && rc == 0) {
      rc = -errno;
    }
  }
  ::closedir(d);
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT && rc == 0) rc = -errno;
  return rc;
}

}  // namespace atraced_bench
