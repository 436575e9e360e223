// A fresh directory under /tmp, removed with everything in it at scope exit. Paths stay
// short so a socket inside fits sun_path (108 bytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace atraced::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// Small file helpers for assertions on real trees.
bool Exists(const std::string& path);          // lstat succeeds
bool IsDir(const std::string& path);           // a directory, not through a symlink
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& content);
unsigned Mode(const std::string& path);        // permission bits
std::vector<std::string> ListNames(const std::string& dir);  // sorted, without . and ..
// The allocation unit of the file system `path` is on (st_blksize): a file of n > 0 bytes
// takes whole ones, and the daemon counts them so.
uint64_t BlockSize(const std::string& path);
// What a dense file of `bytes` takes there: `bytes` rounded up to whole blocks.
uint64_t Blocks(const std::string& path, uint64_t bytes);

}  // namespace atraced::testing
