/* libatrace_client: the C ABI for writing trace events to atraced.
 *
 * Compiles as C99 and C++. Every handle is opaque. Every function that can fail returns 0 or
 * a negative errno value; atrace_client_strerror() turns it into text, and
 * atrace_client_last_message() gives the daemon's own explanation of the last refused
 * request. No function raises SIGPIPE, calls exit() or abort(), or blocks longer than the
 * timeouts in atrace_client_options (a call that has to (re)connect first may take the
 * connect timeout plus the I/O timeout).
 *
 * Threads: a client handle may be shared between threads. Calls on one handle (and on the
 * events and files it created) are serialized by a mutex inside the handle, so they are safe
 * but never run in parallel; use one handle per thread for parallel writers.
 *
 * fork(): a child that uses a handle it inherited gets its own connection on its first call
 * (the handle notices the pid change). Events and files the parent opened are not usable in
 * the child (-ECONNRESET). The parent's connection is never disturbed. Do not fork while
 * another thread is inside a call on the same handle.
 *
 * dlopen(): the library may be loaded with dlopen (RTLD_LOCAL too) and first called from several
 * threads at once; its descriptors are close-on-exec. Close every handle before dlclose: one
 * left open keeps its memory and its connection until the process exits.
 *
 * Daemon restarts: when the connection is found dead at the start of a call, the call
 * reconnects (HELLO again) and proceeds. Events and files opened on the old connection are
 * lost: calls on them return -ECONNRESET (atrace_event_end and atrace_file_close still free
 * them). A call during which the daemon disappears or times out returns the error and drops
 * the connection; nothing is retried behind the application's back.
 *
 * See docs/CLIENT.md for the full contract.
 */
#ifndef ATRACED_ATRACE_CLIENT_H_
#define ATRACED_ATRACE_CLIENT_H_

#include <stddef.h>
#include <stdint.h>

#if defined(ATRACE_CLIENT_BUILDING)
#define ATRACE_EXPORT __attribute__((visibility("default")))
#else
#define ATRACE_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Event kinds, sides and file forms: the same numbers as the wire protocol. */
enum atrace_event_kind { ATRACE_EVENT_SCHEDULE = 1, ATRACE_EVENT_STACKCORE = 2, ATRACE_EVENT_EXIT = 3 };
enum atrace_side { ATRACE_SIDE_HOST = 0, ATRACE_SIDE_DEVICE = 1 };
enum atrace_file_form { ATRACE_FILE_OBJECT = 1, ATRACE_FILE_TS = 2, ATRACE_FILE_STACKCORE = 3 };

/* Default timeouts, in milliseconds. */
#define ATRACE_DEFAULT_CONNECT_TIMEOUT_MS 1000
#define ATRACE_DEFAULT_IO_TIMEOUT_MS 1000
/* Default bound on asynchronous events in flight. */
#define ATRACE_DEFAULT_MAX_IN_FLIGHT 64
/* A buffer this large always holds a path the daemon reports. */
#define ATRACE_PATH_MAX 4096

/* Option flags. */
#define ATRACE_OPT_NO_FD_PASSING 0x1u /* do not ask for descriptor passing in HELLO */
#define ATRACE_OPT_PROCESS_DUMP 0x2u  /* ask for live process dumps (atrace_client_dump_processes) in HELLO */
#define ATRACE_OPT_LIST_LIVE 0x4u     /* ask for live process listings (atrace_client_list_live) in HELLO */

/* atrace_emit flags. */
#define ATRACE_EMIT_VIA_FD 0x1u /* write the data through FILE_GET_FD (two round trips) */

typedef struct atrace_client atrace_client;
typedef struct atrace_event atrace_event;
typedef struct atrace_file atrace_file;

typedef struct atrace_client_options {
  /* NULL: $ATRACED_SOCKET if set, else /run/atraced/atraced.sock, then
   * $XDG_RUNTIME_DIR/atraced.sock (tried in that order). */
  const char *socket_path;
  int connect_timeout_ms; /* connect + HELLO; <= 0: ATRACE_DEFAULT_CONNECT_TIMEOUT_MS */
  int io_timeout_ms;      /* each call's requests and replies; <= 0: the default */
  unsigned max_in_flight; /* atrace_emit_async bound; 0: ATRACE_DEFAULT_MAX_IN_FLIGHT */
  unsigned flags;         /* ATRACE_OPT_* */
} atrace_client_options;

