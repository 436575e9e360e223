// libatrace_hccl_audit.so: an rtld-audit module (rtld-audit(7)) for LD_AUDIT= beside
// LD_PRELOAD=libatrace_hccl.so. glibc asks it about every binding of a symbol, including the
// result of dlsym() on a handle (LA_SYMB_DLSYM) and, since 2.35, bind-now bindings. When a
// function of HCCL's C API that libatrace_hccl defines is bound to libhccl from any object but
// libatrace_hccl, it answers with libatrace_hccl's wrapper: torch_npu's dlsym loaders, ctypes,
// and a plugin opened with RTLD_DEEPBIND then call through the ledger (docs/HCCL_LEDGER.md).
// libatrace_hccl's own lookups of the real functions (dlsym(RTLD_NEXT)) keep HCCL's.
//
// The list of names is libatrace_hccl's own export table: what it defines with the Hccl prefix.
// This module runs in the dynamic linker's audit namespace with its own libc, often under its
// locks: it allocates nothing, takes no lock, calls nothing of the main namespace, and answers
// with the original address whenever anything is missing.
#include <link.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "exported_function.h"

#define ATRACE_AUDIT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// What an object is to this module, kept in its audit cookie (ours to set at la_objopen).
enum Kind : uintptr_t { kOther = 0, kHccl = 1, kInterposer = 2 };

// libatrace_hccl in the main namespace, once loaded (cleared if it is unloaded).
std::atomic<const struct link_map*> g_interposer{nullptr};

const char* BaseName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

bool StartsWith(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

Kind KindOf(const struct link_map* map, Lmid_t lmid) {
  if (lmid != LM_ID_BASE || map->l_name == nullptr) return kOther;
  const char* base = BaseName(map->l_name);
  if (std::strcmp(base, "libatrace_hccl.so") == 0) return kInterposer;
  if (StartsWith(base, "libhccl.so")) return kHccl;
  return kOther;
}

}  // namespace

// The interface this module was built for, or glibc's own if that is older.
ATRACE_AUDIT_EXPORT unsigned int la_version(unsigned int version) {
  return version < LAV_CURRENT ? version : LAV_CURRENT;
}

ATRACE_AUDIT_EXPORT unsigned int la_objopen(struct link_map* map, Lmid_t lmid, uintptr_t* cookie) {
  const Kind kind = KindOf(map, lmid);
  *cookie = kind;
  if (kind == kInterposer) g_interposer.store(map, std::memory_order_release);
  return LA_FLG_BINDTO | LA_FLG_BINDFROM;
}

ATRACE_AUDIT_EXPORT unsigned int la_objclose(uintptr_t* cookie) {
  if (*cookie == kInterposer) g_interposer.store(nullptr, std::memory_order_release);
  return 0;
}

// glibc looks up the hook of the process's ELF class.
#if __ELF_NATIVE_CLASS == 32
#define ATRACE_LA_SYMBIND la_symbind32
#else
#define ATRACE_LA_SYMBIND la_symbind64
#endif

ATRACE_AUDIT_EXPORT uintptr_t ATRACE_LA_SYMBIND(ElfW(Sym) * sym, unsigned int /*ndx*/, uintptr_t* refcook,
                                           uintptr_t* defcook, unsigned int* /*flags*/, const char* name) {
  const uintptr_t original = sym->st_value;
  if (*defcook != kHccl || *refcook == kInterposer || name == nullptr || !StartsWith(name, "Hccl")) return original;
  const struct link_map* interposer = g_interposer.load(std::memory_order_acquire);
  if (interposer == nullptr) return original;
  void* wrapper = atrace_hccl_audit::ExportedFunction(interposer, name);
  return wrapper != nullptr ? reinterpret_cast<uintptr_t>(wrapper) : original;
}
