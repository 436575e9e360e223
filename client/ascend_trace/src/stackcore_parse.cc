// AtraceStackcoreParse (atrace_stackcore_api.h): the .bin of a stack dump to its .txt.
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "atrace_stackcore_api.h"
#include "atraced/base/unique_fd.h"
#include "atraced/proto/stack_dump_file.h"

namespace {

TraStatus Fail(const std::string& path, const std::string& why) {
  std::fprintf(stderr, "libascend_trace: AtraceStackcoreParse: %s: %s\n", path.c_str(), why.c_str());
  return TRACE_FAILURE;
}

// The whole of a regular file of at most `limit` bytes; false with `why` otherwise.
bool ReadRegularFile(const std::string& path, size_t limit, std::vector<uint8_t>* out, std::string* why) {
  atraced::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
    *why = std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = "not a regular file";
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > limit) {
    *why = std::to_string(st.st_size) + " bytes, more than a stack dump holds";
    return false;
  }
  out->resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out->size()) {
    const ssize_t n = ::read(fd.get(), out->data() + got, out->size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = n < 0 ? std::strerror(errno) : "shorter than it was a moment ago";
      return false;
    }
    got += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

TRACE_EXPORT TraStatus AtraceStackcoreParse(const char* filePath, uint32_t len) {
  if (filePath == nullptr || len == 0 || len >= PATH_MAX || ::strnlen(filePath, len + 1) != len) {
    return TRACE_INVALID_PARAM;
  }
  const std::string bin_path(filePath, len);
  if (len <= 4 || bin_path.compare(len - 4, 4, ".bin") != 0) {
    std::fprintf(stderr, "libascend_trace: AtraceStackcoreParse: %s: not a .bin file\n", bin_path.c_str());
    return TRACE_INVALID_PARAM;
  }
  std::vector<uint8_t> bytes;
  std::string why, text;
  if (!ReadRegularFile(bin_path, atraced::proto::kStackDumpHeaderSize + atraced::proto::kMaxStackDumpText, &bytes,
                       &why) ||
      !atraced::proto::DecodeStackDumpFile(bytes, &text, &why)) {
    return Fail(bin_path, why);
  }
  const std::string txt_path = bin_path.substr(0, len - 4) + ".txt";
  // The daemon wrote the text beside the .bin already (its directory may not be writable by
  // whoever parses): a .txt that says the same is the result.
  std::vector<uint8_t> existing;
  if (ReadRegularFile(txt_path, text.size(), &existing, &why) && existing.size() == text.size() &&
      std::memcmp(existing.data(), text.data(), text.size()) == 0) {
    return TRACE_SUCCESS;
  }
  atraced::UniqueFd out(::open(txt_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640));
  if (!out.valid()) return Fail(txt_path, std::strerror(errno));
  size_t put = 0;
  while (put < text.size()) {
    const ssize_t n = ::write(out.get(), text.data() + put, text.size() - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail(txt_path, n < 0 ? std::strerror(errno) : "short write");
    put += static_cast<size_t>(n);
  }
  return TRACE_SUCCESS;
}