/* What to begin. */
typedef struct atrace_event_spec {
  int kind;           /* enum atrace_event_kind */
  int side;           /* enum atrace_side */
  uint32_t device_id; /* ATRACE_SIDE_DEVICE: 0..1023; host: 0 */
  const char *time;   /* NULL: the daemon's clock; device events: 20 digits YYYYMMDDhhmmssmmmuuu */
} atrace_event_spec;

/* What file to create in an event. */
typedef struct atrace_file_spec {
  int form;           /* enum atrace_file_form */
  const char *name;   /* OBJECT: object name (1..31 of [A-Za-z0-9_.-]); STACKCORE: program
                       * name, or NULL for the caller's own (the daemon asks the kernel) */
  int binary;         /* OBJECT: non-zero for .bin instead of .txt */
  uint32_t device_id; /* TS: the device */
  int signo;          /* STACKCORE */
  int tid;            /* STACKCORE */
  const char *time;   /* STACKCORE: NULL (daemon's clock) or 20 digits */
} atrace_file_spec;

typedef struct atrace_status {
  uint32_t record_num; /* directories kept per class */
  uint32_t host_dirs;
  uint32_t device_dirs;
  uint32_t exit_dirs;
  uint32_t clients;
  uint64_t events_begun;
  uint64_t dirs_aged;
  uint64_t bytes_written;     /* disk taken: allocated blocks (st_blocks * 512) */
  uint64_t removal_failures;
  uint64_t requests_refused;
  char root[ATRACE_PATH_MAX]; /* the spool root, NUL-terminated */
  /* Appended after 0.1.0: filled by atrace_client_status_ex only (atrace_client_status
   * writes no further than root, the struct its callers were built with). */
  uint64_t bytes_apparent;    /* the same growth by file length, holes included */
  /* Retention, appended after bytes_apparent (filled by atrace_client_status_ex only; all 0
   * from a daemon that does not send them, which retention_known says). Bytes are allocated. */
  uint32_t retention_known;   /* 1 if the fields below came from the daemon */
  uint32_t aging_policy;      /* 0 fifo, 1 fair */
  uint64_t max_use;           /* the byte budget in force */
  uint64_t keep_free;         /* the free space kept */
  uint64_t fs_free;           /* the daemon's estimate of the file system's free space */
  uint64_t used_host, used_device, used_exit;
  uint64_t bytes_freed;       /* by aging */
  uint64_t aged_count, aged_max_use, aged_keep_free, aged_max_age, aged_vacuum; /* dirs, by reason */
  uint64_t refused_max_use, refused_keep_free; /* -ENOSPC */
  uint64_t refused_rate_limit;                 /* -EAGAIN */
  uint64_t refused_client_bytes;               /* -EBUSY: max-bytes-per-client */
  uint32_t exit_record_num;
  uint32_t reserved;
  uint64_t max_age_s;         /* 0: off */
  /* Appended after max_age_s (atrace_client_status_ex only). */
  uint32_t incomplete_known;  /* 1 if the daemon sent incomplete_dirs */
  uint32_t reserved2;
  uint64_t incomplete_dirs;   /* directories holding a save that was cut short (ATRACE_LIST_INCOMPLETE) */
  /* Appended after incomplete_dirs (atrace_client_status_ex only). */
  uint32_t dumps_known;       /* 1 if the daemon sent the two below */
  uint32_t reserved3;
  uint64_t dumps_kept;        /* dump directories dump-keep spares from record-num aging now */
  uint64_t dumps_aged_early;  /* dumps the byte budget or keep-free aged before dump-keep ran out */
} atrace_status;

