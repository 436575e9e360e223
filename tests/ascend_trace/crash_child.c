/* A process that uses libascend_trace and then dies in the way its first argument names.
 * tests/ascend_trace/crash_test.cc runs it against the real daemon.
 *
 *   crash_child MODE N
 *
 * Creates object "crash_obj" and submits "record 0" .. "record N-1"; creates exitSave object
 * "crash_exit", submits "exit record" and destroys it; prints "ready\n" on stdout; then:
 *   wait    sleeps until it is killed (the parent sends SIGKILL)
 *   exit3   _exit(3): no destructor, no GOODBYE
 *   normal  returns from main: the library says GOODBYE
 *   segv    dereferences NULL in crash_here() (the library's handler reports it)
 *   abort   calls abort() in abort_here()
 *   segv-on-input  reads one byte from stdin first (so the parent can stop or kill the
 *           daemon), then as segv
 *   two-threads    two threads dereference NULL at the same moment
 *   segv-chained   installs its own SIGSEGV handler (which _exits with 42) before using
 *           the library, then as segv: the library's handler must pass the signal on
 *   dump-on-input  reads one byte from stdin (the parent sends signal 35 meanwhile: the
 *           read goes on after the handler), submits "record N" .. "record 2N-1", returns
 *   dump-self-timed  reads one byte from stdin, raises signal 35 itself, submits as above
 *           and exits with the handler's time in tenths of a second (at most 100)
 *   thread-overflow  a second thread (256 KiB stack) submits "thread record" (its first
 *           API call), then recurses until its stack overflows
 *   main-exits  the main thread calls pthread_exit; a second thread waits until the main
 *           thread is a zombie (/proc/self/task/<pid>/stat says Z), then as segv
 *   oom     first moves itself into the cgroup whose cgroup.procs $CRASH_CHILD_CGROUP_PROCS
 *           names (before the library connects: the daemon reads the cgroup at HELLO), then
 *           after one byte on stdin touches memory until the OOM killer ends it
 *   report  reports crash_obj's event now (a schedule dir), then returns
 *   report-exec  as report, then executes $CRASH_CHILD_EXEC (a set-id copy of this program,
 *           in the tests of a credential change) with "report N": the same process, as
 *           another user, reports again
 * Exit code 10: a call failed. Built with -g -fno-omit-frame-pointer: the daemon's
 * backtrace names crash_here/abort_here and main. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "atrace_api.h"
#include "atrace_pub.h"

/* noinline and not static: the backtrace must show these names. Not instrumented: under
 * ASan/UBSan the store must still be a real fault, not a sanitizer report. */
__attribute__((noinline, no_sanitize("address", "undefined"))) void crash_here(void) {
    volatile int *volatile p = NULL;
    *p = 42;
}

__attribute__((noinline)) void abort_here(void) { abort(); }

static void own_handler(int signo) {
    (void)signo;
    _exit(42);
}

static int join_cgroup(const char *procs) {
    FILE *f;
    int ok;
    if (procs == NULL) return -1;
    f = fopen(procs, "w");
    if (f == NULL) return -1;
    ok = fprintf(f, "%d\n", (int)getpid()) > 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Touches 1 MiB after 1 MiB, never freed, until the kernel kills the process. */
/* Where each allocation escapes to: an allocation nobody reads may be removed by the
 * compiler (clang does, at -O1), and then nothing is ever eaten. */
static char *volatile eaten;

static void exhaust_memory(void) {
    for (;;) {
        char *p = malloc(1 << 20);
        if (p == NULL) continue;
        memset(p, 1, 1 << 20);
        eaten = p;
    }
}

/* Not a tail call (the sum comes after it), so every level keeps its frame. */
__attribute__((noinline, no_sanitize("address"))) int overflow_here(volatile char *above, int depth) {
    volatile char frame[512];
    frame[0] = above ? above[0] : (char)depth;
    return overflow_here(frame, depth + 1) + frame[depth % 512];
}

static void *overflow_thread(void *arg) {
    if (AtraceSubmit(*(TraHandle *)arg, "thread record", 13) != TRACE_SUCCESS) _exit(10);
    overflow_here(NULL, 0);
    return NULL;
}

/* Until the main thread (the thread-group leader, tid == pid) has exited and is a zombie,
 * at most 10 s. */
static void *crash_after_main_exits(void *arg) {
    char path[64], task_stat[256];
    int i;
    (void)arg;
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)getpid());
    for (i = 0; i < 1000; ++i) {
        FILE *f = fopen(path, "r");
        size_t got = f ? fread(task_stat, 1, sizeof task_stat - 1, f) : 0;
        const char *state;
        if (f) fclose(f);
        task_stat[got] = '\0';
        state = strrchr(task_stat, ')');
        if (state != NULL && state[1] == ' ' && state[2] == 'Z') break;
        usleep(10000);
    }
    crash_here();
    return NULL;
}

