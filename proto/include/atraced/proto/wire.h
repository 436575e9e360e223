/* atraced wire protocol, version 1.
 *
 * This header and proto/PROTOCOL.md are one contract: change both in the same commit.
 * PROTOCOL.md is normative; this header gives the same numbers to C99 and C++ code.
 *
 * Protocol changelog:
 *   1.0  HELLO, EVENT_BEGIN, FILE_OPEN, FILE_APPEND, FILE_GET_FD, FILE_CLOSE, EVENT_END,
 *        STATUS, LIST, VACUUM; feature ATR_FEATURE_FD_PASSING.
 *        (ATR_EBADF is reserved and not sent: a closed id is unknown, -ENOENT.)
 *   1.1  behind feature ATR_FEATURE_MEMFD: RING_REGISTER (a sealed memfd ring attached as
 *        SCM_RIGHTS), RING_RELEASE, RING_REPORT, RING_SAVE_ALL, GOODBYE; the HELLO reply
 *        carries the daemon's pid when the feature is granted.
 *        Later, still 1.1 (a feature bit, no new minor): behind ATR_FEATURE_CRASH (granted
 *        only with ATR_FEATURE_MEMFD), CRASH: a fatal signal caught in the process, answered
 *        once the daemon has written the stackcore dir; and DUMP: CANN's on-demand dump
 *        signal (35) caught in the process, answered once the schedule dir is written.
 *        Behind ATR_FEATURE_RING_COUNTER (granted only with ATR_FEATURE_MEMFD, and only
 *        while the daemon's own measurements trust the counter, docs/TIMESTAMPS.md; a later
 *        connection may not get it): RING_REGISTER's ATR_RING_COUNTER, a ring whose
 *        records carry cycle-counter stamps (ATR_RING_FLAG_COUNTER in ring_layout.h).
 *        Behind ATR_FEATURE_DEVICE_STATS: DEVICE_STATS, what a process's device receivers
 *        counted (received, dropped, reconnected), summed per device into STATUS's devices
 *        block, which follows the pools block.
 *        VACUUM_BY (19, no feature bit: an older daemon answers -ENOSYS): journalctl's
 *        vacuum verbs, applied once (older than a span, down to a size, keep N).
 *        Behind ATR_FEATURE_CRASH_PATH (granted only with ATR_FEATURE_CRASH): CRASH's reply
 *        body carries the report's path.
 *        Behind ATR_FEATURE_PROCESS_DUMP (any connection): PROCESS_DUMP, the rings and every
 *        thread's stack of live processes, saved from outside them (atracectl dump).
 *        Behind ATR_FEATURE_LABELS (any connection): LABELS, the job, rank and world size
 *        the process read from its environment; LIST's reply carries them after the flags.
 *        Behind ATR_FEATURE_HANG_TIMEOUT (with ATR_FEATURE_LABELS): LABELS may end with a
 *        fourth string, the process's ATRACE_HANG_TIMEOUT (it may only shorten the daemon's).
 *        Behind ATR_FEATURE_LEDGER (granted only with ATR_FEATURE_MEMFD): RING_REGISTER's
 *        ATR_RING_LEDGER, a collective ledger (ledger_layout.h) held and saved beside the
 *        process's rings as hccl_tracer_ledger.bin.
 *        Behind ATR_FEATURE_LIST_LIVE (any connection): LIST_LIVE, the live processes whose
 *        rings the daemon holds, with their labels and the hang watch's view of them.
 *        Behind ATR_FEATURE_DUMPS_EXPORTED (any connection): DUMPS_EXPORTED, `atracectl export`
 *        saying which dump directories a bundle now holds, so that dump-keep spares them no
 *        more. STATUS's body ends with dumps_kept and dumps_aged_early after incomplete_dirs.
 *        Behind ATR_FEATURE_AGED_DUMPS (any connection): AGED_DUMPS, the dump directories
 *        aging removed (when, why, whose, their labels), so that `atracectl export` can tell
 *        `hang` a rank's dump aged rather than never taken.
 *
 * Rules that keep this header compatible:
 *   - All integers are little-endian on the wire, whatever the host's byte order.
 *   - The structs below document byte layouts; code encodes and decodes field by field and
 *     never copies a struct to or from the wire.
 *   - Reserved fields are sent as zero and refused when non-zero, so they can gain a meaning.
 *   - Opcodes and status values are never reused. New operations are advertised by feature
 *     bits in HELLO; a request the server does not know gets -ENOSYS, not a hang-up.
 *   - Same major version: both sides use the smaller minor. Different major: the server
 *     replies -EPROTONOSUPPORT to HELLO and closes.
 */
#ifndef ATRACED_PROTO_WIRE_H_
#define ATRACED_PROTO_WIRE_H_

#include <stdint.h>

/* Internal to this header. C++ and C11 have a static assertion; strict C99 does not, and a
 * negative array size fails the build just as well there. The C99 typedef is named after
 * the line, so do not use this macro in your own files. */
#ifdef __cplusplus
#define ATR_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define ATR_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#else
#define ATR_CONCAT_(a, b) a##b
#define ATR_CONCAT(a, b) ATR_CONCAT_(a, b)
#define ATR_STATIC_ASSERT(cond, msg) typedef char ATR_CONCAT(atr_wire_h_static_assert_, __LINE__)[(cond) ? 1 : -1]
#endif

#define ATR_MAGIC 0x43525441u /* the bytes "ATRC" */
#define ATR_VERSION_MAJOR 1u
#define ATR_VERSION_MINOR 1u /* this daemon and its libraries speak 1.1 */
/* The minor version that brings the ATR_FEATURE_MEMFD messages. A daemon that grants the
 * feature speaks it; the feature bit, not the version, is what a client checks. */
#define ATR_VERSION_MINOR_MEMFD 1u

