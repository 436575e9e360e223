/* An application that loads libatrace_client with dlopen(RTLD_NOW | RTLD_LOCAL), as a plugin
 * host or a Python framework does, never linking it: run by dlopen_client_test.cc against a
 * real daemon. Prints what it saw, one fact a line; exits 0 once every call it made succeeded.
 *
 *   client_dlopen_child LIBRARY SOCKET use       emit and step by step, close, dlclose
 *   client_dlopen_child LIBRARY SOCKET reload    dlclose with a handle still open, dlopen again
 *   client_dlopen_child LIBRARY SOCKET fork      fork while a thread calls the library
 *   client_dlopen_child LIBRARY SOCKET threads   8 threads call it at once right after dlopen
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atraced/atrace_client.h"

/* The library's functions, found with dlsym on its own handle. */
typedef struct Api {
  void *lib;
  void (*options_init)(atrace_client_options *);
  int (*open)(const atrace_client_options *, atrace_client **);
  void (*close)(atrace_client *);
  const char *(*strerror)(int);
  int (*get_stats)(atrace_client *, atrace_client_stats *);
  int (*status)(atrace_client *, atrace_status *);
  int (*emit)(atrace_client *, const atrace_event_spec *, const atrace_file_spec *, const void *, size_t, unsigned,
              char *, size_t);
  int (*emit_async)(atrace_client *, const atrace_event_spec *, const atrace_file_spec *, const void *, size_t);
  int (*flush)(atrace_client *);
  int (*event_begin)(atrace_client *, const atrace_event_spec *, atrace_event **);
  int (*event_end)(atrace_event *, uint64_t *);
  int (*file_open)(atrace_event *, const atrace_file_spec *, atrace_file **);
  int (*file_write)(atrace_file *, const void *, size_t);
  int (*file_get_fd)(atrace_file *, int *);
  int (*file_close)(atrace_file *, uint64_t *);
  const char *(*file_path)(const atrace_file *);
} Api;

static const char *g_library;
static const char *g_socket;
static Api g_api;

#define FIND(field, name)                                         \
  do {                                                            \
    *(void **)(&g_api.field) = dlsym(g_api.lib, name);            \
    if (g_api.field == NULL) {                                    \
      fprintf(stderr, "dlsym %s: %s\n", name, dlerror());         \
      return -1;                                                  \
    }                                                             \
  } while (0)

static int Load(void) {
  memset(&g_api, 0, sizeof g_api);
  g_api.lib = dlopen(g_library, RTLD_NOW | RTLD_LOCAL);
  if (g_api.lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return -1;
  }
  FIND(options_init, "atrace_client_options_init");
  FIND(open, "atrace_client_open");
  FIND(close, "atrace_client_close");
  FIND(strerror, "atrace_client_strerror");
  FIND(get_stats, "atrace_client_get_stats");
  FIND(status, "atrace_client_status");
  FIND(emit, "atrace_emit");
  FIND(emit_async, "atrace_emit_async");
  FIND(flush, "atrace_client_flush");
  FIND(event_begin, "atrace_event_begin");
  FIND(event_end, "atrace_event_end");
  FIND(file_open, "atrace_file_open");
  FIND(file_write, "atrace_file_write");
  FIND(file_get_fd, "atrace_file_get_fd");
  FIND(file_close, "atrace_file_close");
  FIND(file_path, "atrace_file_path");
  return 0;
}

static atrace_client *Open(void) {
  atrace_client_options o;
  atrace_client *c = NULL;
  g_api.options_init(&o);
  o.socket_path = g_socket;
  o.connect_timeout_ms = 20000; /* a busy CI machine: bounds, not expectations */
  o.io_timeout_ms = 20000;
  int rc = g_api.open(&o, &c);
  if (rc != 0) fprintf(stderr, "open: %s\n", g_api.strerror(rc));
  return c;
}