typedef struct atrace_list_entry {
  uint64_t seq;
  int kind;
  int side;
  uint32_t device_id;
  int32_t pid;
  uint32_t uid;
  uint64_t bytes;          /* disk used: allocated blocks */
  uint64_t created_unix_us;
  const char *path; /* relative to <root>/atrace; valid during the callback only */
  /* Appended after 0.1.0 (the library owns the struct, so older callers never read it). */
  uint64_t apparent_bytes; /* the files' lengths, holes included */
  const char *comm; /* the program that made it ("" unknown: an older daemon or root);
                       valid during the callback only */
  uint32_t flags;   /* ATRACE_LIST_*; 0 from an older daemon */
  /* The job, rank and world size its process said it belongs to (from its environment:
   * ATRACE_JOB, RANK_ID, RANK_SIZE and the like); "" when not sent or from an older daemon.
   * A process's own word: checked to be short and printable, never trusted. Valid during
   * the callback only. */
  const char *job;
  const char *rank;
  const char *world_size;
} atrace_list_entry;
/* A save into the directory was cut short (the daemon killed or stopped, or a write failed
 * while it wrote a ring save or a report): its files may be empty or short. */
#define ATRACE_LIST_INCOMPLETE 0x1u
/* Another user's directory, which this user may not read: only seq is real; uid is
 * ATRACE_LIST_HIDDEN_UID (nobody's), kind schedule, side host, path "hidden" (no directory),
 * every other field 0 or "". */
#define ATRACE_LIST_HIDDEN 0x2u
#define ATRACE_LIST_HIDDEN_UID 0xffffffffu
/* A dump of a live process that someone asked for (atracectl dump, PROCESS_DUMP). */
#define ATRACE_LIST_DUMP 0x4u
/* A dump of a live process that the daemon's hang watch took by itself (hang-timeout). */
#define ATRACE_LIST_HANG 0x8u
/* A client made it (an event it began): its files, a stack report among them, are that
 * client's word. Clear: the daemon made it for a save (rings, a crash or death report, a
 * dump) and wrote every file in it. A daemon from before the flag never sets it. */
#define ATRACE_LIST_CLIENT 0x10u

/* journalctl's vacuum verbs for atrace_client_vacuum_by: a directory goes if any verb given
 * says so (PROTOCOL.md, VACUUM_BY). */
#define ATRACE_VACUUM_OLDER_THAN 0x1u /* made more than older_than_us ago, exit dirs included */
#define ATRACE_VACUUM_MAX_USE 0x2u    /* the oldest until the root holds max_use bytes, exit last */
#define ATRACE_VACUUM_KEEP 0x4u       /* host and device each down to keep (>= 1); exit untouched */
typedef struct atrace_vacuum_spec {
  unsigned verbs; /* ATRACE_VACUUM_*, at least one */
  int dry_run;    /* non-zero: only report */
  uint32_t keep;
  uint64_t older_than_us;
  uint64_t max_use;
} atrace_vacuum_spec;
typedef struct atrace_vacuum_result {
  uint64_t bytes;   /* allocated bytes of every directory removed (or that would be) */
  uint32_t listed;  /* directories passed to fn */
  uint32_t omitted; /* further ones the daemon's reply had no room to name */
} atrace_vacuum_result;

/* One line of the pools the daemon shares between users (atrace_client_shares): a pool's
 * total, uid == ATRACE_SHARE_TOTAL, or one uid's part of it. */
#define ATRACE_SHARE_TOTAL 0xffffffffu
typedef struct atrace_share {
  const char *pool; /* "connections", "descriptors", "rings", "ring_memory" (bytes),
                       "queued_saves" (bytes), or "pool-N" for one this library does not
                       know; valid during the callback only */
  uint32_t uid;     /* ATRACE_SHARE_TOTAL, or the uid whose part this is */
  uint64_t held;      /* held now: by all uids, or by this one */
  uint64_t limit;     /* what the pool holds at most */
  uint64_t uid_share; /* what one uid may hold of it */
} atrace_share;
typedef int (*atrace_share_fn)(const atrace_share *share, void *user);

/* One device whose traces reached the daemon (atrace_client_devices). */
typedef struct atrace_device_stat {
  uint32_t device_id;
  uint64_t events;          /* device-side events begun for it, counted by the daemon */
  /* What applications' device receivers (libascend_trace) reported, summed: */
  uint64_t received;        /* messages from the device that passed the checks */
  uint64_t saved;           /* of those, written through the daemon */
  uint64_t dropped_invalid; /* refused: the device's bytes failed a check */
  uint64_t dropped_daemon;  /* the daemon was away or refused the event */
  uint64_t reconnects;      /* trace links opened again after the device closed one */
} atrace_device_stat;
typedef int (*atrace_device_fn)(const atrace_device_stat *device, void *user);

