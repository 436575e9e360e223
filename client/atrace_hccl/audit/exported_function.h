// A function a loaded object exports, found by name in its dynamic symbol table (DT_GNU_HASH)
// without the dynamic linker: the rtld-audit module (audit.cc) asks this while glibc holds
// its own locks, where calling dlsym would take them again. No allocation, no lock.
#pragma once

#include <link.h>

namespace atrace_hccl_audit {

// The address of `name` if `map` defines it as a function with default or protected
// visibility (what a lookup in the global scope would bind), else nullptr: also when the object
// has no DT_GNU_HASH table or its tables are missing.
void* ExportedFunction(const struct link_map* map, const char* name);

}  // namespace atrace_hccl_audit
