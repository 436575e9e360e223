// Entry points for the client handle itself: open, close, errors, counters.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "atraced/atrace_client.h"
#include "client.h"
#include "endpoint.h"
#include "guard.h"

using namespace atrace_client_internal;

int atrace_client_internal::OpenWithFeatures(const atrace_client_options* options, uint64_t extra_features,
                                             atrace_client** out) {
  if (out == nullptr) return -EINVAL;
  *out = nullptr;
  return Guarded([&] {
    atrace_client_options defaults;
    atrace_client_options_init(&defaults);
    const atrace_client_options& o = options != nullptr ? *options : defaults;
    auto c = std::make_unique<atrace_client>();
    c->socket_paths = CandidateSocketPaths(o.socket_path);
    if (o.connect_timeout_ms > 0) c->connect_timeout_ms = o.connect_timeout_ms;
    if (o.io_timeout_ms > 0) c->io_timeout_ms = o.io_timeout_ms;
    if (o.max_in_flight > 0) c->max_in_flight = o.max_in_flight;
    if (o.flags & ATRACE_OPT_NO_FD_PASSING) c->features = 0;
    if (o.flags & ATRACE_OPT_PROCESS_DUMP) c->features |= ATR_FEATURE_PROCESS_DUMP;
    if (o.flags & ATRACE_OPT_LIST_LIVE) c->features |= ATR_FEATURE_LIST_LIVE;
    c->features |= ATR_FEATURE_DUMPS_EXPORTED;  // costs nothing granted; atrace_client_dumps_exported needs it
    c->features |= ATR_FEATURE_AGED_DUMPS;  // the same; atrace_client_aged_dumps needs it
    c->features |= extra_features;
    auto get = [](const char* name) -> const char* { return ::getenv(name); };
    std::string refused;
    c->labels = {atraced::proto::CheckedLabelsFromEnvironment(get, &refused),
                 atraced::proto::HangTimeoutFromEnvironment(get)};
    static std::atomic<bool> told{false};
    if (!refused.empty() && !told.exchange(true)) {  // left out, the others sent: said once
      const std::string line = "libatrace_client: a job/rank label of the environment is not sent: " + refused + "\n";
      (void)!::write(STDERR_FILENO, line.data(), line.size());
    }
    if (!c->labels.labels.empty() || !c->labels.hang_timeout.empty()) {
      c->features |= ATR_FEATURE_LABELS | ATR_FEATURE_HANG_TIMEOUT;
    }
    int rc = Ready(*c);
    if (rc != 0) return rc;
    *out = c.release();
    return 0;
  });
}

extern "C" {

void atrace_client_options_init(atrace_client_options* options) {
  if (options == nullptr) return;
  *options = atrace_client_options{};
  options->connect_timeout_ms = ATRACE_DEFAULT_CONNECT_TIMEOUT_MS;
  options->io_timeout_ms = ATRACE_DEFAULT_IO_TIMEOUT_MS;
  options->max_in_flight = ATRACE_DEFAULT_MAX_IN_FLIGHT;
}

int atrace_client_open(const atrace_client_options* options, atrace_client** out) {
  return OpenWithFeatures(options, 0, out);
}

void atrace_client_close(atrace_client* client) {
  if (client == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(client->mu);
    if (client->conn && client->conn->owner_pid() == ::getpid() && !client->async.empty()) {
      // Give queued asynchronous events their chance to reach the daemon, within the bound.
      (void)client->conn->Pump(Deadline::In(client->io_timeout_ms), 0);
    }
    client->conn.reset();
  }
  delete client;
}

const char* atrace_client_last_message(atrace_client* client) {
  if (client == nullptr) return "";
  std::lock_guard<std::mutex> lock(client->mu);
  return client->last_message.c_str();
}

int atrace_client_get_stats(atrace_client* client, atrace_client_stats* out) {
  if (client == nullptr || out == nullptr) return -EINVAL;
  std::lock_guard<std::mutex> lock(client->mu);
  *out = client->stats;
  return 0;
}

const char* atrace_client_strerror(int error) {
  // Library-specific wording for what applications see most; static strings, so the
  // result is thread-safe and never freed.
  switch (error) {
    case 0: return "success";
    // One meaning each: which thing was not found is the caller's to say (the socket it
    // opened, or the daemon's message naming an id).
    case -ENOENT: return "not found";
    case -ECONNREFUSED: return "connection refused: nothing listens on the daemon's socket";
    case -ETIMEDOUT: return "daemon did not answer within the timeout";
    case -ECONNRESET: return "connection to the daemon lost (open events on it are lost)";
    case -EPROTO: return "protocol error";
    case -EINVAL: return "invalid argument";
    case -ENAMETOOLONG: return "name or path too long";
    case -ENOTSUP: return "feature not granted by the daemon (descriptor passing)";
    case -EPERM: return "operation not permitted";
    case -EACCES: return "permission denied";
    case -EBUSY: return "per-client limit reached";
    case -EEXIST: return "id already in use";
    case -EBADF: return "file already closed";
    case -ESRCH: return "no such process";
    case -EIO: return "I/O error";
    case -ENOSPC: return "no space left: the disk, or the daemon's byte budget or keep-free reserve";
    case -EAGAIN: return "the daemon's rate limit on new events was reached: retry later";
    case -EMFILE: return "daemon out of descriptors";
    case -ENOSYS: return "operation not supported by the daemon";
    case -EBADMSG: return "daemon could not decode the request";
    case -EMSGSIZE: return "message too long";
    case -EPROTONOSUPPORT: return "protocol version not supported by the daemon";
    case -ENOMEM: return "out of memory";
    case -ESHUTDOWN: return "the daemon stopped before the save was written";
    default: return error < 0 ? "unknown error" : "invalid error code (not a negative errno)";
  }
}

}  // extern "C"