/* Counters of one handle, for the application and for tests. */
typedef struct atrace_client_stats {
  uint64_t connects;      /* successful connects (HELLO done), including reconnects */
  uint64_t round_trips;   /* times a call wrote requests and then waited for replies */
  uint64_t async_ok;      /* asynchronous events that completed */
  uint64_t async_failed;  /* asynchronous events with at least one refused request */
  uint32_t in_flight;     /* asynchronous events sent whose replies are not all in */
} atrace_client_stats;

/* What atrace_client_dump_processes dumps: the pids given, or a selection of the live processes
 * whose rings the daemon holds and which the caller may dump (root: any; others: their own),
 * narrowed by every criterion given (PROTOCOL.md, PROCESS_DUMP). */
#define ATRACE_DUMP_ALL 0x1u  /* every such process */
#define ATRACE_DUMP_UID 0x2u  /* ... of uid `uid` (another uid than the caller's: root only) */
#define ATRACE_DUMP_COMM 0x4u /* ... whose program (comm) is `comm` */
#define ATRACE_DUMP_JOB 0x8u  /* ... whose job label (ATRACE_JOB, SLURM_JOB_ID, JOB_ID) is `job` */
typedef struct atrace_dump_spec {
  unsigned select;       /* ATRACE_DUMP_*; 0 with pids */
  uint32_t uid;
  const char *comm;      /* ATRACE_DUMP_COMM; else NULL */
  const int32_t *pids;   /* pid_count of them (at most 128), select 0 */
  size_t pid_count;
  /* Appended: read only with ATRACE_DUMP_JOB, so a caller built before it is never read past. */
  const char *job;       /* ATRACE_DUMP_JOB; else NULL */
} atrace_dump_spec;
/* One process of the reply, in the daemon's order. */
typedef struct atrace_dump_entry {
  int32_t pid;
  int status;            /* 0, or why it was not dumped: -ESRCH, -ENOENT (no rings), -EPERM, ... */
  uint32_t threads;      /* threads in its stack report */
  uint32_t rings;        /* rings saved */
  uint32_t max_stop_us;  /* the longest any of its threads was held stopped */
  const char *text;      /* status 0: the event directory's absolute path; else the daemon's reason.
                            Valid during the callback only */
} atrace_dump_entry;
typedef int (*atrace_dump_fn)(const atrace_dump_entry *entry, void *user);

/* One live process whose rings the daemon holds (atrace_client_list_live), as the daemon's
 * hang watch last saw it (it looks every 2 s). */
typedef struct atrace_live_entry {
  int32_t pid;
  uint32_t uid;
  uint32_t flags;              /* ATRACE_LIVE_* */
  uint32_t rings;              /* rings the daemon holds for it */
  uint64_t last_moved_unix_us; /* the daemon's clock when a ring of it last advanced (or the daemon
                                  first saw it); 0: it never wrote a record, or not looked at yet */
  uint64_t still_ms;           /* no ring advanced for this long (0 with last_moved_unix_us 0) */
  uint64_t timeout_ms;         /* ATRACE_LIVE_WATCHED: the hang timeout it is judged by; else 0 */
  /* The program and the process's own labels; "" unknown or not sent. Valid during the
   * callback only. */
  const char *comm;
  const char *job;
  const char *rank;
  const char *world_size;
} atrace_live_entry;
#define ATRACE_LIVE_WATCHED 0x1u    /* the hang watch judges it */
#define ATRACE_LIVE_STALLED 0x2u    /* judged stalled: no ring advanced for its timeout while it lived */
#define ATRACE_LIVE_BUSY 0x4u       /* with STALLED: it used CPU time meanwhile; without: blocked */
#define ATRACE_LIVE_CAPTURED 0x8u   /* dumped with its job when another process of it stalled */
#define ATRACE_LIVE_NEVER_WROTE 0x10u /* no record yet: not judged */
typedef int (*atrace_live_fn)(const atrace_live_entry *entry, void *user);

