/* AtraceSubmit of a 112-byte record, timed against whichever libascend_trace the dynamic
 * linker finds: bench/cann_submit_bench.sh runs this one binary against CANN's library
 * (built from its source) and against ours, alternately, by LD_LIBRARY_PATH.
 *
 * With --pair CANN_LIB OURS_LIB (built without linking either) it loads both in one process
 * (dlopen, RTLD_LOCAL: each library's calls stay its own) and times them in short rounds
 * that alternate between them: on a machine busy with other work a round of one and the
 * next of the other see nearly the same load, so the per-round ratio is steadier than that
 * of two processes run one after the other. It prints per case and per clock the median
 * ns/record of each, the median, quartiles and range of the per-round ratios ours/CANN, and
 * the records each refused.
 *
 * Four cases, each on its own fresh tracer object (1024 slots of 112 bytes):
 *   locked1   1 thread, a locked object (noLock = 0)
 *   nolock1   1 thread, a noLock object
 *   locked4   4 threads on one locked object
 *   locked16  16 threads on one locked object (on 2 cores: writers preempted mid-record)
 * --only CASE runs that case alone (for an instruction count under callgrind).
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

enum { kMsgNum = 1024, kMsgSize = 112, kMaxThreads = 16, kMaxRounds = 1001 };

/* A libascend_trace: the one linked in, or one loaded by --pair. */
struct Lib {
  const char* name;
  TraHandle (*create)(TracerType, const char*, const TraceAttr*);
  TraStatus (*submit)(TraHandle, const void*, uint32_t);
  void (*destroy)(TraHandle);
};

