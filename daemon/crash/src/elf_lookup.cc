#include "elf_lookup.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace atraced::crash {
namespace {

constexpr size_t kMaxVdsoBytes = 1 << 20;
constexpr size_t kMaxNotes = 32;

ElfLookup* g_lookup = nullptr;

void Note(const std::string& what, const std::string& why) {
  if (g_lookup == nullptr || g_lookup->notes.size() >= kMaxNotes) return;
  std::string line = "(skipped " + Printable(what) + ": " + why + ")";
  for (const auto& n : g_lookup->notes) {
    if (n == line) return;
  }
  g_lookup->notes.push_back(std::move(line));
}

// `path` (absolute, as the process sees it) inside the process's root: its mounts, and
// absolute symlinks and ".." never leave it. Not a blocking open (a FIFO planted there).
int OpenInProcessRoot(const std::string& path) {
  if (g_lookup == nullptr || g_lookup->root_fd < 0 || path.empty() || path[0] != '/') {
    errno = EINVAL;
    return -1;
  }
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  const char* relative = path.c_str() + 1;
  return static_cast<int>(::syscall(SYS_openat2, g_lookup->root_fd, relative, &how, sizeof how));
}

// A regular file of at most kMaxElfFileBytes holding an ELF without compressed sections;
// nullptr (with a note) otherwise. The Elf reads through `fd`, which stays the caller's.
Elf* CheckedElf(int fd, const std::string& label) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    Note(label, "not a regular file");
    return nullptr;
  }
  if (st.st_size > kMaxElfFileBytes) {
    Note(label, std::to_string(st.st_size) + " bytes, more than " + std::to_string(kMaxElfFileBytes));
    return nullptr;
  }
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    Note(label, "not an ELF file");
    if (elf != nullptr) elf_end(elf);
    return nullptr;
  }
  if (std::string section = CompressedSection(elf); !section.empty()) {
    Note(label, "compressed section " + Printable(section) + " refused, not inflated");
    elf_end(elf);
    return nullptr;
  }
  return elf;
}

std::string Hex(const unsigned char* bytes, size_t n) {
  std::string out;
  char two[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(two, sizeof two, "%02x", bytes[i]);
    out += two;
  }
  return out;
}

// The module's own mapping of `path` that starts at `low`, as "start-end" for map_files.
std::string MappingRange(const std::string& path, Dwarf_Addr low) {
  const std::string& maps = g_lookup->maps;
  size_t pos = 0;
  while (pos < maps.size()) {
    size_t end = maps.find('\n', pos);
    if (end == std::string::npos) end = maps.size();
    const std::string line = maps.substr(pos, end - pos);
    pos = end + 1;
    unsigned long long start = 0, stop = 0;
    int path_at = -1;
    if (std::sscanf(line.c_str(), "%llx-%llx %*s %*s %*s %*s %n", &start, &stop, &path_at) < 2 || path_at < 0) continue;
    if (start == low && line.compare(static_cast<size_t>(path_at), std::string::npos, path) == 0) {
      return line.substr(0, line.find(' '));
    }
  }
  return {};
}

