// A stand-in for atraced that speaks protocol 1.1 through the proto codec, for tests of the
// library's side of the connection: it records what arrives (with the memfds) and answers OK.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "atraced/proto/codec.h"
#include "atraced/base/unique_fd.h"

namespace ascend_trace_test {

struct Registered {
  atraced::proto::RingRegister msg;
  atraced::UniqueFd memfd;
  size_t fds_attached = 0;
};

class RecordingDaemon {
 public:
  // Listens on `path` (removed first). grant_memfd = false plays a 1.0 daemon.
  explicit RecordingDaemon(std::string path, bool grant_memfd = true);
  ~RecordingDaemon();  // stops and closes everything

  const std::string& path() const { return path_; }

  // Everything received so far, in order (opcode per request), and the registrations.
  std::vector<uint16_t> Opcodes();
  std::vector<atraced::proto::RingReport> Reports();
  std::vector<uint32_t> Released();
  int Connections();
  // The ring registered under `object_id`, copied now; empty if unknown.
  std::vector<uint8_t> SnapshotRing(uint32_t object_id);
  const Registered* Find(uint32_t object_id);  // valid until the daemon is destroyed
  // Waits until `n` requests with `opcode` have arrived (true), or 5 s passed (false).
  bool WaitFor(uint16_t opcode, size_t n);

 private:
  void Serve();
  void ServeConnection(int fd);

  std::string path_;
  bool grant_memfd_;
  atraced::UniqueFd listener_;
  atraced::UniqueFd wake_[2];
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<uint16_t> opcodes_;
  std::vector<std::unique_ptr<Registered>> rings_;
  std::vector<atraced::proto::RingReport> reports_;
  std::vector<uint32_t> released_;
  int connections_ = 0;
};

}  // namespace ascend_trace_test