/* A host schedule event and an object file `name`. */
static void Specs(const char *name, atrace_event_spec *ev, atrace_file_spec *f) {
  memset(ev, 0, sizeof *ev);
  memset(f, 0, sizeof *f);
  ev->kind = ATRACE_EVENT_SCHEDULE;
  ev->side = ATRACE_SIDE_HOST;
  f->form = ATRACE_FILE_OBJECT;
  f->name = name;
}

/* One such event holding `text`; its path into path. */
static int Emit(atrace_client *c, const char *name, const char *text, char *path, size_t size) {
  atrace_event_spec ev;
  atrace_file_spec f;
  Specs(name, &ev, &f);
  int rc = g_api.emit(c, &ev, &f, text, strlen(text), 0, path, size);
  if (rc != 0) fprintf(stderr, "emit %s: %s\n", name, g_api.strerror(rc));
  return rc;
}

static uint64_t Connects(atrace_client *c) {
  atrace_client_stats s;
  return g_api.get_stats(c, &s) == 0 ? s.connects : 0;
}

/* The descriptors open now, as a set (fds above the bound are not expected here). */
enum { kMaxFd = 4096 };
typedef struct FdSet {
  unsigned char open[kMaxFd];
} FdSet;

static void OpenFds(FdSet *set) {
  memset(set, 0, sizeof *set);
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) return;
  int own = dirfd(d);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] != '.' && fd != own && fd < kMaxFd) set->open[fd] = 1;
  }
  closedir(d);
}

/* Descriptors open now that were not in `before`; those without FD_CLOEXEC into *inherited. */
static int NewFds(const FdSet *before, int *inherited) {
  FdSet now;
  OpenFds(&now);
  int added = 0;
  *inherited = 0;
  for (int fd = 0; fd < kMaxFd; ++fd) {
    if (now.open[fd] && !before->open[fd]) {
      ++added;
      int flags = fcntl(fd, F_GETFD);
      if (flags < 0 || !(flags & FD_CLOEXEC)) ++*inherited;
    }
    if (!now.open[fd] && before->open[fd]) --added;
  }
  return added;
}

/* Whether the library's file is still mapped into the process. */
static int Mapped(void) {
  const char *base = strrchr(g_library, '/');
  base = base != NULL ? base + 1 : g_library;
  FILE *maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return -1;
  char line[4096];
  int found = 0;
  while (fgets(line, sizeof line, maps) != NULL) {
    if (strstr(line, base) != NULL) found = 1;
  }
  fclose(maps);
  return found;
}

/* Emit, then an event step by step: a request append and one through the passed descriptor.
 * The library's descriptors are counted while they are all open (the connection and the
 * file's), then the handle is closed and the library unloaded. */
static int Use(void) {
  FdSet before;
  OpenFds(&before);
  if (Load() != 0) return 4;
  /* RTLD_LOCAL: nothing of the library joins the global scope. */
  printf("global scope %s\n", dlsym(RTLD_DEFAULT, "atrace_emit") == NULL ? "clean" : "has atrace_emit");
  atrace_client *c = Open();
  if (c == NULL) return 1;
  char path[ATRACE_PATH_MAX];
  if (Emit(c, "dl_emit", "emitted after dlopen\n", path, sizeof path) != 0) return 1;
  printf("emit %s\n", path);

  atrace_event_spec ev;
  atrace_file_spec f;
  Specs("dl_steps", &ev, &f);
  atrace_event *event = NULL;
  atrace_file *file = NULL;
  int fd = -1;
  int rc = g_api.event_begin(c, &ev, &event);
  if (rc == 0) rc = g_api.file_open(event, &f, &file);
  if (rc == 0) rc = g_api.file_write(file, "by request\n", 11);
  if (rc == 0) rc = g_api.file_get_fd(file, &fd);
  if (rc != 0) {
    fprintf(stderr, "step by step: %s\n", g_api.strerror(rc));
    return 1;
  }
  if (write(fd, "by descriptor\n", 14) != 14) return 1;
  int inherited = 0;
  int added = NewFds(&before, &inherited);
  printf("library fds %d, without cloexec %d\n", added, inherited);
  snprintf(path, sizeof path, "%s", g_api.file_path(file));
  rc = g_api.file_close(file, NULL);
  if (rc == 0) rc = g_api.event_end(event, NULL);
  if (rc != 0) return 1;
  printf("steps %s\n", path);

  g_api.close(c);
  printf("dlclose %d\n", dlclose(g_api.lib));
  printf("mapped %d\n", Mapped());
  printf("fds left %d\n", NewFds(&before, &inherited));
  return 0;
}