/* Limits. A frame whose length field exceeds ATR_MAX_PAYLOAD closes the connection. */
#define ATR_FRAME_HEADER_SIZE 16u
#define ATR_MAX_PAYLOAD (1u << 20)          /* 1 MiB of payload after the header */
#define ATR_MAX_APPEND (ATR_MAX_PAYLOAD - 8u) /* FILE_APPEND data bytes per frame */
#define ATR_TIME_LEN 20u                    /* YYYYMMDDhhmmss + ms(3) + us(3) */
#define ATR_MAX_OBJECT_NAME 31u             /* CANN: object names are < 32 bytes */
#define ATR_MAX_PROGRAM_NAME 63u            /* CANN: MAX_FILENAME_LEN 64 */
#define ATR_MAX_MESSAGE 255u                /* error text in a reply */
#define ATR_MAX_DEVICE_ID 1023u             /* CANN: HOST_MAX_DEV_NUM 1024 */
#define ATR_MAX_LIST_ENTRIES 1024u          /* LIST max_entries */
#define ATR_MAX_VACUUM_PATHS 1024u          /* paths listed in one VACUUM reply */

/* Frame header flags. */
#define ATR_FLAG_REPLY 0x0001u

/* Feature bits (HELLO). The server answers with the subset it grants. */
#define ATR_FEATURE_FD_PASSING (1ull << 0) /* FILE_GET_FD hands out the file's descriptor */
#define ATR_FEATURE_MEMFD (1ull << 1)      /* 1.1: RING_* and GOODBYE, rings in sealed memfds */
#define ATR_FEATURE_CRASH (1ull << 2)      /* 1.1: CRASH, DUMP; granted only together with MEMFD */
#define ATR_FEATURE_RING_COUNTER (1ull << 3) /* 1.1: rings stamped with the cycle counter (ATR_RING_COUNTER); with MEMFD only */
#define ATR_FEATURE_STACK_DUMP (1ull << 4) /* 1.1: STACK_DUMP, CANN's on-demand stack dump; with CRASH only */
#define ATR_FEATURE_DEVICE_STATS (1ull << 5) /* 1.1: DEVICE_STATS, a process's device receiver counts */
#define ATR_FEATURE_CRASH_PATH (1ull << 6) /* 1.1: CRASH's reply body is the report's path; with CRASH only */
#define ATR_FEATURE_PROCESS_DUMP (1ull << 7) /* 1.1: PROCESS_DUMP, a live process's rings and stacks from outside */
#define ATR_FEATURE_LABELS (1ull << 8) /* 1.1: LABELS, the process's job, rank and world size */
#define ATR_FEATURE_HANG_TIMEOUT (1ull << 9) /* 1.1: LABELS may carry hang_timeout; with LABELS only */
#define ATR_FEATURE_LEDGER (1ull << 10) /* 1.1: RING_REGISTER's ATR_RING_LEDGER, the collective ledger; with MEMFD only */
#define ATR_FEATURE_LIST_LIVE (1ull << 11) /* 1.1: LIST_LIVE, the live processes and their stall state */
#define ATR_FEATURE_DUMPS_EXPORTED (1ull << 12) /* 1.1: DUMPS_EXPORTED, a bundle holds these dumps: dump-keep releases them */
#define ATR_FEATURE_AGED_DUMPS (1ull << 13) /* 1.1: AGED_DUMPS, the dumps aging removed and why */

enum atr_opcode {
  ATR_OP_HELLO = 1,
  ATR_OP_EVENT_BEGIN = 2,
  ATR_OP_FILE_OPEN = 3,
  ATR_OP_FILE_APPEND = 4,
  ATR_OP_FILE_GET_FD = 5,
  ATR_OP_FILE_CLOSE = 6,
  ATR_OP_EVENT_END = 7,
  ATR_OP_STATUS = 8,
  ATR_OP_LIST = 9,
  ATR_OP_VACUUM = 10,
  /* 1.1, only after ATR_FEATURE_MEMFD was granted: */
  ATR_OP_RING_REGISTER = 11,
  ATR_OP_RING_RELEASE = 12,
  ATR_OP_RING_REPORT = 13,
  ATR_OP_RING_SAVE_ALL = 14,
  ATR_OP_GOODBYE = 15,
  /* 1.1, only after ATR_FEATURE_CRASH was granted: */
  ATR_OP_CRASH = 16,
  ATR_OP_DUMP = 17,
  /* 1.1, only after ATR_FEATURE_STACK_DUMP was granted: */
  ATR_OP_STACK_DUMP = 18,
  /* 1.1, any connection (no feature bit; a daemon without it answers -ENOSYS): */
  ATR_OP_VACUUM_BY = 19,
  /* 1.1, only after ATR_FEATURE_DEVICE_STATS was granted: */
  ATR_OP_DEVICE_STATS = 20,
  /* 1.1, only after ATR_FEATURE_PROCESS_DUMP was granted: */
  ATR_OP_PROCESS_DUMP = 21,
  /* 1.1, only after ATR_FEATURE_LABELS was granted: */
  ATR_OP_LABELS = 22,
  /* 1.1, only after ATR_FEATURE_DUMPS_EXPORTED was granted: */
  ATR_OP_DUMPS_EXPORTED = 23,
  /* 1.1, only after ATR_FEATURE_LIST_LIVE was granted: */
  ATR_OP_LIST_LIVE = 24,
  /* 1.1, only after ATR_FEATURE_AGED_DUMPS was granted: */
  ATR_OP_AGED_DUMPS = 25
};

enum atr_event_kind { ATR_EVENT_SCHEDULE = 1, ATR_EVENT_STACKCORE = 2, ATR_EVENT_EXIT = 3 };
enum atr_side { ATR_SIDE_HOST = 0, ATR_SIDE_DEVICE = 1 };
enum atr_file_form {
  ATR_FILE_OBJECT = 1,   /* schedule_tracer_{name}{.txt|.bin} */
  ATR_FILE_TS = 2,       /* schedule_tracer_ts_{device_id}.txt */
  ATR_FILE_STACKCORE = 3 /* stackcore_tracer_{signo}_{tid}_{name}_{time}.txt */
};
enum atr_suffix { ATR_SUFFIX_TXT = 0, ATR_SUFFIX_BIN = 1 };

