#include "files/bundle_reader.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>

#include "common/child_process.h"
#include "common/escape.h"

namespace atracectl {
namespace {

constexpr size_t kBlock = 512;
constexpr uint64_t kMaxNameMember = 64 * 1024;  // a GNU long name or a pax header

// A tar number: octal digits (spaces and NULs around them), or GNU's base-256 (the first
// byte's high bit set). false when it is neither or passes 2^63.
bool TarNumber(const char* p, size_t n, uint64_t* out) {
  if (n > 0 && (static_cast<unsigned char>(p[0]) & 0x80)) {
    uint64_t v = static_cast<unsigned char>(p[0]) & 0x7f;
    for (size_t i = 1; i < n; ++i) {
      if (v >> 55) return false;
      v = (v << 8) | static_cast<unsigned char>(p[i]);
    }
    *out = v;
    return v < (1ull << 63);
  }
  size_t i = 0;
  while (i < n && (p[i] == ' ' || p[i] == '\0')) ++i;
  uint64_t v = 0;
  bool any = false;
  for (; i < n && p[i] >= '0' && p[i] <= '7'; ++i) {
    if (v >> 60) return false;
    v = v * 8 + static_cast<uint64_t>(p[i] - '0');
    any = true;
  }
  for (; i < n; ++i) {
    if (p[i] != ' ' && p[i] != '\0') return false;
  }
  *out = v;
  return any;
}

bool ChecksumOk(const char* h) {
  uint64_t want = 0;
  if (!TarNumber(h + 148, 8, &want)) return false;
  uint64_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i) sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(h[i]);
  return sum == want;
}

std::string Field(const char* p, size_t n) { return std::string(p, strnlen(p, n)); }

// Relative, no "..", no empty component (a trailing '/' of a directory aside).
bool SafeName(std::string_view name) {
  if (name.empty() || name.front() == '/') return false;
  if (name.back() == '/') name.remove_suffix(1);
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view part = name.substr(start, end - start);
    if (part.empty() || part == ".." || part == ".") return false;
    start = end + 1;
  }
  return name.find('\0') == std::string_view::npos;
}

// "path=..." of a pax header's records ("LEN key=value\n" each).
std::string PaxPath(std::string_view data) {
  std::string path;
  while (!data.empty()) {
    size_t len = 0;
    auto [p, ec] = std::from_chars(data.data(), data.data() + data.size(), len);
    if (ec != std::errc() || len == 0 || len > data.size() || *p != ' ') break;
    const std::string_view record = data.substr(static_cast<size_t>(p + 1 - data.data()), len - static_cast<size_t>(p + 1 - data.data()));
    if (record.rfind("path=", 0) == 0 && !record.empty() && record.back() == '\n') {
      path = std::string(record.substr(5, record.size() - 6));
    }
    data.remove_prefix(len);
  }
  return path;
}

bool NumberAfter(std::string_view s, std::string_view prefix, int32_t* out) {
  const size_t at = s.find(prefix);
  if (at == std::string_view::npos) return false;
  s.remove_prefix(at + prefix.size());
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p != s.data() && *out > 0;
}

}  // namespace

bool DirFromPath(std::string_view rel, BundleDir* out) {
  const size_t slash = rel.find('/');
  if (slash == std::string_view::npos || rel.find('/', slash + 1) != std::string_view::npos) return false;
  const std::string_view proc = rel.substr(0, slash), event = rel.substr(slash + 1);
  if (proc.rfind("trace_", 0) != 0 || event.find("_event_") == std::string_view::npos) return false;
  BundleDir d;
  d.path = std::string(rel);
  d.kind = std::string(event.substr(0, event.find("_event_")));
  if (d.kind != "schedule" && d.kind != "stackcore" && d.kind != "exit") return false;
  if (!NumberAfter(event, "_event_", &d.pid)) return false;
  d.side = "host";
  *out = std::move(d);
  return true;
}

