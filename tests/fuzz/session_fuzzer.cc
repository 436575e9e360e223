// libFuzzer target: a client, through a real Session over an in-process socket pair, into
// the request handler and the store on a scratch root, on one io_context as in the daemon,
// so each input runs deterministically to completion. Aging (with inline deletes) keeps the
// scratch root bounded however long the fuzzer runs.
//
// Two kinds of input: raw bytes, fed as they are (single frames, garbage, the frame corpus),
// and, after a first byte of kScriptMarker, a script of requests (session_script.h) that
// reaches FILE_GET_FD, pipelined batches and tampering with passed files. Every descriptor
// received is closed, and each input checks that the process holds no more than it did.
#include <dirent.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "atraced/store/posix_file_system.h"
#include "atraced/processes/process_table.h"
#include "atraced/store/remover.h"
#include "atraced/service/trace_service.h"
#include "atraced/ipc/session.h"
#include "session_peer.h"
#include "support/inline_runners.h"
#include "session_script.h"

using namespace atraced;
using atraced::testing::InlineCrashRunner;
using atraced::testing::InlineIoRunner;

namespace {

struct World {
  World() {
    char tmpl[] = "/tmp/atraced-fuzz.XXXXXX";
    root = ::mkdtemp(tmpl);
    fs = std::move(*PosixFileSystem::Open(root));
    remover = std::make_unique<InlineRemover>(*fs);
    store = std::make_unique<TraceStore>(*fs, *remover, clock, log, refusals, 10);
    if (!store->Recover().ok()) std::abort();
    ServiceLimits o;
    o.root = root;
    o.max_events_per_client = 8;
    o.max_files_per_client = 8;
    TraceService::Dependencies deps;
    deps.store = store.get();
    deps.processes = &processes;
    deps.clock = &clock;
    deps.log = &log;
    deps.io_runner = &io_runner;
    deps.crash_runner = &crash_runner;
    service = std::make_unique<TraceService>(std::move(deps), o);
  }
  std::string root;
  InlineIoRunner io_runner;  // a save's reply comes in its batch, as a one-input fuzzer needs
  InlineCrashRunner crash_runner;
  SystemClock clock;
  Logger log{[](LogLevel, std::string_view) {}, LogLevel::kError};
  RefusalLog refusals;
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

constexpr uint8_t kScriptMarker = 0xA5;

size_t OpenFds() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (::readdir(d) != nullptr) ++n;
    ::closedir(d);
  }
  return n;
}

// Descriptors the process may gain without leaking: the store's cache of process dirs and
// a few for the order log and libFuzzer's own. A leak of one per input passes this in a few
// hundred inputs.
constexpr size_t kFdSlack = PosixFileSystem::kDirCacheSize + 16;

void FeedRaw(fuzz::Peer& peer, const uint8_t* data, size_t size, const bool& closed) {
  // Sends, then drains replies, in steps, as the raw corpus always did.
  size_t off = 0;
  while (off < size && !closed) {
    ssize_t n = ::send(peer.fd(), data + off, size - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) off += static_cast<size_t>(n);
    if (n < 0 && errno != EAGAIN) break;
    peer.Pump();
    peer.Drain();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = TheWorld();
  static const size_t fds_at_start = OpenFds();
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0) return 0;
  LocalSocket server(w.io);
  server.assign(asio::local::stream_protocol(), sv[0]);
  bool closed = false;
  auto session = std::make_shared<Session>(std::move(server), *w.service, w.log,
                                           std::chrono::seconds(30), [&closed](Session*) { closed = true; });
  session->Start();
  session.reset();
  {
    fuzz::Peer peer(w.io, sv[1]);
    if (size > 0 && data[0] == kScriptMarker) {
      fuzz::ScriptReader script(data + 1, size - 1);
      fuzz::ScriptClient(peer, closed).Run(script);
    } else {
      FeedRaw(peer, data, size, closed);
    }
    // Hang up and let the session wind down, reading (and closing) what is still sent.
    ::shutdown(peer.fd(), SHUT_WR);
    for (int i = 0; i < 10000 && !closed; ++i) {
      peer.Pump();
      peer.Drain();
    }
  }
  w.io.restart();
  w.io.poll();
  if (!closed) std::abort();  // a session must end when its peer hangs up
  // The daemon keeps its own open of a passed file until nobody writes it, and lets it go on
  // its next tick: the peer has closed every descriptor it got, so one tick frees them all.
  w.service->Tick();
  if (OpenFds() > fds_at_start + kFdSlack) {
    std::fprintf(stderr, "descriptor leak: %zu open, %zu at the start\n", OpenFds(), fds_at_start);
    std::abort();
  }
  return 0;
}