/* Status values in replies: 0 or a negative Linux (asm-generic) errno, written out here so a
 * forwarder on another system does not depend on its own <errno.h>. */
enum atr_status {
  ATR_OK = 0,
  ATR_EPERM = -1,            /* forwarder claim by a peer that is not allowed to make it; PROCESS_DUMP of another user's process */
  ATR_ENOENT = -2,           /* unknown event or file id; PROCESS_DUMP of a process holding no ring */
  ATR_ESRCH = -3,            /* the named host pid (or PROCESS_DUMP's pid) does not exist */
  ATR_EIO = -5,              /* the disk failed */
  ATR_EBADF = -9,            /* 1.1: RING_REGISTER without exactly one descriptor */
  ATR_EAGAIN = -11,          /* the client's rate limit on new events, or its uid's share of queued save bytes, is reached; retry later */
  ATR_EACCES = -13,          /* the filesystem refused */
  ATR_EBUSY = -16,           /* a per-client bound (events, files, bytes written) is reached */
  ATR_EEXIST = -17,          /* the event or file id is already in use on this connection */
  ATR_EINVAL = -22,          /* a field is out of range or malformed; the message names it */
  ATR_EMFILE = -24,          /* the daemon is out of descriptors */
  ATR_ENOSPC = -28,          /* the disk is full, or the root's byte budget or keep-free reserve is reached */
  ATR_ENAMETOOLONG = -36,    /* a name is longer than its limit */
  ATR_ENOSYS = -38,          /* unknown opcode */
  ATR_EPROTO = -71,          /* request before HELLO, or HELLO twice */
  ATR_EBADMSG = -74,         /* payload does not decode for its opcode */
  ATR_EMSGSIZE = -90,        /* append larger than ATR_MAX_APPEND */
  ATR_EPROTONOSUPPORT = -93, /* major version mismatch */
  ATR_ENOTSUP = -95,         /* feature not granted in HELLO */
  ATR_ESHUTDOWN = -108       /* the daemon stopped before the save was written; nothing of it counts as saved */
};

/* Every frame starts with this header (16 bytes). `length` counts the payload after it. */
struct atr_frame_header {
  uint32_t magic;      /* ATR_MAGIC */
  uint32_t length;     /* payload bytes, <= ATR_MAX_PAYLOAD */
  uint16_t opcode;     /* enum atr_opcode; a reply repeats the request's opcode */
  uint16_t flags;      /* ATR_FLAG_REPLY on replies; other bits zero */
  uint32_t request_id; /* chosen by the client, echoed in the reply */
};
ATR_STATIC_ASSERT(sizeof(struct atr_frame_header) == 16, "atr_frame_header is 16 bytes");

/* Every reply payload starts with this (8 bytes). On status < 0 it is followed by
 * u16 message length and that many bytes of UTF-8 text naming the field and the reason. */
struct atr_reply_head {
  int32_t status;
  uint32_t reserved;
};
ATR_STATIC_ASSERT(sizeof(struct atr_reply_head) == 8, "atr_reply_head is 8 bytes");

/* HELLO request (16 bytes). */
struct atr_hello {
  uint16_t version_major;
  uint16_t version_minor;
  uint32_t reserved;
  uint64_t features; /* requested feature bits */
};
ATR_STATIC_ASSERT(sizeof(struct atr_hello) == 16, "atr_hello is 16 bytes");

/* HELLO reply body after atr_reply_head (24 bytes). */
struct atr_hello_reply {
  uint16_t version_major;
  uint16_t version_minor;
  uint32_t max_payload;
  uint64_t features; /* granted feature bits */
  uint32_t peer_pid; /* what the kernel says the client is */
  uint32_t peer_uid;
};
ATR_STATIC_ASSERT(sizeof(struct atr_hello_reply) == 24, "atr_hello_reply is 24 bytes");

/* EVENT_BEGIN request (36 bytes). Reply body: u16 length + absolute event directory path. */
struct atr_event_begin {
  uint32_t event_id;  /* chosen by the client, non-zero, unique among its open events */
  uint8_t kind;       /* enum atr_event_kind */
  uint8_t side;       /* enum atr_side */
  uint16_t reserved;
  uint32_t device_id; /* side == DEVICE: 0..ATR_MAX_DEVICE_ID; side == HOST: 0 */
  int32_t host_pid;   /* 0: the peer itself; otherwise a forwarder's claim */
  char time[20];      /* all NUL: the daemon's clock; else a device event's own time */
};
ATR_STATIC_ASSERT(sizeof(struct atr_event_begin) == 36, "atr_event_begin is 36 bytes");

/* FILE_OPEN request (44 bytes), followed by name_len bytes of name (object or program).
 * Reply body: u16 length + absolute file path. */
struct atr_file_open {
  uint32_t event_id;
  uint32_t file_id;   /* chosen by the client, non-zero, unique among its open files */
  uint8_t form;       /* enum atr_file_form */
  uint8_t suffix;     /* enum atr_suffix; ATR_FILE_OBJECT only, else 0 */
  uint16_t name_len;  /* OBJECT: object name; STACKCORE: program name; TS: 0 */
  uint32_t device_id; /* ATR_FILE_TS only */
  int32_t signo;      /* ATR_FILE_STACKCORE only */
  int32_t tid;        /* ATR_FILE_STACKCORE only */
  char time[20];      /* ATR_FILE_STACKCORE: all NUL for now, or 20 digits */
};
ATR_STATIC_ASSERT(sizeof(struct atr_file_open) == 44, "atr_file_open is 44 bytes");

/* FILE_APPEND request: this 8-byte head, then the data (the rest of the payload).
 * Reply body: u64 file size after the append. */
struct atr_file_append {
  uint32_t file_id;
  uint32_t reserved;
};
ATR_STATIC_ASSERT(sizeof(struct atr_file_append) == 8, "atr_file_append is 8 bytes");

/* FILE_GET_FD, FILE_CLOSE and EVENT_END requests (8 bytes).
 * FILE_GET_FD reply: empty body; on success the reply frame carries one descriptor as
 * SCM_RIGHTS ancillary data, opened O_WRONLY|O_APPEND.
 * FILE_CLOSE reply body: u64 final file size (its length). EVENT_END reply body: u64 event
 * bytes, the disk its files take (allocated blocks; see PROTOCOL.md, Sizes). */
