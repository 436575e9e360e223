/* An application of the drop-in that sets and resets NPU devices on command, as CANN's
 * runtime does at set-device and reset-device (device_traces_test.cc runs it under the
 * driver double). Commands on stdin, one per line, each answered on stdout:
 *   start N   AtraceReportStart(N)  -> "start N RC"
 *   timed-start N                   -> "start N RC NS" (the call's time, for bench/)
 *   stop N    AtraceReportStop(N)   -> "stop N"
 *   timed-stop N                    -> "stop N NS" (the call's time, measured here)
 *   fork N    fork; the child calls AtraceReportStart(N) itself -> "forked CPID" (the parent)
 *             and "child CPID RC" (the child), in either order; the child then waits
 *   release   let the forked child return from main and reap it -> "released STATUS"
 *   dlclose   (the dlopen build) dlclose the library, which stays loaded (-z nodelete) -> "dlclosed RC"
 *   exit      return from main (the library's exit path, no stop)
 * "ready PID" is printed first.
 *
 * Built twice: linked at start-up, and with DEVICE_CHILD_DLOPEN, where the library is loaded
 * with dlopen from the path in ASCEND_TRACE_LIBRARY_PATH, as Python frameworks load CANN's
 * libraries (the order of the library's exit work differs between the two). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atrace_api.h"
#include "atrace_pub.h"

#ifdef DEVICE_CHILD_DLOPEN
#include <dlfcn.h>
static void* g_lib;
static TraStatus (*g_start)(int32_t);
static void (*g_stop)(int32_t);
#define AtraceReportStart g_start
#define AtraceReportStop g_stop

/* RTLD_LOCAL as ctypes.CDLL: nothing of the library is visible to what loads after it. */
static int LoadLibrary(void) {
  const char* path = getenv("ASCEND_TRACE_LIBRARY_PATH");
  g_lib = path != NULL ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (g_lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", path != NULL ? dlerror() : "ASCEND_TRACE_LIBRARY_PATH is not set");
    return -1;
  }
  *(void**)&g_start = dlsym(g_lib, "AtraceReportStart");
  *(void**)&g_stop = dlsym(g_lib, "AtraceReportStop");
  return g_start != NULL && g_stop != NULL ? 0 : -1;
}
#endif
static long long NowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The forked child: starts its own receiver (the parent's threads did not come along),
 * then waits until the parent closes `hold` and returns through the library's exit path. */
static int ForkedChild(int dev, int hold) {
  printf("child %d %d\n", (int)getpid(), (int)AtraceReportStart(dev));
  char c;
  while (read(hold, &c, 1) > 0) {
  }
  return 0;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
#ifdef DEVICE_CHILD_DLOPEN
  if (LoadLibrary() != 0) return 4;
#endif
  int hold = -1;  /* the write end the forked child waits on */
  pid_t forked = -1;
  printf("ready %d\n", (int)getpid());
  char line[128];
  while (fgets(line, sizeof line, stdin) != NULL) {
    int dev = 0;
    if (sscanf(line, "timed-start %d", &dev) == 1) {
      struct timespec a, b;
      clock_gettime(CLOCK_MONOTONIC, &a);
      const int rc = (int)AtraceReportStart(dev);
      clock_gettime(CLOCK_MONOTONIC, &b);
      printf("start %d %d %lld\n", dev, rc, (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    } else if (sscanf(line, "start %d", &dev) == 1) {
      printf("start %d %d\n", dev, (int)AtraceReportStart(dev));
    } else if (sscanf(line, "timed-stop %d", &dev) == 1) {
      struct timespec a, b;
      clock_gettime(CLOCK_MONOTONIC, &a);
      AtraceReportStop(dev);
      clock_gettime(CLOCK_MONOTONIC, &b);
      printf("stop %d %lld\n", dev, (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    } else if (sscanf(line, "stop %d", &dev) == 1) {
      AtraceReportStop(dev);
      printf("stop %d\n", dev);
    } else if (sscanf(line, "fork %d", &dev) == 1) {
      int p[2];
      if (pipe(p) != 0) return 3;
      forked = fork();
      if (forked < 0) return 3;
      if (forked == 0) {
        close(p[1]);
        return ForkedChild(dev, p[0]);
      }
      close(p[0]);
      hold = p[1];
      printf("forked %d\n", (int)forked);
    } else if (strncmp(line, "release", 7) == 0) {
      close(hold);
      int status = -1;
      waitpid(forked, &status, 0);
      printf("released %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
#ifdef DEVICE_CHILD_DLOPEN
    } else if (strncmp(line, "dlclose", 7) == 0) {
      printf("dlclosed %d\n", dlclose(g_lib));
#endif
    } else if (strncmp(line, "exit", 4) == 0) {
      return 0;
    } else {
      printf("unknown command\n");
    }
  }
  return 0;
}