/* Return non-zero to stop the iteration; that value is then returned by the call. */
typedef int (*atrace_list_fn)(const atrace_list_entry *entry, void *user);
typedef int (*atrace_path_fn)(const char *path, void *user);

/* ---- Handles --------------------------------------------------------------------------- */

ATRACE_EXPORT void atrace_client_options_init(atrace_client_options *options);
/* Connects and says HELLO. options may be NULL (all defaults). On failure *out is NULL and
 * the error says why: -ENOENT (no socket), -ECONNREFUSED (nobody listens), -ETIMEDOUT, ... */
ATRACE_EXPORT int atrace_client_open(const atrace_client_options *options, atrace_client **out);
/* Closes the connection (the daemon ends open events, keeping what was written) and frees
 * the handle. Events and files of this handle must not be used afterwards. NULL is a no-op. */
ATRACE_EXPORT void atrace_client_close(atrace_client *client);
/* Static text for 0 or a negative errno returned by this library. Never NULL. */
ATRACE_EXPORT const char *atrace_client_strerror(int error);
/* The daemon's message for the last refused request on this handle ("" if none). Valid
 * until the next call on the handle. */
ATRACE_EXPORT const char *atrace_client_last_message(atrace_client *client);
ATRACE_EXPORT int atrace_client_get_stats(atrace_client *client, atrace_client_stats *out);

/* ---- One event with one file ------------------------------------------------------------ */

/* Writes a whole event with one file: BEGIN, OPEN, APPEND(s), CLOSE and END are sent in one
 * write and cost one round trip (two with ATRACE_EMIT_VIA_FD). The created file's absolute
 * path is copied to path (if not NULL, truncated to path_size - 1 bytes). Returns the first
 * refused request's status. */
ATRACE_EXPORT int atrace_emit(atrace_client *client, const atrace_event_spec *event,
                              const atrace_file_spec *file, const void *data, size_t len,
                              unsigned flags, char *path, size_t path_size);

/* Queues the same requests without waiting for the replies: for event churn. At most
 * max_in_flight events are in flight; beyond that the call first waits (up to the I/O
 * timeout) for the oldest to complete. A refused request is counted (stats.async_failed)
 * and remembered; atrace_client_flush() reports it. data is copied. */
ATRACE_EXPORT int atrace_emit_async(atrace_client *client, const atrace_event_spec *event,
                                    const atrace_file_spec *file, const void *data, size_t len);
/* Waits until every asynchronous event is answered; returns the first error since the last
 * flush (a refused request or a lost connection) and forgets it. */
ATRACE_EXPORT int atrace_client_flush(atrace_client *client);

/* ---- Events and files, step by step ----------------------------------------------------- */

ATRACE_EXPORT int atrace_event_begin(atrace_client *client, const atrace_event_spec *spec,
                                     atrace_event **out);
/* Ends the event (closing its files still open) and frees the handle, also on error.
 * bytes (may be NULL) receives the disk the event's files take (allocated blocks). */
ATRACE_EXPORT int atrace_event_end(atrace_event *event, uint64_t *bytes);
/* The event directory's absolute path; valid while the event handle lives. */
ATRACE_EXPORT const char *atrace_event_path(const atrace_event *event);

ATRACE_EXPORT int atrace_file_open(atrace_event *event, const atrace_file_spec *spec,
                                   atrace_file **out);
/* Appends len bytes: through the descriptor if atrace_file_get_fd() fetched one, else as
 * FILE_APPEND requests of up to 1 MiB each (one round trip). */
ATRACE_EXPORT int atrace_file_write(atrace_file *file, const void *data, size_t len);
/* Fetches the file's descriptor (O_WRONLY|O_APPEND) from the daemon: the fast path. The
 * descriptor stays owned by the file handle and is closed by atrace_file_close(); do not
 * close it yourself. Returns -ENOTSUP if the daemon did not grant descriptor passing. */