struct atr_id_request {
  uint32_t id;
  uint32_t reserved;
};
ATR_STATIC_ASSERT(sizeof(struct atr_id_request) == 8, "atr_id_request is 8 bytes");

/* STATUS request: empty payload. Reply body (64 bytes), then u16 length + root path.
 * Later minor versions may append fields after the root path (not inside this struct, which
 * would move the path); readers ignore trailing bytes. */
struct atr_status_reply {
  uint32_t record_num;
  uint32_t host_dirs;
  uint32_t device_dirs;
  uint32_t exit_dirs;
  uint32_t clients;
  uint32_t reserved;
  uint64_t events_begun;
  uint64_t dirs_aged;
  uint64_t bytes_written;
  uint64_t removal_failures;
  uint64_t requests_refused;
};
ATR_STATIC_ASSERT(sizeof(struct atr_status_reply) == 64, "atr_status_reply is 64 bytes");

/* STATUS reply, appended after the root path (1.1): the apparent size. bytes_written counts
 * allocated blocks (st_blocks * 512), which is what fills a disk; this counts the same growth
 * by file length, holes included. A shorter body comes from an older daemon, whose
 * bytes_written was the file length. */
struct atr_status_reply_apparent {
  uint64_t bytes_apparent;
};
ATR_STATIC_ASSERT(sizeof(struct atr_status_reply_apparent) == 8, "atr_status_reply_apparent is 8 bytes");

/* STATUS reply, appended after atr_status_reply_apparent (1.1): retention. The byte limits in
 * force (resolved against the root's file system), the free-space estimate, the use per
 * class (allocated bytes), directories aged by reason, and refusals by reason. A shorter
 * body comes from a daemon without them. */
struct atr_status_reply_retention {
  uint64_t max_use;
  uint64_t keep_free;
  uint64_t fs_free;           /* the daemon's estimate: its last fstatvfs, corrected since */
  uint64_t used_host;
  uint64_t used_device;
  uint64_t used_exit;
  uint64_t bytes_freed;       /* by aging, all reasons */
  uint64_t aged_count;        /* dirs aged for record-num / exit-record-num */
  uint64_t aged_max_use;
  uint64_t aged_keep_free;
  uint64_t aged_max_age;
  uint64_t aged_vacuum;
  uint64_t refused_max_use;   /* -ENOSPC */
  uint64_t refused_keep_free; /* -ENOSPC */
  uint64_t refused_rate_limit;   /* -EAGAIN */
  uint64_t refused_client_bytes; /* -EBUSY, max-bytes-per-client */
  uint32_t exit_record_num;
  uint32_t aging_policy;      /* 0 fifo, 1 fair */
  uint64_t max_age_s;         /* 0: off */
};
ATR_STATIC_ASSERT(sizeof(struct atr_status_reply_retention) == 144, "atr_status_reply_retention is 144 bytes");

/* STATUS reply, after the retention block (1.1, later): the pools the daemon shares between
 * users and what each uid holds of them. u32 pool_count, u32 reserved, then pool_count times
 * an atr_status_pool followed by its uid_count atr_status_pool_uid entries, the largest
 * holders first (at most ATR_MAX_POOL_UIDS; `held` is the whole pool's, listed or not). A
 * reader skips pools it does not know. A body that ends before the block comes from a daemon
 * without it. */
enum atr_pool {
  ATR_POOL_CONNECTIONS = 1, /* connections: max-clients, uid-connection-share */
  ATR_POOL_DESCRIPTORS = 2, /* descriptors for clients: the budget, uid-descriptor-share */
  ATR_POOL_RINGS = 3,       /* rings held: max-rings, uid-ring-share */
  ATR_POOL_RING_MEMORY = 4, /* bytes the held rings may cost: max-ring-memory, uid-ring-share */
  ATR_POOL_QUEUED_SAVES = 5 /* bytes of saves queued for the I/O workers: max-queued-bytes, uid-queued-share */
};
#define ATR_MAX_POOLS 16u
#define ATR_MAX_POOL_UIDS 32u
struct atr_status_pool {
  uint8_t pool;       /* enum atr_pool */
  uint8_t reserved[3];
  uint32_t uid_count; /* 0..ATR_MAX_POOL_UIDS entries follow */
  uint64_t limit;     /* the whole pool */
  uint64_t per_uid;   /* what one uid may hold */
  uint64_t held;      /* held now by all uids */
};
ATR_STATIC_ASSERT(sizeof(struct atr_status_pool) == 32, "atr_status_pool is 32 bytes");
struct atr_status_pool_uid {
  uint32_t uid;
  uint32_t reserved;
  uint64_t held;
};
ATR_STATIC_ASSERT(sizeof(struct atr_status_pool_uid) == 16, "atr_status_pool_uid is 16 bytes");

/* STATUS reply, after the pools block (1.1, later): the devices whose traces reached this
 * daemon. u32 device_count, u32 reserved, then device_count atr_status_device entries in
 * device order (at most ATR_MAX_STATUS_DEVICES; devices with nothing counted are left out).
 * `events` is the daemon's own count of device-side EVENT_BEGINs naming the device; the
 * other counts are what processes' device receivers said in DEVICE_STATS (the library's
 * word, bounded: a process reports only for devices it wrote device events for, `saved` never
 * past those events, each uid's share of a figure at most 2^48). A body that ends before the
 * block comes from a daemon without it. */
#define ATR_MAX_STATUS_DEVICES 1024u
struct atr_status_device {
  uint32_t device_id;
  uint32_t reserved;
  uint64_t events;          /* device-side events begun for this device (all clients) */
  uint64_t received;        /* DEVICE_STATS: messages from the device that passed the checks */
  uint64_t saved;           /* DEVICE_STATS: of those, written through the daemon */
  uint64_t dropped_invalid; /* DEVICE_STATS: refused: the device's bytes failed a check */
  uint64_t dropped_daemon;  /* DEVICE_STATS: the daemon was away or refused the event */
  uint64_t reconnects;      /* DEVICE_STATS: long links opened again after the device closed one */
};
ATR_STATIC_ASSERT(sizeof(struct atr_status_device) == 56, "atr_status_device is 56 bytes");

