/* An application of the drop-in that sets and resets NPU devices on command, as CANN's
 * runtime does at set-device and reset-device (device_traces_test.cc runs it under the
 * driver double). Commands on stdin, one per line, each answered on stdout:
 *   start N   AtraceReportStart(N)  -> "start N RC"
 *   timed-start N                   -> "start N RC NS" (the call's time, for bench/)
 *   stop N    AtraceReportStop(N)   -> "stop N"
 *   exit      return from main (the library's exit path, no stop)
 * "ready PID" is printed first. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atrace_api.h"
#include "atrace_pub.h"

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
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
    } else if (sscanf(line, "stop %d", &dev) == 1) {
      AtraceReportStop(dev);
      printf("stop %d\n", dev);
    } else if (strncmp(line, "exit", 4) == 0) {
      return 0;
    } else {
      printf("unknown command\n");
    }
  }
  return 0;
}
