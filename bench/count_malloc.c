// count_malloc.so: an LD_PRELOAD shim that counts heap allocations (malloc, calloc, realloc
// of a null pointer or to a new size, memalign and friends; C++ operator new goes through
// malloc) in a process and writes the total to the file named by COUNT_MALLOC_OUT at exit.
// bench/allocs.sh runs the daemon under it over N events and over 0 events; the
// difference / N is the allocations one event costs. It forwards to glibc's __libc_*
// functions, so it needs no dlsym (which itself allocates) and is safe in every thread.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void* __libc_memalign(size_t, size_t);
extern void __libc_free(void*);

static atomic_ullong allocations;

void* malloc(size_t n) {
  atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  return __libc_realloc(p, n);
}
void free(void* p) { __libc_free(p); }
void* memalign(size_t align, size_t n) {
  atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  return __libc_memalign(align, n);
}
void* aligned_alloc(size_t align, size_t n) { return memalign(align, n); }
int posix_memalign(void** out, size_t align, size_t n) {
  void* p = memalign(align, n);
  if (p == NULL) return 12; /* ENOMEM */
  *out = p;
  return 0;
}

__attribute__((destructor)) static void report(void) {
  const char* path = getenv("COUNT_MALLOC_OUT");
  if (path == NULL) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[32];
  int len = snprintf(line, sizeof line, "%llu\n", (unsigned long long)atomic_load(&allocations));
  if (len > 0) (void)write(fd, line, (size_t)len);
  close(fd);
}