/* STATUS reply, after the devices block (1.1, later): u64 incomplete_dirs, the directories
 * LIST marks ATR_LIST_INCOMPLETE. A body that ends before it comes from a daemon without it. */

/* STATUS reply, after incomplete_dirs (1.1, later): u64 dumps_kept, the dump directories
 * (ATR_LIST_DUMP, ATR_LIST_HANG) dump-keep spares from record-num aging now (not exported,
 * younger than dump-keep); u64 dumps_aged_early, those the byte budget or keep-free aged
 * while dump-keep still spared them (each logged). A body that ends before them comes from a
 * daemon without them. */

/* DUMPS_EXPORTED request (ATR_FEATURE_DUMPS_EXPORTED): a bundle now holds these dump
 * directories (atracectl export --format tar), so dump-keep spares them no more and record-num
 * ages them as any other, across restarts. u32 count (1..ATR_MAX_LIST_ENTRIES), u32 reserved,
 * then count times (u16 length + path relative to the trace directory, as LIST gives it).
 * A path that names no dump directory, one released already, or another user's to a peer
 * that may not read it (as LIST decides) is skipped, saying nothing of it.
 * Reply body: u32 released, u32 skipped. */
struct atr_dumps_exported {
  uint32_t count;
  uint32_t reserved;
};
ATR_STATIC_ASSERT(sizeof(struct atr_dumps_exported) == 8, "atr_dumps_exported is 8 bytes");

/* LIST request (16 bytes): entries with seq > after_seq, at most max_entries (<= 1024).
 * Reply body: u32 count, u32 reserved, then count entries, each an atr_list_entry followed by
 * u16 length + path relative to the trace directory (<root>/atrace), then (1.1) count u64s:
 * each entry's apparent bytes, in entry order. Entries carry no size, so they cannot grow;
 * the new figures go after all of them. A body without them comes from an older daemon.
 * Then (1.1, later) count strings: each entry's program, "" unknown; then count u32s: each
 * entry's flags (ATR_LIST_*; a reader ignores bits it does not know). */
#define ATR_LIST_INCOMPLETE (1u << 0) /* a save into it was cut short: files may be empty or short */
/* Another user's directory, to a client that may not read it: only its seq is real (for
 * paging); uid is ATR_LIST_HIDDEN_UID (no user's), every other field 0 or empty. */
#define ATR_LIST_HIDDEN (1u << 1)
#define ATR_LIST_HIDDEN_UID 0xffffffffu
#define ATR_LIST_DUMP (1u << 2)       /* PROCESS_DUMP's directory: a live process dumped for someone who asked */
#define ATR_LIST_HANG (1u << 3)       /* the same, taken by the daemon's hang watch by itself */
/* A client made it (EVENT_BEGIN): its files are the client's word. Clear: the daemon made it
 * for a save and wrote every file in it (a client's EVENT_BEGIN of its path gets -EEXIST). */
#define ATR_LIST_CLIENT (1u << 4)
struct atr_list_request {
  uint64_t after_seq;
  uint32_t max_entries;
  uint32_t reserved;
};
ATR_STATIC_ASSERT(sizeof(struct atr_list_request) == 16, "atr_list_request is 16 bytes");

struct atr_list_entry {
  uint64_t seq;       /* creation order across the whole root */
  uint8_t kind;       /* enum atr_event_kind */
  uint8_t side;       /* enum atr_side */
  uint16_t reserved;
  uint32_t device_id;
  int32_t pid;
  uint32_t uid;       /* of the peer that created the event */
  uint64_t bytes;     /* disk used by the directory's files: allocated blocks */
  uint64_t created_unix_us; /* daemon clock at creation, for display only */
};
ATR_STATIC_ASSERT(sizeof(struct atr_list_entry) == 40, "atr_list_entry is 40 bytes");

/* VACUUM request (8 bytes): apply the limits now; dry_run only reports.
 * Reply body: u32 count (<= ATR_MAX_VACUUM_PATHS), u32 omitted, then count times
 * (u16 length + relative path) of the directories removed (or that would be removed);
 * `omitted` counts further ones that did not fit, so the reply stays under ATR_MAX_PAYLOAD. */
struct atr_vacuum_request {
  uint8_t dry_run;
  uint8_t reserved[7];
};
ATR_STATIC_ASSERT(sizeof(struct atr_vacuum_request) == 8, "atr_vacuum_request is 8 bytes");

/* VACUUM_BY request (32 bytes, 1.1): journalctl's vacuum verbs, applied once through the
 * store's own aging (the order log, the counts and the byte budget stay right), pinned
 * directories never. At least one verb; a directory goes if any verb given says so:
 *   OLDER_THAN: every class, exit included, made more than older_than_us ago (as max-age);
 *   MAX_USE:    the oldest until the root holds at most max_use bytes, host and device
 *               merged in creation order first, exit last (as the byte budget);
 *   KEEP:       host and device each down to `keep` (1..), the oldest first (as record-num);
 *               exit dirs are never aged by this count (they have exit-record-num).
 * Without dry_run only root and the daemon's uid may ask (-EPERM); a dry run anyone may.
 * Reply body: u32 count (<= ATR_MAX_VACUUM_PATHS), u32 omitted, u64 bytes (allocated bytes of
 * all the directories removed or that would be, listed or not), then count times
 * (u16 length + relative path). */