static pthread_barrier_t together;

static void *crash_together(void *arg) {
    (void)arg;
    pthread_barrier_wait(&together);
    crash_here();
    return NULL;
}

int main(int argc, char **argv) {
    TraceAttr attr;
    TraHandle h, x;
    int i, n;
    char line[64];

    if (argc != 3) return 2;
    n = atoi(argv[2]);
    if (strcmp(argv[1], "segv-chained") == 0) signal(SIGSEGV, own_handler);
    if (strcmp(argv[1], "oom") == 0 && join_cgroup(getenv("CRASH_CHILD_CGROUP_PROCS")) != 0) return 12;
    memset(&attr, 0, sizeof attr);
    h = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "crash_obj", &attr);
    attr.exitSave = true;
    x = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "crash_exit", &attr);
    if (h < 0 || x < 0) return 10;
    for (i = 0; i < n; ++i) {
        snprintf(line, sizeof line, "record %d", i);
        if (AtraceSubmit(h, line, (uint32_t)strlen(line)) != TRACE_SUCCESS) return 10;
    }
    if (AtraceSubmit(x, "exit record", 11) != TRACE_SUCCESS) return 10;
    AtraceDestroy(x);
    printf("ready\n");
    fflush(stdout);
    if (strcmp(argv[1], "wait") == 0) {
        for (;;) pause();
    }
    if (strcmp(argv[1], "exit3") == 0) _exit(3);
    if (strcmp(argv[1], "segv-on-input") == 0) {
        char c;
        if (read(0, &c, 1) != 1) return 11;
        crash_here();
    }
    if (strcmp(argv[1], "segv") == 0 || strcmp(argv[1], "segv-chained") == 0) crash_here();
    if (strcmp(argv[1], "two-threads") == 0) {
        pthread_t t;
        pthread_barrier_init(&together, NULL, 2);
        if (pthread_create(&t, NULL, crash_together, NULL) != 0) return 10;
        crash_together(NULL);
    }
    if (strcmp(argv[1], "main-exits") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, crash_after_main_exits, NULL) != 0) return 10;
        pthread_exit(NULL);
    }
    if (strcmp(argv[1], "abort") == 0) abort_here();
    if (strcmp(argv[1], "thread-overflow") == 0) {
        pthread_t t;
        pthread_attr_t small;
        pthread_attr_init(&small);
        pthread_attr_setstacksize(&small, 256 * 1024);
        if (pthread_create(&t, &small, overflow_thread, &h) != 0) return 10;
        pthread_join(t, NULL);
    }
    if (strcmp(argv[1], "report") == 0 || strcmp(argv[1], "report-exec") == 0) {
        TraEventHandle ev = AtraceEventCreate("crash_event");
        TraceEventAttr event_attr;
        const char *next = getenv("CRASH_CHILD_EXEC");
        memset(&event_attr, 0, sizeof event_attr);
        event_attr.limitedNum = 1;
        if (ev < 0 || AtraceEventSetAttr(ev, &event_attr) != TRACE_SUCCESS || AtraceEventBindTrace(ev, h) != TRACE_SUCCESS ||
            AtraceEventReportSync(ev) != TRACE_SUCCESS) {
            return 10;
        }
        if (strcmp(argv[1], "report-exec") == 0) {
            char *const next_argv[] = {(char *)next, "report", argv[2], NULL};
            extern char **environ;
            const int null_fd = open("/dev/null", O_WRONLY);
            if (next == NULL || null_fd < 0 || dup2(null_fd, 1) != 1) return 10;  /* the parent reads only the first "ready" */
            execve(next, next_argv, environ);
            return 13;
        }
    }
    if (strcmp(argv[1], "oom") == 0) {
        char c;
        if (read(0, &c, 1) != 1) return 11;
        exhaust_memory();
    }
    if (strcmp(argv[1], "dump-on-input") == 0 || strcmp(argv[1], "dump-self-timed") == 0) {
        char c;
        struct timespec t0, t1;
        long tenths = 0;
        if (read(0, &c, 1) != 1) return 11;
        if (strcmp(argv[1], "dump-self-timed") == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t0);
            raise(35);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            tenths = (t1.tv_sec - t0.tv_sec) * 10 + (t1.tv_nsec - t0.tv_nsec) / 100000000;
        }
        for (i = n; i < 2 * n; ++i) {
            snprintf(line, sizeof line, "record %d", i);
            if (AtraceSubmit(h, line, (uint32_t)strlen(line)) != TRACE_SUCCESS) return 10;
        }
        return tenths > 100 ? 100 : (int)tenths;
    }
    return 0;
}