static int64_t Now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct Worker {
  const struct Lib* lib;
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
    if (w->lib->submit(w->handle, record, kMsgSize) != TRACE_SUCCESS) ++failed;
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
static struct Result Run(const struct Lib* lib, TraHandle handle, int threads, long records) {
  struct Worker workers[kMaxThreads];
  atomic_int ready = 0;
  atomic_bool go = false;
  const long per_thread = records / threads;
  for (int t = 0; t < threads; ++t) {
    workers[t] = (struct Worker){.lib = lib, .handle = handle, .records = per_thread, .ready = &ready, .go = &go};
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

static TraHandle Create(const struct Lib* lib, const char* name, uint8_t no_lock) {
  TraceAttr attr;
  memset(&attr, 0, sizeof attr);
  attr.msgNum = kMsgNum;
  attr.msgSize = kMsgSize;
  attr.noLock = no_lock;
  const TraHandle h = lib->create(TRACER_TYPE_SCHEDULE, name, &attr);
  if (h < 0) {
    fprintf(stderr, "%s: AtraceCreateWithAttr(%s) failed: %ld\n", lib->name, name, (long)h);
    exit(1);
  }
  return h;
}

static void Load(struct Lib* lib, const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    exit(2);
  }
  lib->name = path;
  *(void**)&lib->create = dlsym(h, "AtraceCreateWithAttr");
  *(void**)&lib->submit = dlsym(h, "AtraceSubmit");
  *(void**)&lib->destroy = dlsym(h, "AtraceDestroy");
  if (lib->create == NULL || lib->submit == NULL || lib->destroy == NULL) {
    fprintf(stderr, "%s lacks the atrace API\n", path);
    exit(2);
  }
}

static int Cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Sorts v and returns its value at quantile q (nearest rank). */
static double Quantile(double* v, int n, double q) {
  qsort(v, (size_t)n, sizeof *v, Cmp);
  return v[(int)(q * (n - 1) + 0.5)];
}

static const struct {
  const char* name;
  uint8_t no_lock;
  int threads;
} kCases[] = {
    {"locked1", TRACE_LOCK_BASED, 1},
    {"nolock1", TRACE_LOCK_FREE, 1},
    {"locked4", TRACE_LOCK_BASED, 4},
    {"locked16", TRACE_LOCK_BASED, 16},
};
enum { kCaseCount = sizeof kCases / sizeof kCases[0] };

static const char* g_only = NULL;  /* --only CASE, else every case */

static int Selected(int c) { return g_only == NULL || strcmp(g_only, kCases[c].name) == 0; }

/* --pair: `libs[0]` is CANN's, `libs[1]` ours; `rounds` rounds of `records` per case. */
static void Pairs(const struct Lib libs[2], int rounds, long records) {
  static struct Result res[2][kMaxRounds];
  static double a[kMaxRounds], b[kMaxRounds], ratio[kMaxRounds];
  printf("pairs: %d rounds of %ld records per case and library, the order alternating\n", rounds, records);
  printf("%-9s %-4s %9s %9s %8s %15s %13s %9s %9s\n", "case", "", "CANN ns", "ours ns", "ours/C", "(p25-p75)",
         "(min-max)", "refusedC", "refusedO");
  for (int c = 0; c < kCaseCount; ++c) {
    if (!Selected(c)) continue;
    TraHandle h[2];
    long failed[2] = {0, 0};
    for (int l = 0; l < 2; ++l) {
      char object[32];
      snprintf(object, sizeof object, "pair_%s", kCases[c].name);
      h[l] = Create(&libs[l], object, kCases[c].no_lock);
      (void)Run(&libs[l], h[l], kCases[c].threads, records);  // warm-up
    }
    for (int r = 0; r < rounds; ++r) {
      for (int k = 0; k < 2; ++k) {
        const int l = (r % 2 == 0) ? k : 1 - k;
        res[l][r] = Run(&libs[l], h[l], kCases[c].threads, records);
        failed[l] += res[l][r].failed;
      }
    }
    for (int wall = 0; wall < 2; ++wall) {
      for (int r = 0; r < rounds; ++r) {
        a[r] = wall ? res[0][r].wall_ns_per_record : res[0][r].cpu_ns_per_record;
        b[r] = wall ? res[1][r].wall_ns_per_record : res[1][r].cpu_ns_per_record;
        ratio[r] = b[r] / a[r];
      }
      const double ma = Quantile(a, rounds, 0.5), mb = Quantile(b, rounds, 0.5);
      const double q1 = Quantile(ratio, rounds, 0.25), q2 = Quantile(ratio, rounds, 0.5),
                   q3 = Quantile(ratio, rounds, 0.75);
      printf("%-9s %-4s %9.1f %9.1f %7.2fx  (%5.2f-%5.2f)  (%4.2f-%4.2f) %9ld %9ld\n", kCases[c].name,
             wall ? "wall" : "cpu", ma, mb, q2, q1, q3, ratio[0], ratio[rounds - 1], failed[0], failed[1]);
    }
    libs[0].destroy(h[0]);
    libs[1].destroy(h[1]);
  }
}

int main(int argc, char** argv) {
  long records = 2000000;
  long warmup = 200000;
  int rounds = 101;
  const char* pair[2] = {NULL, NULL};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--records") == 0 && i + 1 < argc) {
      records = atol(argv[++i]);
    } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
      warmup = atol(argv[++i]);
    } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      g_only = argv[++i];
    } else if (strcmp(argv[i], "--pair") == 0 && i + 2 < argc) {
      pair[0] = argv[++i];
      pair[1] = argv[++i];
    } else {
      fprintf(stderr,
              "usage: %s [--records N] [--warmup N] [--only CASE] | --pair CANN_LIB OURS_LIB [--rounds N] [--records N] "
              "[--only CASE]\n",
              argv[0]);
      return 2;
    }
  }
  int known = g_only == NULL;
  for (int c = 0; c < kCaseCount; ++c) known |= Selected(c);
  if (!known) {
    fprintf(stderr, "--only: no case %s (locked1, nolock1, locked4, locked16)\n", g_only);
    return 2;
  }
  if (pair[0] != NULL) {
    if (rounds < 1 || rounds > kMaxRounds || records < kMaxThreads) {
      fprintf(stderr, "--pair takes 1..%d rounds of at least %d records\n", kMaxRounds, kMaxThreads);
      return 2;
    }
    struct Lib libs[2];
    Load(&libs[0], pair[0]);
    Load(&libs[1], pair[1]);
    Pairs(libs, rounds, records);
    return 0;
  }
  if (records < kMaxThreads || AtraceCreateWithAttr == NULL || AtraceSubmit == NULL) {
    fprintf(stderr, "no libascend_trace loaded, or --records too small\n");
    return 2;
  }
  const struct Lib linked = {"linked", AtraceCreateWithAttr, AtraceSubmit, AtraceDestroy};
  Dl_info info;
  printf("library %s\n", dladdr((void*)AtraceSubmit, &info) != 0 ? info.dli_fname : "?");
  for (int c = 0; c < kCaseCount; ++c) {
    if (!Selected(c)) continue;
    char object[32];
    snprintf(object, sizeof object, "bench_%s", kCases[c].name);
    const TraHandle h = Create(&linked, object, kCases[c].no_lock);
    (void)Run(&linked, h, kCases[c].threads, warmup);
    const struct Result r = Run(&linked, h, kCases[c].threads, records);
    printf("case %s cpu_ns %.2f wall_ns %.2f failed %ld clock %s\n", kCases[c].name, r.cpu_ns_per_record,
           r.wall_ns_per_record, r.failed, RingClock(object));
    linked.destroy(h);
  }
  return 0;
}