#define ATR_VACUUM_OLDER_THAN 0x1u
#define ATR_VACUUM_MAX_USE 0x2u
#define ATR_VACUUM_KEEP 0x4u
#define ATR_VACUUM_KNOWN_VERBS 0x7u
struct atr_vacuum_by_request {
  uint8_t dry_run;        /* 0: remove; 1: only report */
  uint8_t reserved0;      /* 0 */
  uint16_t verbs;         /* ATR_VACUUM_*, at least one */
  uint32_t keep;          /* KEEP: >= 1; else 0 */
  uint64_t older_than_us; /* OLDER_THAN: >= 1; else 0 */
  uint64_t max_use;       /* MAX_USE: bytes (0: everything unpinned); else 0 */
  uint64_t reserved;      /* 0 */
};
ATR_STATIC_ASSERT(sizeof(struct atr_vacuum_by_request) == 32, "atr_vacuum_by_request is 32 bytes");

/* ---- 1.1: rings in sealed memfds (ATR_FEATURE_MEMFD) ----------------------------------
 * The ring layout itself is in ring_layout.h. */

/* HELLO reply, 1.1: when ATR_FEATURE_MEMFD is granted, the body grows by these 8 bytes
 * (after atr_hello_reply), so a client can allow the daemon to ptrace it (crash capture). */
struct atr_hello_reply_memfd {
  uint32_t daemon_pid;
  uint32_t reserved;
};
ATR_STATIC_ASSERT(sizeof(struct atr_hello_reply_memfd) == 8, "atr_hello_reply_memfd is 8 bytes");

#define ATR_RING_EXIT_SAVE 0x01u   /* atr_ring_register.flags: save at GOODBYE, even once released */
#define ATR_RING_NO_LOCK 0x02u     /* the ring is single-writer (ATR_RING_FLAG_NO_LOCK in its header) */
#define ATR_RING_COUNTER 0x04u     /* stamped with the cycle counter (ATR_RING_FLAG_COUNTER); needs ATR_FEATURE_RING_COUNTER */
/* The memfd is the process's collective ledger (ledger_layout.h), not a tracer ring: msg_num
 * is its record count, msg_size ATR_LEDGER_RECORD_SIZE, struct_count 0; needs ATR_FEATURE_LEDGER. */
#define ATR_RING_LEDGER 0x08u
#define ATR_RING_KNOWN_REGISTER_FLAGS 0x0fu
#define ATR_MAX_STRUCT_ENTRIES 10u /* CANN: TRACE_STRUCT_ENTRY_MAX_NUM, buffer types 0..9 */
#define ATR_MAX_STRUCT_FIELDS 1024u
#define ATR_MAX_STRUCT_NAME 31u    /* struct and field names, CANN: < TRACE_NAME_LENGTH */
#define ATR_MAX_REPORT_OBJECTS 100u /* CANN: MAX_OBJECT_NUM */
#define ATR_MAX_UTC_OFFSET 86400   /* seconds, either way */

/* RING_REGISTER request: this 24-byte head, name_len bytes of object name, then
 * struct_count struct entries in ascending buffer_type, each an atr_struct_entry_head,
 * name_len bytes of name, and field_count times (atr_struct_field_head + name).
 * The frame's first byte carries exactly one descriptor (SCM_RIGHTS): the ring's memfd.
 * Reply body: empty. */
struct atr_ring_register {
  uint32_t object_id;   /* chosen by the client, non-zero, unique among its rings */
  uint8_t tracer_type;  /* 0, CANN's TRACER_TYPE_SCHEDULE */
  uint8_t flags;        /* ATR_RING_EXIT_SAVE | ATR_RING_NO_LOCK | ATR_RING_COUNTER */
  uint8_t name_len;     /* 1..ATR_MAX_OBJECT_NAME */
  uint8_t struct_count; /* 0..ATR_MAX_STRUCT_ENTRIES; non-zero: the object saves as .bin */
  uint32_t msg_num;     /* as in the ring header */
  uint32_t msg_size;
  uint32_t ring_bytes;  /* the memfd's size */
  int32_t utc_offset_s; /* the client's local time minus UTC, for the .txt lines */
};
ATR_STATIC_ASSERT(sizeof(struct atr_ring_register) == 24, "atr_ring_register is 24 bytes");

struct atr_struct_entry_head {
  uint8_t buffer_type;  /* 0..9: records submitted with this bufferType use this layout */
  uint8_t name_len;     /* 0..ATR_MAX_STRUCT_NAME */
  uint16_t field_count; /* 1..ATR_MAX_STRUCT_FIELDS */
};
ATR_STATIC_ASSERT(sizeof(struct atr_struct_entry_head) == 4, "atr_struct_entry_head is 4 bytes");

struct atr_struct_field_head {
  uint8_t type;     /* CANN's TRACE_STRUCT_FIELD_TYPE_* (0..8) or TRACE_STRUCT_ARRAY_TYPE_* (100..108) */
  uint8_t mode;     /* TRACE_STRUCT_SHOW_MODE_* (0..3) */
  uint16_t length;  /* bytes the field occupies */
  uint8_t name_len; /* 0..ATR_MAX_STRUCT_NAME */
  uint8_t reserved;
};
ATR_STATIC_ASSERT(sizeof(struct atr_struct_field_head) == 6, "atr_struct_field_head is 6 bytes");

/* RING_RELEASE request: atr_id_request with the object id. Reply body: empty. */

/* RING_REPORT request: this 8-byte head, then count u32 object ids (distinct).
 * Reply body: empty. */
struct atr_ring_report {
  uint8_t wait; /* 1: reply after the files are written; 0: after the snapshot is taken */
  uint8_t reserved[3];
  uint32_t count; /* 1..ATR_MAX_REPORT_OBJECTS */
};
ATR_STATIC_ASSERT(sizeof(struct atr_ring_report) == 8, "atr_ring_report is 8 bytes");

/* RING_SAVE_ALL request (8 bytes): every registered, unreleased ring of this tracer type.
 * Reply body: empty. */
struct atr_ring_save_all {
  uint8_t wait;
  uint8_t tracer_type; /* 0 */
  uint8_t reserved[6];
};
ATR_STATIC_ASSERT(sizeof(struct atr_ring_save_all) == 8, "atr_ring_save_all is 8 bytes");

/* GOODBYE request: empty payload. Reply body: empty, sent after the exit files are written. */