ATRACE_EXPORT int atrace_file_get_fd(atrace_file *file, int *fd);
/* Closes the file and frees the handle, also on error. size (may be NULL): final size. */
ATRACE_EXPORT int atrace_file_close(atrace_file *file, uint64_t *size);
/* The file's absolute path; valid while the file handle lives. */
ATRACE_EXPORT const char *atrace_file_path(const atrace_file *file);

/* ---- Queries ---------------------------------------------------------------------------- */

/* Fills *out up to and including root (the layout of 0.1.0). */
ATRACE_EXPORT int atrace_client_status(atrace_client *client, atrace_status *out);
/* Fills the first `size` bytes of *out: pass sizeof *out, and a later library with a longer
 * struct fills what this one knows of it. */
ATRACE_EXPORT int atrace_client_status_ex(atrace_client *client, atrace_status *out, size_t size);
/* Calls fn for every event directory in creation order (paging through LIST). */
ATRACE_EXPORT int atrace_client_list(atrace_client *client, atrace_list_fn fn, void *user);
/* Applies the aging limits now (or only reports, dry_run != 0); fn (may be NULL) gets each
 * directory removed, relative to <root>/atrace. */
/* The pools of STATUS: for each, its total line, then its largest holders (at most 32).
 * -ENOTSUP from a daemon that does not send them. Non-zero from fn stops and is returned. */
ATRACE_EXPORT int atrace_client_shares(atrace_client *client, atrace_share_fn fn, void *user);
ATRACE_EXPORT int atrace_client_vacuum(atrace_client *client, int dry_run, atrace_path_fn fn,
                                       void *user);
/* Each device with anything counted, in device order. -ENOTSUP from a daemon that does not
 * report devices. */
ATRACE_EXPORT int atrace_client_devices(atrace_client *client, atrace_device_fn fn, void *user);
/* Applies journalctl's vacuum verbs once (or only reports); fn (may be NULL) gets each
 * directory, relative to <root>/atrace; result (may be NULL) what they hold and how many. Without
 * dry_run only root and the daemon's user may (-EPERM); -ENOSYS from a daemon that does not
 * know VACUUM_BY. */
ATRACE_EXPORT int atrace_client_vacuum_by(atrace_client *client, const atrace_vacuum_spec *spec,
                                          atrace_path_fn fn, void *user, atrace_vacuum_result *result);
/* Saves live processes from outside (atracectl dump): for each, a schedule directory with its
 * rings and every thread's stack; fn gets each process's outcome. omitted (may be NULL): how
 * many more the selection matched past the daemon's bound. The reply comes once every
 * directory is written: open the handle with ATRACE_OPT_PROCESS_DUMP (else -ENOTSUP) and an
 * io_timeout_ms that allows the daemon's unwind deadline per process. -ENOSYS from a daemon
 * that does not know it. */
ATRACE_EXPORT int atrace_client_dump_processes(atrace_client *client, const atrace_dump_spec *spec,
                                               atrace_dump_fn fn, void *user, uint32_t *omitted);
/* The live processes whose rings the daemon holds (atracectl list --live), in pid order: all
 * of them (job NULL or "") or one job's. Root, the daemon's user and the reader group get
 * every user's; anyone else their own only. omitted (may be NULL): how many more matched past
 * the daemon's bound (1024). Open the handle with ATRACE_OPT_LIST_LIVE (else -ENOTSUP);
 * -ENOTSUP too from a daemon that does not grant it. Non-zero from fn stops and is returned. */
ATRACE_EXPORT int atrace_client_list_live(atrace_client *client, const char *job, atrace_live_fn fn, void *user,
                                          uint32_t *omitted);
/* Says that a bundle now holds the dump directories `paths` (count of them, relative to
 * <root>/atrace as atrace_client_list gives them): the daemon's dump-keep spares them no more,
 * and record-num ages them as any other. Paths of no dump, released already, or another
 * user's that this one may not read are skipped. released / skipped (may be NULL): how many.
 * -ENOTSUP from a daemon that does not know it (the dumps stay kept for dump-keep). */
ATRACE_EXPORT int atrace_client_dumps_exported(atrace_client *client, const char *const *paths, size_t count,
                                               uint32_t *released, uint32_t *skipped);

#ifdef __cplusplus
}
#endif

#endif /* ATRACED_ATRACE_CLIENT_H_ */
