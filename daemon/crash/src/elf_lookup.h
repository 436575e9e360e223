// How the unwind helper finds a crashed process's ELF images and their debug info: libdwfl
// callbacks that replace dwfl_linux_proc_find_elf and dwfl_standard_find_debuginfo, which
// open the /proc/<pid>/maps path in the helper's own mount namespace, follow any
// .gnu_debuglink (even "../../x"), and let libdw inflate compressed sections of any size.
//
// Here, run after the helper became the crashing user:
// - an image is opened through /proc/<pid>/map_files/<start>-<end> (the very file mapped;
//   the kernel wants CAP_CHECKPOINT_RESTORE for that, so as a plain user it fails with EPERM
//   and we go on) or else by its maps path resolved inside the process's own root
//   (/proc/<pid>/root, openat2 RESOLVE_IN_ROOT: its mounts, and its absolute symlinks and
//   ".." stay inside it); "[vdso]" is read from the process's memory;
// - separate debug info only from the host's debug store by build id
//   (/usr/lib/debug/.build-id/xx/rest.debug) or from a .gnu_debuglink that is a plain file
//   name, looked up in the image's own directory inside the process's root; either must
//   carry the image's build id (an image without one gets no separate debug info);
// - a file that is not a regular file, is larger than kMaxElfFileBytes, or has a compressed
//   section (SHF_COMPRESSED, .zdebug*, .gnu_debugdata) is skipped, never inflated.
// Each skip leaves a note for the report.
#pragma once

#include <elfutils/libdwfl.h>
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace atraced::crash {

inline constexpr off_t kMaxElfFileBytes = off_t{256} << 20;

// The callbacks' state; one per helper process (libdwfl's callbacks carry no pointer of
// ours, so the lookup is a process-wide singleton, set up once before dwfl_begin).
struct ElfLookup {
  pid_t pid = 0;
  std::string proc_dir;            // /proc/<pid>/task/<crashing tid>: its memory (a zombie leader has none)
  int root_fd = -1;                // <proc_dir>/root, O_PATH
  std::string maps;                // the /proc/<pid>/maps text the report shows
  std::vector<std::string> notes;  // one per skipped file, for the report
};

// Sets the lookup the callbacks use; returns the callbacks to hand to dwfl_begin.
const Dwfl_Callbacks* InstallElfLookup(ElfLookup* lookup);

// The name of the first compressed section of `elf` (or a reason it cannot be checked);
// empty when there is none. Exposed for tests.
std::string CompressedSection(Elf* elf);

// True for a .gnu_debuglink a lookup may follow: a plain file name, no '/', not "." or "..",
// no control characters.
bool PlainDebuglinkName(const char* name);

// `text` with every control byte (and DEL) as \xNN, keeping '\n' only if `keep_newlines`:
// names and paths from the process are the client's bytes, and the report is line-based.
std::string Printable(std::string_view text, bool keep_newlines = false);

}  // namespace atraced::crash