/* CRASH request (24 bytes): a fatal signal caught by the process's handler, which waits for
 * the reply before it re-raises. The daemon writes a stackcore dir with the rings a
 * connection of the same process holds, a report and a backtrace of `tid` it unwinds from
 * outside, then replies. Reply body: empty; with ATR_FEATURE_CRASH_PATH granted, a string
 * (u16 length + bytes): the absolute path of the report written, empty when none was. */
#define ATR_MAX_SIGNO 64
struct atr_crash {
  int32_t signo;       /* 1..ATR_MAX_SIGNO */
  int32_t code;        /* siginfo si_code, as the kernel gave it */
  int32_t tid;         /* the thread that took the signal, > 0 */
  uint32_t reserved;
  uint64_t fault_addr; /* siginfo si_addr (0 where the signal has none) */
};
ATR_STATIC_ASSERT(sizeof(struct atr_crash) == 24, "atr_crash is 24 bytes");

/* DUMP request (8 bytes): the on-demand dump signal (CANN's 35) caught by the process's
 * handler, which waits a bounded time for the reply and then returns: the process runs on.
 * The daemon writes every registered, unreleased ring that a connection of the same process
 * holds into one schedule dir (RING_SAVE_ALL's files), then replies. Reply body: empty. */
struct atr_dump {
  int32_t signo; /* 1..ATR_MAX_SIGNO */
  int32_t tid;   /* the thread that took the signal, > 0 */
};
ATR_STATIC_ASSERT(sizeof(struct atr_dump) == 8, "atr_dump is 8 bytes");

/* STACK_DUMP request (16 bytes): the on-demand dump signal (35) queued with CANN's stack-dump
 * value (sigqueue, si_value 0xAABB0003 for every thread, 0xAABB0002 for the one that takes
 * it: asys collect -r=stacktrace), caught by the process's handler, which waits a bounded
 * time for the reply and then returns: the process runs on. The daemon looks at the process
 * from outside as for CRASH and writes one stackcore dir with the stack report (a .bin that
 * AtraceStackcoreParse turns into the .txt, and that .txt) and every unreleased ring, then
 * replies. It may come any number of times. Reply body: empty. */
#define ATR_STACK_DUMP_ALL_THREADS 0x1u /* every thread's stack, not only `tid`'s */
#define ATR_STACK_DUMP_KNOWN_FLAGS 0x1u
struct atr_stack_dump {
  int32_t signo;     /* 1..ATR_MAX_SIGNO: the signal that asked (35) */
  int32_t tid;       /* the thread that took the signal, > 0 */
  uint32_t flags;    /* ATR_STACK_DUMP_* */
  uint32_t reserved; /* 0 */
};
ATR_STATIC_ASSERT(sizeof(struct atr_stack_dump) == 16, "atr_stack_dump is 16 bytes");

/* DEVICE_STATS request (48 bytes, ATR_FEATURE_DEVICE_STATS): what one device's receiver in
 * the sending process counted since its last DEVICE_STATS that was answered (deltas), added
 * by the daemon to that device's totals in STATUS. A process sends it now and then while
 * device traces flow and when its receiver ends. Reply body: empty. */
struct atr_device_stats {
  uint32_t device_id; /* 0..ATR_MAX_DEVICE_ID */
  uint32_t reserved;  /* 0 */
  uint64_t received;
  uint64_t saved;
  uint64_t dropped_invalid;
  uint64_t dropped_daemon;
  uint64_t reconnects;
};
ATR_STATIC_ASSERT(sizeof(struct atr_device_stats) == 48, "atr_device_stats is 48 bytes");

/* PROCESS_DUMP request (ATR_FEATURE_PROCESS_DUMP): save live processes from outside them.
 * For each process chosen, the daemon writes one schedule dir: every registered, unreleased
 * ring (RING_SAVE_ALL's files) and a stack report of every thread, read with ptrace as the
 * process's own user (stackcore_tracer_35_{pid}_{program}_{time}.bin and .txt, STACK_DUMP's
 * format). The process is not stopped as a whole and not signalled. This 16-byte head, then
 * comm_len bytes of comm, job_len bytes of job (ATR_FEATURE_LABELS's job label), then pid_count i32 pids. Either pids (pid_count >= 1, select 0) or
 * a selection (select != 0, pid_count 0): the live processes whose rings the daemon holds
 * and which the sender may dump (root: any; others: their own uid's), narrowed by every
 * criterion given. Reply body: u32 count, u32 omitted (chosen but past
 * ATR_MAX_DUMP_PROCESSES), then count times an atr_process_dump_entry followed by a string
 * (u16 length + bytes): the absolute event directory on status 0, else why not. */
#define ATR_PROCESS_DUMP_ALL 0x1u  /* every process the sender may dump */
#define ATR_PROCESS_DUMP_UID 0x2u  /* ... whose uid is `uid` */
#define ATR_PROCESS_DUMP_COMM 0x4u /* ... whose program (comm at connect) is `comm` */
#define ATR_PROCESS_DUMP_JOB 0x8u  /* ... whose job label (LABELS) is `job`; a daemon without it: -EINVAL select */
#define ATR_PROCESS_DUMP_KNOWN_SELECT 0xfu
#define ATR_MAX_DUMP_PROCESSES 128u /* pids in a request, entries in a reply */
struct atr_process_dump {
  uint32_t select;    /* ATR_PROCESS_DUMP_*; 0 when pids are given */
  uint32_t uid;       /* ATR_PROCESS_DUMP_UID: the uid; else 0 */
  uint16_t pid_count; /* 0..ATR_MAX_DUMP_PROCESSES, distinct pids > 0 */
  uint8_t comm_len;   /* ATR_PROCESS_DUMP_COMM: 1..ATR_MAX_PROGRAM_NAME; else 0 */
  uint8_t job_len;    /* ATR_PROCESS_DUMP_JOB: 1..ATR_MAX_LABEL; else 0 */
  uint8_t reserved[4];
};
ATR_STATIC_ASSERT(sizeof(struct atr_process_dump) == 16, "atr_process_dump is 16 bytes");