BundleRead ReadTarStream(const std::function<long(char*, size_t)>& read, const BundleVisitor& visitor) {
  BundleRead r;
  std::map<std::string, BundleDir> dirs;  // from bundle.jsonl, by path
  auto fill = [&read](char* buf, size_t n) {
    size_t got = 0;
    while (got < n) {
      const long m = read(buf + got, n - got);
      if (m <= 0) return got;
      got += static_cast<size_t>(m);
    }
    return got;
  };
  auto fail = [&r](std::string why) {
    r.status = atraced::Status::Error(EPROTO, std::move(why));
    return r;
  };
  // Reads a member's data (padded to whole blocks) into `out`, or skips it when out is null.
  auto data = [&](uint64_t size, std::string* out) {
    char buf[64 * 1024];
    uint64_t left = (size + kBlock - 1) / kBlock * kBlock;
    while (left > 0) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(left, sizeof buf));
      if (fill(buf, want) != want) return false;
      if (out != nullptr && out->size() < size) out->append(buf, std::min<size_t>(want, size - out->size()));
      left -= want;
    }
    return true;
  };
  std::string long_name;  // from a GNU 'L' member or a pax 'x' header, for the next member
  char h[kBlock];
  for (;;) {
    const size_t got = fill(h, kBlock);
    if (got == 0) return fail("the tar stream ends without its end-of-archive blocks: truncated");
    if (got != kBlock) return fail("the tar stream ends inside a header: truncated");
    if (std::all_of(h, h + kBlock, [](char c) { return c == 0; })) return r;  // the end
    if (!ChecksumOk(h)) return fail("a tar header's checksum is wrong: not a tar stream, or corrupt");
    uint64_t size = 0;
    if (!TarNumber(h + 124, 12, &size)) return fail("a tar header's size is not a number");
    const char type = h[156];
    const bool named_before = !long_name.empty();
    std::string name = named_before ? long_name : Field(h, 100);
    long_name.clear();
    if (!named_before && std::memcmp(h + 257, "ustar\0", 6) == 0 && h[345] != '\0') {
      name = Field(h + 345, 155) + "/" + name;  // POSIX ustar's prefix field
    }
    if (type == 'L' || type == 'x') {
      if (size > kMaxNameMember) return fail("a long-name or pax header of " + std::to_string(size) + " bytes");
      std::string text;
      if (!data(size, &text)) return fail("the tar stream ends inside a header: truncated");
      long_name = type == 'L' ? Field(text.data(), text.size()) : PaxPath(text);
      continue;
    }
    if (size > kMaxBundleMember) {
      return fail("member " + TerminalLine(name) + " holds " + std::to_string(size) + " bytes, more than the " +
                  std::to_string(kMaxBundleMember >> 20) + " MiB a trace file may: not read further");
    }
    const bool regular = type == '0' || type == '\0' || type == '7';
    if (!SafeName(name)) {
      r.problems.push_back("member " + TerminalLine(name) + " refused: an absolute name or a '..' component");
      if (!data(size, nullptr)) return fail("the tar stream ends inside a member: truncated");
      continue;
    }
    if (type == 'S') {
      r.problems.push_back("member " + TerminalLine(name) + " skipped: a sparse file (no trace file is one)");
      if (!data(size, nullptr)) return fail("the tar stream ends inside a member: truncated");
      continue;
    }
    if (!regular) {
      if (type != '5' && type != 'g') r.problems.push_back("member " + TerminalLine(name) + " skipped: not a regular file");
      if (!data(size, nullptr)) return fail("the tar stream ends inside a member: truncated");
      continue;
    }
    std::string bytes;
    if (!data(size, &bytes)) return fail("the tar stream ends inside member " + TerminalLine(name) + ": truncated");
    if (name == kBundleMetaName) {
      size_t start = 0;
      while (start < bytes.size()) {
        size_t end = bytes.find('\n', start);
        if (end == std::string::npos) end = bytes.size();
        BundleMetaLine line = ParseBundleMetaLine(std::string_view(bytes).substr(start, end - start));
        if (line.record == "host" && !r.has_host) {
          r.host = line.host;
          r.has_host = true;
          if (visitor.host) visitor.host(r.host);
        } else if (line.record == "dir" && dirs.size() < (1u << 20)) {
          BundleDir named;
          if (DirFromPath(line.dir.path, &named) && named.pid == line.dir.pid) {
            if (visitor.dir) visitor.dir(line.dir);
            dirs[line.dir.path] = std::move(line.dir);
          }
        } else if (line.record == "aged") {
          if (r.aged >= kMaxBundleAged) {
            ++r.aged_past_bound;
          } else {
            ++r.aged;
            if (visitor.aged) visitor.aged(line.aged);
          }
        }
        start = end + 1;
      }
      if (visitor.meta_only) return r;
      continue;
    }
    if (visitor.meta_only) return r;  // a bundle without bundle.jsonl first: nothing to say
    if (name.rfind("atrace/", 0) != 0) continue;  // status.json, uname.txt, ...
    const std::string rel = name.substr(7);
    const size_t last = rel.rfind('/');
    if (last == std::string::npos) continue;
    const std::string dir_path = rel.substr(0, last), file = rel.substr(last + 1);
    BundleDir named;
    if (!DirFromPath(dir_path, &named)) {
      r.problems.push_back("member " + TerminalLine(name) + " skipped: not in an event directory");
      continue;
    }
    named.client = true;  // undescribed: nobody vouches that the daemon made it
    auto it = dirs.find(dir_path);
    ++r.files;
    if (visitor.file) visitor.file(it != dirs.end() ? it->second : named, file, std::move(bytes));
  }
}