Elf* VdsoElf(Dwfl_Module* mod, const char* name) {
  Dwarf_Addr low = 0, high = 0;
  dwfl_module_info(mod, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
  if (high <= low || high - low > kMaxVdsoBytes) {
    Note(name, "unexpected size");
    return nullptr;
  }
  const std::string proc_dir =
      g_lookup->proc_dir.empty() ? "/proc/" + std::to_string(g_lookup->pid) : g_lookup->proc_dir;
  const int fd = ::open((proc_dir + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Note(name, std::string("memory not readable: ") + std::strerror(errno));
    return nullptr;
  }
  const size_t size = high - low;
  // Freed at exit: the Elf reads from it as long as the Dwfl lives.
  char* image = static_cast<char*>(std::malloc(size));
  const ssize_t got = image ? ::pread(fd, image, size, static_cast<off_t>(low)) : -1;
  ::close(fd);
  if (got != static_cast<ssize_t>(size)) {
    std::free(image);
    Note(name, "memory not readable");
    return nullptr;
  }
  Elf* elf = elf_memory(image, size);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF || !CompressedSection(elf).empty()) {
    if (elf != nullptr) elf_end(elf);
    std::free(image);
    Note(name, "not a plain ELF image");
    return nullptr;
  }
  return elf;
}

int FindElf(Dwfl_Module* mod, void**, const char* name, Dwarf_Addr, char** file_name, Elf** elfp) {
  if (g_lookup == nullptr || name == nullptr) return -1;
  if (std::strncmp(name, "[vdso", 5) == 0) {
    *elfp = VdsoElf(mod, name);
    return -1;
  }
  if (name[0] != '/') return -1;
  const std::string path = name;
  Dwarf_Addr low = 0;
  dwfl_module_info(mod, nullptr, &low, nullptr, nullptr, nullptr, nullptr, nullptr);
  int fd = -1;
  if (const std::string range = MappingRange(path, low); !range.empty()) {
    fd = ::open(("/proc/" + std::to_string(g_lookup->pid) + "/map_files/" + range).c_str(),
                O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  }
  if (fd < 0) {
    static constexpr std::string_view kDeleted = " (deleted)";
    if (path.size() > kDeleted.size() && path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
      Note(path, "deleted since it was mapped");
      return -1;
    }
    fd = OpenInProcessRoot(path);
    if (fd < 0) {
      Note(path, std::string("not opened in the process's root: ") + std::strerror(errno));
      return -1;
    }
  }
  Elf* elf = CheckedElf(fd, path);
  if (elf == nullptr) {
    ::close(fd);
    return -1;
  }
  *file_name = ::strdup(name);
  *elfp = elf;
  return fd;  // libdwfl owns both from here
}

// A candidate debug file: checked like an image and carrying the image's build id.
int CheckedDebugFile(int fd, const std::string& label, const std::string& build_id) {
  if (fd < 0) return -1;
  Elf* elf = CheckedElf(fd, label);
  if (elf == nullptr) {
    ::close(fd);
    return -1;
  }
  const void* bits = nullptr;
  const ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
  const bool same = n > 0 && Hex(static_cast<const unsigned char*>(bits), static_cast<size_t>(n)) == build_id;
  elf_end(elf);
  if (!same) {
    Note(label, "its build id is not the image's");
    ::close(fd);
    return -1;
  }
  return fd;
}

int FindDebuginfo(Dwfl_Module* mod, void**, const char* name, Dwarf_Addr, const char* file_name,
                  const char* debuglink, GElf_Word, char** debuginfo_file_name) {
  if (g_lookup == nullptr) return -1;
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int n = dwfl_module_build_id(mod, &bits, &vaddr);
  if (n < 2) {
    Note(name ? name : "??", "no build id, so no separate debug info looked up");
    return -1;
  }
  const std::string build_id = Hex(bits, static_cast<size_t>(n));
  // The host's debug store (this is the helper's namespace on purpose: it holds the
  // distribution's debug files), opened as the crashing user.
  const std::string stored = "/usr/lib/debug/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug";
  int fd = ::open(stored.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd >= 0) {
    fd = CheckedDebugFile(fd, stored, build_id);
    if (fd >= 0) {
      *debuginfo_file_name = ::strdup(stored.c_str());
      return fd;
    }
  }
  if (debuglink == nullptr) return -1;
  if (!PlainDebuglinkName(debuglink)) {
    Note(std::string(".gnu_debuglink \"") + debuglink + "\" of " + (name ? name : "??"), "not a plain file name");
    return -1;
  }
  const std::string image = file_name ? file_name : (name ? name : "");
  const size_t slash = image.rfind('/');
  if (image.empty() || image[0] != '/' || slash == std::string::npos) return -1;
  const std::string beside = image.substr(0, slash + 1) + debuglink;
  fd = OpenInProcessRoot(beside);
  if (fd < 0) return -1;
  fd = CheckedDebugFile(fd, beside, build_id);
  if (fd >= 0) *debuginfo_file_name = ::strdup(beside.c_str());
  return fd;
}

}  // namespace

std::string CompressedSection(Elf* elf) {
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return "(section names unreadable)";
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) return "(section header unreadable)";
    const char* name = elf_strptr(elf, names, shdr.sh_name);
    const std::string label = name ? name : "#" + std::to_string(elf_ndxscn(scn));
    if ((shdr.sh_flags & SHF_COMPRESSED) != 0) return label;
    // GNU-style compression, and the xz-compressed MiniDebugInfo image.
    if (name != nullptr && (std::strncmp(name, ".zdebug", 7) == 0 || std::strcmp(name, ".gnu_debugdata") == 0)) {
      return label;
    }
  }
  return {};
}

bool PlainDebuglinkName(const char* name) {
  if (name == nullptr || *name == '\0' || std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) return false;
  for (const char* p = name; *p != '\0'; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '/' || c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

std::string Printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  char esc[5];
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && !(keep_newlines && c == '\n')) || c == 0x7f) {
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    } else {
      out += ch;
    }
  }
  return out;
}

const Dwfl_Callbacks* InstallElfLookup(ElfLookup* lookup) {
  elf_version(EV_CURRENT);
  g_lookup = lookup;
  static const Dwfl_Callbacks callbacks = {FindElf, FindDebuginfo, nullptr, nullptr};
  return &callbacks;
}

}  // namespace atraced::crash
