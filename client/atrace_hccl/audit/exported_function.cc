// DT_GNU_HASH lookup, as the ELF gABI extension (and glibc's dl-lookup.c) define it: a Bloom
// filter, then a bucket of the chain, whose hashes end with the low bit set.
#include "exported_function.h"

#include <elf.h>

#include <cstdint>
#include <cstring>

namespace atrace_hccl_audit {
namespace {

struct Tables {
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const uint32_t* gnu_hash = nullptr;
};

// glibc relocates the dynamic section's pointers by the load address on most targets, not on
// all (MIPS, RISC-V keep them as link-time addresses): take either.
uintptr_t Pointer(const struct link_map* map, ElfW(Addr) value) {
  return value < map->l_addr ? map->l_addr + value : value;
}

bool ReadTables(const struct link_map* map, Tables* t) {
  if (map == nullptr || map->l_ld == nullptr) return false;
  for (const ElfW(Dyn)* d = map->l_ld; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: t->symtab = reinterpret_cast<const ElfW(Sym)*>(Pointer(map, d->d_un.d_ptr)); break;
      case DT_STRTAB: t->strtab = reinterpret_cast<const char*>(Pointer(map, d->d_un.d_ptr)); break;
      case DT_GNU_HASH: t->gnu_hash = reinterpret_cast<const uint32_t*>(Pointer(map, d->d_un.d_ptr)); break;
      default: break;
    }
  }
  return t->symtab != nullptr && t->strtab != nullptr && t->gnu_hash != nullptr;
}

uint32_t GnuHash(const char* name) {
  uint32_t h = 5381;
  for (const unsigned char* c = reinterpret_cast<const unsigned char*>(name); *c != 0; ++c) h = h * 33 + *c;
  return h;
}

// (ELF64_ST_* and ELF32_ST_* read the same bits.)
bool Callable(const ElfW(Sym)& s) {
  const unsigned vis = ELF64_ST_VISIBILITY(s.st_other);
  const unsigned bind = ELF64_ST_BIND(s.st_info);
  return ELF64_ST_TYPE(s.st_info) == STT_FUNC && s.st_shndx != SHN_UNDEF && s.st_value != 0 &&
         (bind == STB_GLOBAL || bind == STB_WEAK) && (vis == STV_DEFAULT || vis == STV_PROTECTED);
}

}  // namespace

void* ExportedFunction(const struct link_map* map, const char* name) {
  Tables t;
  if (name == nullptr || !ReadTables(map, &t)) return nullptr;
  const uint32_t n_buckets = t.gnu_hash[0], sym_offset = t.gnu_hash[1];
  const uint32_t bloom_size = t.gnu_hash[2], bloom_shift = t.gnu_hash[3];
  if (n_buckets == 0 || bloom_size == 0) return nullptr;
  const auto* bloom = reinterpret_cast<const ElfW(Addr)*>(t.gnu_hash + 4);
  const uint32_t* buckets = reinterpret_cast<const uint32_t*>(bloom + bloom_size);
  const uint32_t* chain = buckets + n_buckets;

  constexpr uint32_t kBits = sizeof(ElfW(Addr)) * 8;
  const uint32_t h = GnuHash(name);
  const ElfW(Addr) word = bloom[(h / kBits) % bloom_size];
  const ElfW(Addr) mask = (ElfW(Addr){1} << (h % kBits)) | (ElfW(Addr){1} << ((h >> bloom_shift) % kBits));
  if ((word & mask) != mask) return nullptr;

  uint32_t i = buckets[h % n_buckets];
  if (i < sym_offset) return nullptr;
  for (;; ++i) {
    const uint32_t chained = chain[i - sym_offset];
    const ElfW(Sym)& s = t.symtab[i];
    if ((chained | 1) == (h | 1) && std::strcmp(name, t.strtab + s.st_name) == 0 && Callable(s)) {
      return reinterpret_cast<void*>(map->l_addr + s.st_value);
    }
    if ((chained & 1) != 0) return nullptr;  // the bucket's last entry
  }
}

}  // namespace atrace_hccl_audit
