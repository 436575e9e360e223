// A fuzz input read as a client's script rather than as raw bytes: a sequence of requests
// (HELLO, EVENT_BEGIN, FILE_OPEN, FILE_GET_FD, FILE_APPEND, ...), pipelined batches sent
// without reading, reads interleaved, and what a descriptor holder may do with a passed
// file (clear O_APPEND, ftruncate, pwrite far out). Raw bytes reach only the frame decoder
// and the first checks; a script gets past HELLO and into the store in nearly every input.
//
// Format: one opcode byte per step, then its argument bytes, read from the front (so seeds
// can be written by hand; see tests/fuzz/corpus/session/script_*.bin). Missing bytes read 0.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "atraced/proto/codec.h"
#include "session_peer.h"

namespace atraced::fuzz {

// Reads the script from the front; an exhausted script reads zeros.
class ScriptReader {
 public:
  ScriptReader(const uint8_t* data, size_t size) : p_(data), n_(size) {}
  bool done() const { return n_ == 0; }
  uint8_t Byte() {
    if (n_ == 0) return 0;
    --n_;
    return *p_++;
  }
  std::span<const uint8_t> Bytes(size_t want) {
    const size_t n = std::min(want, n_);
    std::span<const uint8_t> out(p_, n);
    p_ += n;
    n_ -= n;
    return out;
  }

 private:
  const uint8_t* p_;
  size_t n_;
};

enum ScriptOp : uint8_t {
  kHello, kBegin, kOpen, kGetFd, kAppend, kClose, kEnd, kQuery, kPipeline, kRead, kRaw, kPump, kOpCount
};

class ScriptClient {
 public:
  ScriptClient(Peer& peer, const bool& closed) : peer_(peer), closed_(closed) {}

  // Runs at most kMaxSteps steps, so every input ends quickly.
  void Run(ScriptReader& in) {
    for (int step = 0; step < kMaxSteps && !in.done() && !closed_; ++step) Step(in);
    peer_.Drain();
  }

 private:
  static constexpr int kMaxSteps = 256;
  static constexpr uint8_t kIds = 4;  // ids 1..4, so later steps meet earlier ones

  // Mostly a live id; 0 and a huge id now and then, for the refusals.
  static uint32_t Id(uint8_t b) { return b == 255 ? 0 : b == 254 ? 0xFFFFFFFFu : b % kIds + 1u; }

  void Step(ScriptReader& in) {
    std::vector<uint8_t> frames;
    switch (static_cast<ScriptOp>(in.Byte() % kOpCount)) {
      case kHello: {
        const uint8_t b = in.Byte();
        proto::Hello h;
        h.major = (b & 4) ? 2 : ATR_VERSION_MAJOR;
        h.features = ((b & 1) ? ATR_FEATURE_FD_PASSING : 0) | ((b & 2) ? ATR_FEATURE_MEMFD : 0) |
                     ((b & 8) ? ATR_FEATURE_PROCESS_DUMP : 0) | ((b & 16) ? ATR_FEATURE_LABELS : 0) |
                     ((b & 32) ? ATR_FEATURE_LIST_LIVE : 0);
        Frame(frames, ATR_OP_HELLO, h);
        break;
      }
      case kBegin: Frame(frames, ATR_OP_EVENT_BEGIN, Begin(in)); break;
      case kOpen: Frame(frames, ATR_OP_FILE_OPEN, Open(in)); break;
      case kGetFd: Frame(frames, ATR_OP_FILE_GET_FD, proto::IdRequest{Id(in.Byte())}); break;
      case kAppend: {
        const uint32_t id = Id(in.Byte());
        Frame(frames, ATR_OP_FILE_APPEND, proto::FileAppend{id, in.Bytes(in.Byte())});
        break;
      }
      case kClose: Frame(frames, ATR_OP_FILE_CLOSE, proto::IdRequest{Id(in.Byte())}); break;
      case kEnd: Frame(frames, ATR_OP_EVENT_END, proto::IdRequest{Id(in.Byte())}); break;
      case kQuery: {
        const uint8_t b = in.Byte();
        if (b & 4) {  // LABELS: the job and rank from the script, valid or not
          const auto job = in.Bytes(b >> 4);
          const auto rank = in.Bytes(b & 8 ? 2 : 0);
          Frame(frames, ATR_OP_LABELS, proto::Labels{std::string(job.begin(), job.end()),
                                                     std::string(rank.begin(), rank.end()), "8"});
        } else if (b & 1) {
          Frame(frames, ATR_OP_LIST, proto::ListRequest{0, 1 + in.Byte() % 16u});
        } else if (b & 2) {  // PROCESS_DUMP of this peer (holding nothing), another pid, or a selection
          const uint8_t select = in.Byte() % (ATR_PROCESS_DUMP_KNOWN_SELECT + 1);
          proto::ProcessDump m{select, (select & ATR_PROCESS_DUMP_UID) ? in.Byte() : 0u,
                               (select & ATR_PROCESS_DUMP_COMM) ? "app" : "", {}};
          if (select == 0) m.pids = {static_cast<int32_t>(1 + in.Byte())};
          Frame(frames, ATR_OP_PROCESS_DUMP, m);
        } else if (b & 8) {  // LIST_LIVE: every process, or a job from the script, valid or not
          const auto job = in.Bytes(b >> 4);
          Frame(frames, ATR_OP_LIST_LIVE, proto::ListLive{std::string(job.begin(), job.end())});
        } else {
          Frame(frames, ATR_OP_STATUS, proto::StatusRequest{});
        }
        break;
      }
      case kPipeline: Pipeline(in, frames); break;
      case kRead: {
        const uint8_t b = in.Byte();
        peer_.Pump();
        peer_.Drain([b](int fd) { Tamper(fd, b); });
        return;
      }
      case kRaw: {
        auto raw = in.Bytes(in.Byte());
        frames.assign(raw.begin(), raw.end());
        break;
      }
      case kPump:
        peer_.Pump();
        return;
      case kOpCount:
        return;
    }
    if (peer_.Send(frames, closed_)) peer_.Pump();  // replies are left unread until a kRead
  }

