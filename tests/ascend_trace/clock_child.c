/* A process that stamps records with the time it submits them, for ring_clock_test.cc.
 *
 *   clock_child N
 *
 * Creates exitSave object "clock_obj" and submits N records "wall=<CLOCK_REALTIME ns>", 5 ms
 * apart, then sleeps 300 ms (so the newest record is well in the past when the exit save
 * places it) and returns from main: the library's GOODBYE saves the ring. Exit code 20 +
 * the ring header's flags, read from its own memfd ("memfd:atrace:clock_obj"), so the test
 * knows which clock the library chose; 10: a call failed, 11: the memfd was not found. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "atrace_pub.h"

static int ring_flags(void) {
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int flags = -1;
    if (d == NULL) return -1;
    while ((e = readdir(d)) != NULL && flags < 0) {
        char link[64], target[128];
        ssize_t n;
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        if (strncmp(target, "/memfd:atrace:clock_obj", 23) == 0) {
            const unsigned char *h = mmap(NULL, 128, PROT_READ, MAP_SHARED, atoi(e->d_name), 0);
            if (h == MAP_FAILED) continue;
            flags = h[20] | h[21] << 8 | h[22] << 16 | h[23] << 24; /* ATR_RING_OFF_FLAGS */
            munmap((void *)h, 128);
        }
    }
    closedir(d);
    return flags;
}

int main(int argc, char **argv) {
    TraceAttr attr = {0};
    TraHandle h;
    int i, n, flags;
    if (argc != 2) return 2;
    n = atoi(argv[1]);
    attr.exitSave = true;
    h = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "clock_obj", &attr);
    if (h < 0) return 10;
    for (i = 0; i < n; ++i) {
        struct timespec ts, pause = {0, 5000000};
        char line[64];
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(line, sizeof line, "wall=%lld", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
        if (AtraceSubmit(h, line, (uint32_t)strlen(line)) != TRACE_SUCCESS) return 10;
        nanosleep(&pause, NULL);
    }
    flags = ring_flags();
    if (flags < 0) return 11;
    usleep(300000);
    return 20 + flags;
}
