#include "cann_baseline.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

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

InProcessSave::InProcessSave(std::string root, uint32_t records, uint32_t size, uint32_t objects, bool per_record)
    : root_(std::move(root)), objects_(objects), per_record_(per_record) {
  if (!MakeDirs(root_)) Fail("mkdir " + root_);
  for (uint32_t i = 0; i < records; ++i) {
    std::string text = "CqReport:devId=0,stmId=" + std::to_string(i) + ",";
    text.resize(size - 1, 'x');
    records_.push_back({NowNs() / 1000 + i, text});
  }
}

void InProcessSave::Save() {
  const std::string dir = root_ + "/schedule_event_" + std::to_string(::getpid()) + "_" + TraceTimeNow() + "_" +
                          std::to_string(n_++);
  if (::mkdir(dir.c_str(), 0750) != 0) Fail("mkdir " + dir + ": " + std::strerror(errno));
  std::string out;
  char line[64];
  for (uint32_t object = 0; object < objects_; ++object) {
    const std::string file = dir + "/schedule_tracer_bench_report" + std::to_string(object) + ".txt";
    int fd = ::open(file.c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0640);
    if (fd < 0) Fail("open " + file);
    out.clear();
    out.reserve(records_.size() * 140);
    for (const auto& r : records_) {
      time_t secs = static_cast<time_t>(r.us / 1000000);
      struct tm tm {};
      ::localtime_r(&secs, &tm);
      std::snprintf(line, sizeof line, "%04d-%02d-%02d %02d:%02d:%02d.%03lld.%03lld ", tm.tm_year + 1900,
                    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                    static_cast<long long>(r.us % 1000000 / 1000), static_cast<long long>(r.us % 1000));
      if (per_record_) {
        const size_t n = std::strlen(line);
        if (!WriteFull(fd, line, n) || !WriteFull(fd, r.text.data(), r.text.size()) || !WriteFull(fd, "\n", 1)) {
          Fail("write " + file);
        }
        continue;
      }
      out += line;
      out += r.text;
      out += '\n';
    }
    if (!per_record_ && !WriteFull(fd, out.data(), out.size())) Fail("write " + file);
    ::close(fd);
  }
}

}  // namespace atraced_bench