struct atr_process_dump_entry {
  int32_t pid;
  int32_t status;       /* 0, or this process's refusal: -ESRCH, -ENOENT, -EPERM, -EAGAIN, ... */
  uint32_t threads;     /* threads in the stack report */
  uint32_t rings;       /* ring files written */
  uint32_t max_stop_us; /* the longest any thread was held stopped, microseconds */
  uint32_t reserved;
};
ATR_STATIC_ASSERT(sizeof(struct atr_process_dump_entry) == 24, "atr_process_dump_entry is 24 bytes");
/* LABELS request (ATR_FEATURE_LABELS): what the process says it is part of, three strings
 * (u16 length + bytes), in this order: job, rank, world_size; each may be empty (not set).
 * job: at most ATR_MAX_LABEL bytes of [A-Za-z0-9._:@+=-]; rank: a decimal 0..2147483647;
 * world_size: a decimal 1..2147483647, no sign, no leading zero. Then, only where HELLO
 * granted ATR_FEATURE_HANG_TIMEOUT and only when set, a fourth string: hang_timeout, a time
 * span (digits and an optional ms, s, min, h or d; none: seconds) above zero, at most
 * ATR_MAX_LABEL bytes. Nothing follows. A bad one refuses the whole request (-EINVAL, the
 * message names the label); nothing is recorded.
 * Reply body: empty. Labels are the process's word: the daemon grants nothing by them, and
 * takes hang_timeout only where it is shorter than its own hang-timeout. */
#define ATR_MAX_LABEL 64u

/* LIST_LIVE request (ATR_FEATURE_LIST_LIVE, 8 bytes + job): the live processes whose rings the
 * daemon holds, or that sent LABELS, and which the sender may see (as LIST decides: root, the
 * daemon's uid and the reader group see every process; anyone else their own uid's only).
 * job_len 0: all of them; 1..ATR_MAX_LABEL: only those whose job label is the job_len bytes
 * of job that follow the head. Reply body: u32 count (<= ATR_MAX_LIVE_ENTRIES), u32 omitted
 * (matched past the bound), then count times an atr_live_entry followed by four strings
 * (u16 length + bytes): comm, job, rank, world_size ("" not known / not sent). In pid order. */
#define ATR_MAX_LIVE_ENTRIES 1024u
struct atr_list_live {
  uint8_t job_len;     /* 0..ATR_MAX_LABEL */
  uint8_t reserved[7]; /* 0 */
};
ATR_STATIC_ASSERT(sizeof(struct atr_list_live) == 8, "atr_list_live is 8 bytes");
#define ATR_LIVE_WATCHED (1u << 0) /* the hang watch judges it (timeout_ms is its timeout) */
#define ATR_LIVE_STALLED (1u << 1) /* judged stalled: no ring moved for its timeout; not again until one moves */
#define ATR_LIVE_BUSY (1u << 2)    /* with STALLED: it used CPU time meanwhile (a spin); without: blocked */
#define ATR_LIVE_CAPTURED (1u << 3) /* dumped with its job when another process of it stalled; not judged until it moves */
#define ATR_LIVE_NEVER_WROTE (1u << 4) /* no record in any ring yet: not judged */
#define ATR_LIVE_KNOWN_FLAGS 0x1fu
struct atr_live_entry {
  int32_t pid;
  uint32_t uid;
  uint32_t flags;      /* ATR_LIVE_* */
  uint32_t rings;      /* rings held for it */
  uint64_t last_moved_unix_us; /* the daemon's clock when it last saw a ring's write position advance (or first saw it); 0 never wrote */
  uint64_t still_ms;   /* how long no ring has moved since (0: never wrote) */
  uint64_t timeout_ms; /* ATR_LIVE_WATCHED: the hang timeout it is judged by; else 0 */
};
ATR_STATIC_ASSERT(sizeof(struct atr_live_entry) == 40, "atr_live_entry is 40 bytes");

/* AGED_DUMPS request (ATR_FEATURE_AGED_DUMPS, 8 bytes + job): an atr_list_live, as LIST_LIVE's
 * (job_len 0: every job's; else only the job's). The dump directories (PROCESS_DUMP's, an
 * operator's or the hang watch's) that aging removed, the newest ATR_MAX_AGED_ENTRIES the
 * daemon keeps (across restarts), those the sender may see as LIST decides (root, the
 * daemon's uid and the reader group: every one; anyone else: their own uid's). Reply body:
 * u32 count (<= ATR_MAX_AGED_ENTRIES), u32 omitted (matched past the bound), then count times
 * an atr_aged_entry followed by four strings (u16 length + bytes): path (relative to
 * <root>/atrace, as LIST's), job, rank, world_size ("" not sent). Oldest first. */
#define ATR_MAX_AGED_ENTRIES 1024u
#define ATR_AGED_COUNT 0u     /* record_num (after dump-keep ran out, or after an export) */
#define ATR_AGED_BYTES 1u     /* the byte budget, max-use */
#define ATR_AGED_KEEP_FREE 2u /* keep-free: the file system was nearly full */
#define ATR_AGED_AGE 3u       /* max-age */
#define ATR_AGED_VACUUM 4u    /* a VACUUM or VACUUM_BY */
#define ATR_AGED_EXPORTED (1u << 0) /* flags: a bundle held it before it went (DUMPS_EXPORTED) */
#define ATR_AGED_HANG (1u << 1)     /* flags: the hang watch's dump (ATR_LIST_HANG); without: an operator's */
#define ATR_AGED_KNOWN_FLAGS 0x3u
struct atr_aged_entry {
  uint64_t aged_unix_us; /* the daemon's clock at the removal */
  uint32_t uid;          /* whose dump it was */
  uint8_t reason;        /* ATR_AGED_COUNT..ATR_AGED_VACUUM */
  uint8_t flags;         /* ATR_AGED_* */
  uint8_t reserved[2];   /* 0 */
};
ATR_STATIC_ASSERT(sizeof(struct atr_aged_entry) == 16, "atr_aged_entry is 16 bytes");

#endif /* ATRACED_PROTO_WIRE_H_ */
