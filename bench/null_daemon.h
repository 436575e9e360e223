// The null daemon: the least any trace daemon must do, as a floor to measure atraced against.
// One forked process, one thread, a plain epoll loop over non-blocking Unix stream sockets,
// no protocol codec beyond a fixed header, no order log, no accounting. It does exactly the
// disk work of the direct (CANN-style) writer, so what it costs above that writer is the
// least a separate process can cost on this machine.
//
// Multi-threaded variant (Options::threads >= 1): the same wire format, the same request
// handling and the same file work, served by `threads` worker threads, each with its own
// epoll loop over its share of the connections. The process's main thread only accepts and
// hands each new connection to the next worker in turn (an EPOLL_CTL_ADD into that worker's
// epoll; the worker makes its state at the connection's first readiness), so a request is
// read, handled and answered on one thread, with no hand-off. Each worker owns its own
// CannWriter (root <event_root>/w<k>, record num as given): file work runs in parallel and
// ages per worker, like N CANN-style processes, with no shared order or count. That is a
// lower bound for any multi-threaded daemon, which must also keep one order across workers.
//
// Wire format, both ways in host byte order (same machine):
//   request: uint32 kind (| kWantReply), uint32 payload length, then the payload
//   reply:   16 bytes (NullReply)
// Kinds:
//   kPing   - no payload; replies at once.
//   kEvent  - payload = the one file of an event; the server writes it as one event with a
//             CannWriter it owns (record num 10), then replies.
//   kAppend - payload write()n to the one file the server keeps open; replies only if the
//             request carries kWantReply, so a stream of appends needs no round trip each.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace atraced_bench {

enum NullKind : uint32_t { kNullPing = 1, kNullEvent = 2, kNullAppend = 3 };
constexpr uint32_t kWantReply = 1u << 31;
constexpr uint32_t kNullMaxPayload = 256 * 1024;

struct NullHeader {
  uint32_t kind;
  uint32_t len;
};

struct NullReply {
  uint32_t kind;    // the request's kind, without kWantReply
  int32_t status;   // 0 or -errno of the server's work
  uint64_t value;   // kEvent: events written; kAppend: bytes appended on this connection
};
static_assert(sizeof(NullHeader) == 8 && sizeof(NullReply) == 16, "fixed wire sizes");

class NullDaemon {
 public:
  struct Options {
    std::string socket;       // Unix socket path to listen on (replaced if present)
    std::string event_root;   // the server's CannWriter root
    std::string append_file;  // the file kAppend writes to (created, truncated)
    size_t record_num = 10;
    // 0: the single-threaded loop (accepts in its own loop, writes under event_root).
    // N >= 1: N worker threads and an accepting main thread; worker k writes under
    // <event_root>/w<k> (see above).
    int threads = 0;
  };
  // Binds and listens here, then forks the server (PR_SET_PDEATHSIG SIGKILL): connect()
  // succeeds as soon as this returns. Fails (BenchError) on any system call error.
  explicit NullDaemon(const Options& options);
  ~NullDaemon();  // SIGKILL and reap: the server keeps nothing that needs flushing
  NullDaemon(const NullDaemon&) = delete;
  NullDaemon& operator=(const NullDaemon&) = delete;

  const std::string& socket() const { return options_.socket; }
  int threads() const { return options_.threads; }
  // The roots the server's CannWriters write under: event_root, or one per worker.
  std::vector<std::string> event_roots() const;

 private:
  Options options_;
  pid_t pid_ = -1;
};

// A blocking client connection. Every failure, and a non-zero status, is a Fail.
class NullClient {
 public:
  explicit NullClient(const std::string& socket);
  ~NullClient();
  NullClient(const NullClient&) = delete;
  NullClient& operator=(const NullClient&) = delete;

  // One request (header and payload in one writev) without waiting for a reply.
  void Send(uint32_t kind, const void* payload, size_t len);
  // Waits for the next reply.
  NullReply Receive();
  // Send, then Receive: one round trip.
  NullReply Call(uint32_t kind, const void* payload, size_t len) {
    Send(kind, payload, len);
    return Receive();
  }

 private:
  int fd_ = -1;
};

}  // namespace atraced_bench