BundleRead ReadBundle(const std::string& path, const BundleVisitor& visitor) {
  BundleRead r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    r.status = fd < 0 ? atraced::Status::Error(errno, std::strerror(errno)) : atraced::Status::Error(EINVAL, "not a regular file");
    if (fd >= 0) ::close(fd);
    return r;
  }
  // gzip's magic first: a file that is not gzip at all is said so, not handed to gzip, whose
  // own complaint would reach the operator raw and be taken for a truncated bundle.
  unsigned char magic[2] = {};
  if (::pread(fd, magic, sizeof magic, 0) != static_cast<ssize_t>(sizeof magic) || magic[0] != 0x1f || magic[1] != 0x8b) {
    ::close(fd);
    r.status = atraced::Status::Error(EINVAL, "not a gzip file: a bundle is the .tar.gz that 'atracectl export --format tar' writes");
    return r;
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    ::close(fd);
    r.status = atraced::Status::Error(errno, std::strerror(errno));
    return r;
  }
  // gzip's own messages ("unexpected end of file") are not shown: the error below says it.
  const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  const pid_t gzip = StartChild({"gzip", "-dc"}, fd, pipe_fds[1], devnull);
  if (devnull >= 0) ::close(devnull);
  ::close(fd);
  ::close(pipe_fds[1]);
  if (gzip <= 0) {
    ::close(pipe_fds[0]);
    r.status = atraced::Status::Error(-gzip, "gzip " + ChildOutcome(gzip, false));
    return r;
  }
  const int in = pipe_fds[0];
  r = ReadTarStream(
      [in](char* buf, size_t n) -> long {
        for (;;) {
          const ssize_t m = ::read(in, buf, n);
          if (m < 0 && errno == EINTR) continue;
          return static_cast<long>(m);
        }
      },
      visitor);
  ::kill(gzip, SIGKILL);  // done with it, whether or not it finished (harmless if it did)
  ::close(in);
  const int rc = WaitChild(gzip);
  if (r.status.ok() && rc != 0 && rc != 128 + SIGKILL) {
    r.status = atraced::Status::Error(EPROTO, "gzip -dc " + ChildOutcome(rc, true) + ": a truncated or corrupt .tar.gz");
  }
  return r;
}

}  // namespace atracectl