  // Up to 64 copies of one request in a single write, read only when a kRead comes.
  void Pipeline(ScriptReader& in, std::vector<uint8_t>& frames) {
    const int count = 1 + in.Byte() % 64;
    const uint8_t which = in.Byte();
    const uint32_t id = Id(in.Byte());
    for (int i = 0; i < count; ++i) {
      switch (which % 4) {
        case 0: Frame(frames, ATR_OP_FILE_GET_FD, proto::IdRequest{id}); break;
        case 1: Frame(frames, ATR_OP_FILE_APPEND, proto::FileAppend{id, {&which, 1}}); break;
        case 2: Frame(frames, ATR_OP_STATUS, proto::StatusRequest{}); break;
        default:
          Frame(frames, ATR_OP_EVENT_BEGIN, proto::EventBegin{id, ATR_EVENT_SCHEDULE, ATR_SIDE_HOST, 0, 0, ""});
          Frame(frames, ATR_OP_EVENT_END, proto::IdRequest{id});
          break;
      }
    }
  }

  static proto::EventBegin Begin(ScriptReader& in) {
    proto::EventBegin b;
    b.event_id = Id(in.Byte());
    const uint8_t k = in.Byte();
    b.kind = static_cast<uint8_t>(k % 4);  // 0 is invalid
    b.side = (k & 4) ? ATR_SIDE_DEVICE : ATR_SIDE_HOST;
    b.device_id = (k >> 3) & 3;
    return b;
  }

  static proto::FileOpen Open(ScriptReader& in) {
    static const char* const kNames[] = {"a", "b", "fuzz", "x.y", "bad/name"};
    proto::FileOpen o;
    o.event_id = Id(in.Byte());
    o.file_id = Id(in.Byte());
    const uint8_t f = in.Byte();
    o.form = (f & 8) ? ATR_FILE_TS : ATR_FILE_OBJECT;
    o.suffix = (f & 16) ? ATR_SUFFIX_BIN : ATR_SUFFIX_TXT;
    o.device_id = f >> 5;
    if (o.form == ATR_FILE_OBJECT) o.name = kNames[f % 5];
    return o;
  }

  // What a descriptor holder may do to its one file: bit 0 clears O_APPEND, bits 1-6 pick a
  // length up to 2^40 (a sparse file) for ftruncate and a pwrite there.
  static void Tamper(int fd, uint8_t b) {
    if (!(b & 1)) return;
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_APPEND);
    const off_t at = static_cast<off_t>(1) << ((b >> 1) % 41);
    (void)::ftruncate(fd, at);
    (void)::pwrite(fd, "z", 1, at);
  }

  template <class Message>
  void Frame(std::vector<uint8_t>& out, uint16_t opcode, const Message& m) {
    std::vector<uint8_t> payload;
    proto::Encode(m, payload);
    proto::AppendFrame(out, opcode, 0, ++request_id_, payload);
  }

  Peer& peer_;
  const bool& closed_;
  uint32_t request_id_ = 0;
};

}  // namespace atraced::fuzz
