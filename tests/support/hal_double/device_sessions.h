// The trace server's session nodes (device-channel.md §4.2-§4.4): one per long link,
// keyed by (host pid, device id), on the live list until the host's [end] moves it to the
// deleted list; each with a queue of at most 16 messages / 8 MiB; and the 100 ms send tick
// that forwards queues, closes sessions of hosts that went away, and finishes deleted nodes
// after their flush timeout (TraceEndMsg + HDC_END_MSG only when an end chunk went out).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ascend_hal_double.h"

namespace atraced::hal_double::device {

// A queued message, already split into the HDC messages that carry it.
struct Outgoing {
  std::vector<std::string> hdc;
  uint8_t seq_flag = 0xff;  // the event's seqFlag; 0xff for hostile traffic (never an end)
  size_t bytes = 0;
  std::string what;  // for the log
};

class SessionStore {
 public:
  static constexpr size_t kMaxQueued = 16;
  static constexpr size_t kMaxQueuedBytes = 8u << 20;
  static constexpr int kTickMs = 100;  // CANN's trace server's send period

  // Another period (1..1000 ms), for a bench that measures the host past the device's
  // own bound; the flush window runs down by the same step.
  void SetTickMs(int ms) { tick_ms_ = ms; }
  int tick_ms() const { return tick_ms_; }

  // A long link after its TraceStartMsg; false if (pid, dev) is already known ("session has existed").
  bool Add(int pid, int dev, HDC_SESSION session, int timeout_ms);
  // The host's [end]: the node goes to the deleted list. False if there was none.
  bool MarkDeleted(int pid, int dev);

  enum class Queued { kOk, kNoSession, kFull };
  // Queues on the node of (pid, dev), live or deleted (a chunk arriving in the flush window
  // is still forwarded).
  Queued Enqueue(int pid, int dev, Outgoing message);
  // The TS chunk's event time: fixed at a start chunk (or when the node holds none), the
  // same for every chunk up to the end chunk, then forgotten. Empty if there is no node.
  std::string TsEventTime(int pid, int dev, uint8_t seq_flag);

  // One pass of the send thread.
  void Tick();
  // The live node of (pid, dev) taken off the lists, its session now the caller's to send
  // on and close (the tick neither feeds nor reaps it, and [end] no longer finds it). Null
  // if there is none.
  HDC_SESSION Take(int pid, int dev);
  // Every long link closed and forgotten (a device daemon restart); returns how many.
  size_t DropAll();
  // "N pid:dev:live|deleted ..."
  std::string Describe();
  // Waits until (pid, dev) has a live node (dev < 0: any device).
  bool WaitForNode(int pid, int dev, std::chrono::milliseconds timeout);
  // Waits until every queue is empty and no send is in progress.
  bool WaitIdle(std::chrono::milliseconds timeout);

 private:
  int tick_ms_ = kTickMs;
  struct Node {
    int pid = 0;
    int dev = 0;
    HDC_SESSION session = nullptr;
    int timeout_ms = 0;
    bool deleted = false;
    std::deque<Outgoing> queue;
    size_t queued_bytes = 0;
    std::string ts_time;
  };
  std::shared_ptr<Node> FindLocked(int pid, int dev);
  void RemoveLocked(const std::shared_ptr<Node>& node);
  bool IdleLocked() const;

  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::shared_ptr<Node>> live_;
  std::vector<std::shared_ptr<Node>> deleted_;
  int sending_ = 0;
};

}  // namespace atraced::hal_double::device
