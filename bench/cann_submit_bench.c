/* AtraceSubmit of a 112-byte record, timed against whichever libascend_trace the dynamic
 * linker finds: scripts/cann_submit_bench.sh runs this one binary against CANN's library
 * (built from its source) and against ours, alternately, by LD_LIBRARY_PATH.
 *
 * Three cases, each on its own fresh tracer object (1024 slots of 112 bytes):
 *   locked1  1 thread, a locked object (noLock = 0)
 *   nolock1  1 thread, a noLock object
 *   locked4  4 threads on one locked object
 * Each prints ns per record by thread CPU time (CLOCK_THREAD_CPUTIME_ID, summed over the
 * threads) and by wall time (CLOCK_MONOTONIC from the start signal to the last join, divided
 * by all the records), and how many records the library refused (a locked slot still busy).
 *
 * Also printed: the file the library was loaded from, and the clock the object's ring header
 * says its records are stamped with (our library's ring is a memfd "atrace:<name>" with
 * ATR_RING_FLAG_COUNTER; CANN's ring is a heap block whose stamps are always rdtsc /
 * cntvct_el0, adiag_utils.c GetCpuCycleCounter). C11, only atrace_pub.h and the ring layout. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atrace_pub.h"
#include "atraced/proto/ring_layout.h"

enum { kMsgNum = 1024, kMsgSize = 112, kMaxThreads = 4 };

static int64_t Now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct Worker {
  TraHandle handle;
  long records;
  atomic_int* ready;
  atomic_bool* go;
  int64_t cpu_ns;
  long failed;
  pthread_t thread;
};

static void* RunWorker(void* arg) {
  struct Worker* w = arg;
  uint8_t record[kMsgSize];
  for (int i = 0; i < kMsgSize; ++i) record[i] = (uint8_t)('a' + i % 26);
  atomic_fetch_add(w->ready, 1);
  while (!atomic_load_explicit(w->go, memory_order_acquire)) {
  }
  const int64_t cpu0 = Now(CLOCK_THREAD_CPUTIME_ID);
  long failed = 0;
  for (long i = 0; i < w->records; ++i) {
    if (AtraceSubmit(w->handle, record, kMsgSize) != TRACE_SUCCESS) ++failed;
  }
  w->cpu_ns = Now(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  w->failed = failed;
  return NULL;
}

struct Result {
  double cpu_ns_per_record;
  double wall_ns_per_record;
  long failed;
};

/* `records` submits in all, split over `threads` threads started together. */
static struct Result Run(TraHandle handle, int threads, long records) {
  struct Worker workers[kMaxThreads];
  atomic_int ready = 0;
  atomic_bool go = false;
  const long per_thread = records / threads;
  for (int t = 0; t < threads; ++t) {
    workers[t] = (struct Worker){.handle = handle, .records = per_thread, .ready = &ready, .go = &go};
    if (pthread_create(&workers[t].thread, NULL, RunWorker, &workers[t]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      exit(1);
    }
  }
  while (atomic_load(&ready) != threads) {
  }
  const int64_t wall0 = Now(CLOCK_MONOTONIC);
  atomic_store_explicit(&go, true, memory_order_release);
  int64_t cpu = 0;
  long failed = 0;
  for (int t = 0; t < threads; ++t) {
    pthread_join(workers[t].thread, NULL);
    cpu += workers[t].cpu_ns;
    failed += workers[t].failed;
  }
  const int64_t wall = Now(CLOCK_MONOTONIC) - wall0;
  const double n = (double)per_thread * threads;
  return (struct Result){(double)cpu / n, (double)wall / n, failed};
}

/* The clock the ring of object `name` is stamped with, from its header, or a description of
 * why there is no header to read. */
static const char* RingClock(const char* name) {
  char want[96];
  snprintf(want, sizeof want, "/memfd:atrace:%s", name);
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return "unknown (no /proc/self/maps)";
  char line[512];
  const char* clock = "no atraced ring header (CANN: rdtsc/cntvct_el0, always)";
  while (fgets(line, sizeof line, maps) != NULL) {
    const char* path = strchr(line, '/');
    if (path == NULL || strncmp(path, want, strlen(want)) != 0) continue;
    const char* after = path + strlen(want);
    if (*after != ' ' && *after != '\n') continue;  /* bench_locked vs bench_locked4 */
    uintptr_t start = 0;
    if (sscanf(line, "%" SCNxPTR "-", &start) != 1) continue;
    const uint8_t* base = (const uint8_t*)start;
    uint32_t magic, flags;
    memcpy(&magic, base + ATR_RING_OFF_MAGIC, sizeof magic);
    memcpy(&flags, base + ATR_RING_OFF_FLAGS, sizeof flags);
    if (magic != ATR_RING_MAGIC) continue;
    clock = (flags & ATR_RING_FLAG_COUNTER) ? "cycle counter (ATR_RING_FLAG_COUNTER)"
                                            : "CLOCK_MONOTONIC (no ATR_RING_FLAG_COUNTER)";
    break;
  }
  fclose(maps);
  return clock;
}

static TraHandle Create(const char* name, uint8_t no_lock) {
  TraceAttr attr;
  memset(&attr, 0, sizeof attr);
  attr.msgNum = kMsgNum;
  attr.msgSize = kMsgSize;
  attr.noLock = no_lock;
  const TraHandle h = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, name, &attr);
  if (h < 0) {
    fprintf(stderr, "AtraceCreateWithAttr(%s) failed: %ld\n", name, (long)h);
    exit(1);
  }
  return h;
}

int main(int argc, char** argv) {
  long records = 2000000;
  long warmup = 200000;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--records") == 0 && i + 1 < argc) {
      records = atol(argv[++i]);
    } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
      warmup = atol(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--records N] [--warmup N]\n", argv[0]);
      return 2;
    }
  }
  if (records < kMaxThreads || AtraceCreateWithAttr == NULL || AtraceSubmit == NULL) {
    fprintf(stderr, "no libascend_trace loaded, or --records too small\n");
    return 2;
  }
  Dl_info info;
  printf("library %s\n", dladdr((void*)AtraceSubmit, &info) != 0 ? info.dli_fname : "?");

  static const struct {
    const char* name;
    uint8_t no_lock;
    int threads;
  } kCases[] = {
      {"locked1", TRACE_LOCK_BASED, 1},
      {"nolock1", TRACE_LOCK_FREE, 1},
      {"locked4", TRACE_LOCK_BASED, 4},
  };
  for (size_t c = 0; c < sizeof kCases / sizeof kCases[0]; ++c) {
    char object[32];
    snprintf(object, sizeof object, "bench_%s", kCases[c].name);
    const TraHandle h = Create(object, kCases[c].no_lock);
    (void)Run(h, kCases[c].threads, warmup);
    const struct Result r = Run(h, kCases[c].threads, records);
    printf("case %s cpu_ns %.2f wall_ns %.2f failed %ld clock %s\n", kCases[c].name, r.cpu_ns_per_record,
           r.wall_ns_per_record, r.failed, RingClock(object));
    AtraceDestroy(h);
  }
  return 0;
}
