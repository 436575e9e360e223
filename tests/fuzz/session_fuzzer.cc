// libFuzzer target: arbitrary bytes from a client, through a real Session over an in-process
// socket pair, into the request handler and the store on a scratch root, on one io_context
// as in the daemon, so each input runs deterministically to completion. Aging (with inline
// deletes) keeps the scratch root bounded however long the fuzzer runs.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "atraced/core/posix_file_system.h"
#include "atraced/core/process_table.h"
#include "atraced/core/remover.h"
#include "atraced/core/trace_service.h"
#include "atraced/ipc/session.h"

using namespace atraced;

namespace {

struct World {
  World() {
    char tmpl[] = "/tmp/atraced-fuzz.XXXXXX";
    root = ::mkdtemp(tmpl);
    fs = std::move(*PosixFileSystem::Open(root));
    remover = std::make_unique<InlineRemover>(*fs);
    store = std::make_unique<TraceStore>(*fs, *remover, clock, log, 10);
    if (!store->Recover().ok()) std::abort();
    ServiceOptions o;
    o.root = root;
    o.max_events_per_client = 8;
    o.max_files_per_client = 8;
    service = std::make_unique<TraceService>(*store, processes, clock, log, o);
  }
  std::string root;
  SystemClock clock;
  Logger log{[](LogLevel, std::string_view) {}, LogLevel::kError};
  ProcProcessTable processes;
  std::unique_ptr<PosixFileSystem> fs;
  std::unique_ptr<InlineRemover> remover;
  std::unique_ptr<TraceStore> store;
  std::unique_ptr<TraceService> service;
  asio::io_context io;
};

World& TheWorld() {
  static World* w = new World();  // lives for the whole fuzzing run
  return *w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = TheWorld();
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0) return 0;
  LocalSocket server(w.io);
  server.assign(asio::local::stream_protocol(), sv[0]);
  bool closed = false;
  auto session = std::make_shared<Session>(std::move(server), *w.service, w.log,
                                           std::chrono::seconds(30), [&closed](Session*) { closed = true; });
  session->Start();
  session.reset();
  size_t off = 0;
  char sink[65536];
  // Feed the input while draining replies, then hang up and let the session wind down.
  while (off < size) {
    ssize_t n = ::send(sv[1], data + off, size - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) off += static_cast<size_t>(n);
    if (n < 0 && errno != EAGAIN) break;
    w.io.restart();
    w.io.poll();
    while (::recv(sv[1], sink, sizeof sink, MSG_DONTWAIT) > 0) {
    }
    if (closed) break;
  }
  ::shutdown(sv[1], SHUT_WR);
  for (int i = 0; i < 10000 && !closed; ++i) {
    w.io.restart();
    w.io.poll();
    while (::recv(sv[1], sink, sizeof sink, MSG_DONTWAIT) > 0) {
    }
  }
  ::close(sv[1]);
  w.io.restart();
  w.io.poll();
  if (!closed) std::abort();  // a session must end when its peer hangs up
  return 0;
}
