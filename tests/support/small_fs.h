// A tmpfs of a given size mounted for a test's life: a real, small file system for the
// byte limits (root only; mounted() says whether mount(2) was allowed here).
#pragma once

#include <sys/mount.h>
#include <sys/statvfs.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "support/temp_dir.h"

namespace atraced::testing {

class SmallFs {
 public:
  explicit SmallFs(uint64_t bytes) : path_(dir_.path() + "/fs") {
    std::filesystem::create_directory(path_);
    mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, ("size=" + std::to_string(bytes)).c_str()) == 0;
  }
  ~SmallFs() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  SmallFs(const SmallFs&) = delete;
  SmallFs& operator=(const SmallFs&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& path() const { return path_; }
  uint64_t available() const {
    struct statvfs v {};
    ::statvfs(path_.c_str(), &v);
    return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
  }

 private:
  TempDir dir_;
  std::string path_;
  bool mounted_ = false;
};

}  // namespace atraced::testing