/* The handle an application forgot to close before dlclose: it stays reachable from here, as
 * an application's pointer would (LeakSanitizer counts it as held, not lost). */
static atrace_client *g_forgotten;

static int Reload(void) {
  FdSet before;
  OpenFds(&before);
  if (Load() != 0) return 4;
  g_forgotten = Open();
  char path[ATRACE_PATH_MAX];
  if (g_forgotten == NULL || Emit(g_forgotten, "dl_first", "first load\n", path, sizeof path) != 0) return 1;
  printf("first load %s\n", path);
  printf("dlclose %d\n", dlclose(g_api.lib));
  int inherited = 0;
  printf("fds held after dlclose %d\n", NewFds(&before, &inherited));

  if (Load() != 0) return 4;
  atrace_client *c = Open();
  if (c == NULL || Emit(c, "dl_second", "second load\n", path, sizeof path) != 0) return 1;
  printf("second load %s\n", path);
  printf("second connects %llu\n", (unsigned long long)Connects(c));
  g_api.close(c);
  printf("dlclose %d\n", dlclose(g_api.lib));
  printf("fds held at the end %d\n", NewFds(&before, &inherited));
  return 0;
}

/* A thread that asks the daemon for its status on a handle of its own until told to stop: a
 * round trip each, so it is inside the library at any moment, and it makes no directory (a
 * stream of events would age the test's own ones out on a slow machine). */
typedef struct Worker {
  atrace_client *client;
  int stop;   /* __atomic */
  int done;   /* __atomic: round trips */
  int failed; /* __atomic */
} Worker;

static void *WorkerMain(void *arg) {
  Worker *w = arg;
  atrace_status status;
  while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
    int rc = g_api.status(w->client, &status);
    if (rc != 0) {
      fprintf(stderr, "status: %s\n", g_api.strerror(rc));
      __atomic_store_n(&w->failed, 1, __ATOMIC_RELEASE);
      break;
    }
    __atomic_add_fetch(&w->done, 1, __ATOMIC_RELEASE);
  }
  return NULL;
}

/* Python's multiprocessing (fork) in C: a thread is inside the library at any moment, the
 * main thread forks; the child uses the handle it inherited and a new one, then exits
 * normally; the parent's connection must not notice. */
