/* A process that uses libascend_trace and then hangs as a stuck job does (issue 40):
 * tests/ascend_trace/process_dump_test.cc and bench/process_dump_bench.sh run it against the
 * real daemon, and dump it from outside.
 *
 *   hang_child [RECORDS [RINGS [EXTRA [idle|spin]]]]      defaults: 100 2 0 idle
 *
 * Blocks every signal it can, in every thread (signal 35 cannot reach the library's handler:
 * `asys collect -r=stacktrace` would get nothing). Creates RINGS tracers "hang_a",
 * "hang_b", ... and submits "<letter> record 0" .. "<letter> record RECORDS-1" to each. Then
 * two threads deadlock: "locker_ab" takes lock_a and then wants lock_b in take_b_after_a(),
 * "locker_ba" takes lock_b and then wants lock_a in take_a_after_b(). EXTRA more threads wait
 * on a condition nobody signals (idle) or spin, counting (spin: the benchmark's CPU users).
 * Prints "ready <tid of locker_ab> <tid of locker_ba>\n" once both hold their first lock,
 * and the main thread waits in pthread_join for locker_ab, for ever; with HANG_MAIN_ELSEWHERE
 * set in the environment it waits there from join_elsewhere() (the odd rank of a hung job,
 * tests/ascend_trace/hung_job_test.cc). With HANG_TICK_MS=N the main thread instead submits
 * "a tick K" to hang_a every N ms, for ever: a rank whose other threads are stuck but which
 * makes progress (hang_watch_test.cc: the hang watch must never dump it).
 * Exit code 10: a call failed. Built with -g -fno-omit-frame-pointer so that the stacks name
 * take_b_after_a, take_a_after_b, locker_main and main. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atrace_pub.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;
static pthread_mutex_t never = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never_signalled = PTHREAD_COND_INITIALIZER;
static pid_t locker_tids[2];
static volatile unsigned long spun;

/* noinline and not static: the stacks must show these names. */
__attribute__((noinline)) void take_b_after_a(void) { pthread_mutex_lock(&lock_b); }
__attribute__((noinline)) void take_a_after_b(void) { pthread_mutex_lock(&lock_a); }

__attribute__((noinline)) void *locker_main(void *arg) {
    const int first_a = arg != NULL;
    locker_tids[first_a ? 0 : 1] = (pid_t)syscall(SYS_gettid);
    pthread_mutex_lock(first_a ? &lock_a : &lock_b);
    pthread_barrier_wait(&both_hold);
    if (first_a) {
        take_b_after_a();
    } else {
        take_a_after_b();
    }
    return NULL;
}

__attribute__((noinline)) void *idle_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&never);
    for (;;) pthread_cond_wait(&never_signalled, &never);
    return NULL;
}

__attribute__((noinline)) void *spin_main(void *arg) {
    (void)arg;
    for (;;) ++spun;
    return NULL;
}

__attribute__((noinline)) void join_elsewhere(pthread_t t) { pthread_join(t, NULL); }

int main(int argc, char **argv) {
    const int records = argc > 1 ? atoi(argv[1]) : 100;
    const int rings = argc > 2 ? atoi(argv[2]) : 2;
    const int extra = argc > 3 ? atoi(argv[3]) : 0;
    const int spin = argc > 4 && strcmp(argv[4], "spin") == 0;
    sigset_t all;
    const char *tick_ms = getenv("HANG_TICK_MS");
    TraHandle first = -1;
    pthread_t ab, ba, other;
    char line[64], name[16];
    int r, i;
    sigfillset(&all);
    if (pthread_sigmask(SIG_SETMASK, &all, NULL) != 0) return 10; /* the threads inherit it */
    if (rings < 1 || rings > 26) return 10;
    for (r = 0; r < rings; ++r) {
        TraHandle h;
        snprintf(name, sizeof name, "hang_%c", 'a' + r);
        h = AtraceCreate(TRACER_TYPE_SCHEDULE, name);
        if (h < 0) return 10;
        if (r == 0) first = h;
        for (i = 0; i < records; ++i) {
            snprintf(line, sizeof line, "%c record %d", 'a' + r, i);
            if (AtraceSubmit(h, line, (uint32_t)strlen(line)) != TRACE_SUCCESS) return 10;
        }
    }
    if (pthread_barrier_init(&both_hold, NULL, 3) != 0) return 10;
    if (pthread_create(&ab, NULL, locker_main, &lock_a) != 0 || pthread_create(&ba, NULL, locker_main, NULL) != 0) {
        return 10;
    }
    pthread_setname_np(ab, "locker_ab");
    pthread_setname_np(ba, "locker_ba");
    for (i = 0; i < extra; ++i) {
        if (pthread_create(&other, NULL, spin ? spin_main : idle_main, NULL) != 0) return 10;
    }
    pthread_barrier_wait(&both_hold);
    printf("ready %d %d\n", (int)locker_tids[0], (int)locker_tids[1]);
    fflush(stdout);
    if (tick_ms != NULL) {
        for (i = 0;; ++i) {
            snprintf(line, sizeof line, "a tick %d", i);
            if (AtraceSubmit(first, line, (uint32_t)strlen(line)) != TRACE_SUCCESS) return 10;
            usleep((useconds_t)atoi(tick_ms) * 1000u);
        }
    }
    if (getenv("HANG_MAIN_ELSEWHERE") != NULL) join_elsewhere(ab); /* never returns */
    pthread_join(ab, NULL); /* never returns */
    return 0;
}