static int Fork(void) {
  if (Load() != 0) return 4;
  Worker w = {Open(), 0, 0, 0};
  atrace_client *c = Open();
  if (w.client == NULL || c == NULL) return 1;
  pthread_t thread;
  if (pthread_create(&thread, NULL, WorkerMain, &w) != 0) return 1;
  while (__atomic_load_n(&w.done, __ATOMIC_ACQUIRE) < 2 && !__atomic_load_n(&w.failed, __ATOMIC_ACQUIRE)) usleep(1000);
  char path[ATRACE_PATH_MAX];
  if (Emit(c, "dl_parent_before", "parent before fork\n", path, sizeof path) != 0) return 1;
  printf("parent before %s\n", path);
  /* Events in flight on the parent's connection at the fork: their replies are the parent's. */
  atrace_event_spec ev;
  atrace_file_spec f;
  Specs("dl_parent_async", &ev, &f);
  for (int i = 0; i < 3; ++i) {
    if (g_api.emit_async(c, &ev, &f, "in flight at the fork\n", 22) != 0) return 1;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    /* The child: the worker thread is not here; its handle is not touched (it may have been
     * inside a call at the fork: the header's one rule). */
    if (Emit(c, "dl_child", "child, inherited handle\n", path, sizeof path) != 0) exit(1);
    printf("child inherited %s\n", path);
    printf("child connects %llu\n", (unsigned long long)Connects(c));
    atrace_client *own = Open();
    if (own == NULL || Emit(own, "dl_child_own", "child, own handle\n", path, sizeof path) != 0) exit(1);
    printf("child own %s\n", path);
    g_api.close(own);
    g_api.close(c); /* closes the child's copy of the socket only */
    exit(0);        /* exit handlers and the library's destructors run */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  if (Emit(c, "dl_parent_after", "parent after the child\n", path, sizeof path) != 0) return 1;
  printf("parent after %s\n", path);
  printf("parent flush %d\n", g_api.flush(c));
  atrace_client_stats stats;
  g_api.get_stats(c, &stats);
  printf("parent connects %llu, async ok %llu, failed %llu\n", (unsigned long long)stats.connects,
         (unsigned long long)stats.async_ok, (unsigned long long)stats.async_failed);
  int before_stop = __atomic_load_n(&w.done, __ATOMIC_ACQUIRE);
  while (__atomic_load_n(&w.done, __ATOMIC_ACQUIRE) < before_stop + 2 && !__atomic_load_n(&w.failed, __ATOMIC_ACQUIRE)) usleep(1000);
  __atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
  pthread_join(thread, NULL);
  printf("thread failed %d, connects %llu\n", w.failed, (unsigned long long)Connects(w.client));
  g_api.close(w.client);
  g_api.close(c);
  printf("dlclose %d\n", dlclose(g_api.lib));
  return w.failed;
}

enum { kThreads = 8 };
static pthread_barrier_t g_start;
static atrace_client *g_shared;
static char g_paths[kThreads][2][ATRACE_PATH_MAX];

/* Each thread's first calls race the others': a handle of its own, and the shared one. */
static void *RacerMain(void *arg) {
  long i = (long)arg;
  char name[32], text[64];
  pthread_barrier_wait(&g_start);
  atrace_client *own = Open();
  snprintf(name, sizeof name, "dl_own_%ld", i);
  snprintf(text, sizeof text, "thread %ld, own handle\n", i);
  if (own == NULL || Emit(own, name, text, g_paths[i][0], sizeof g_paths[i][0]) != 0) return (void *)1;
  g_api.close(own);
  snprintf(name, sizeof name, "dl_shared_%ld", i);
  snprintf(text, sizeof text, "thread %ld, shared handle\n", i);
  if (Emit(g_shared, name, text, g_paths[i][1], sizeof g_paths[i][1]) != 0) return (void *)1;
  return NULL;
}

static int Threads(void) {
  if (Load() != 0) return 4;
  pthread_barrier_init(&g_start, NULL, kThreads + 1);
  pthread_t threads[kThreads];
  for (long i = 0; i < kThreads; ++i) {
    if (pthread_create(&threads[i], NULL, RacerMain, (void *)i) != 0) return 1;
  }
  g_shared = Open(); /* its first call races the threads' */
  pthread_barrier_wait(&g_start);
  int failed = g_shared == NULL;
  for (int i = 0; i < kThreads; ++i) {
    void *rc = NULL;
    pthread_join(threads[i], &rc);
    if (rc != NULL) failed = 1;
  }
  if (failed) return 1;
  for (int i = 0; i < kThreads; ++i) printf("own path %s\nshared path %s\n", g_paths[i][0], g_paths[i][1]);
  printf("shared connects %llu\n", (unsigned long long)Connects(g_shared));
  g_api.close(g_shared);
  printf("dlclose %d\n", dlclose(g_api.lib));
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s LIBRARY SOCKET use|reload|fork|threads\n", argv[0]);
    return 2;
  }
  g_library = argv[1];
  g_socket = argv[2];
  if (strcmp(argv[3], "use") == 0) return Use();
  if (strcmp(argv[3], "reload") == 0) return Reload();
  if (strcmp(argv[3], "fork") == 0) return Fork();
  if (strcmp(argv[3], "threads") == 0) return Threads();
  fprintf(stderr, "unknown scenario %s\n", argv[3]);
  return 2;
}
