#include "device_commands.h"

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <sstream>
#include <thread>
#include <vector>

#include "device_log.h"
#include "device_producers.h"
#include "hdc_channel.h"
#include "trace_wire.h"

namespace atraced::hal_double::device {
namespace {

bool Number(const std::string& text, long max, long* out) {
  if (text.empty() || text[0] == '-') return false;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value > max) return false;
  *out = value;
  return true;
}

// An optional fill argument: absent → 0 (the pattern), else exactly one character.
bool FillChar(const std::vector<std::string>& args, size_t index, char* out) {
  *out = 0;
  if (args.size() <= index) return true;
  if (args[index].size() != 1) return false;
  *out = args[index][0];
  return true;
}

}  // namespace

std::string Commands::Execute(const std::string& line, bool* quit) {
  std::istringstream in(line);
  std::vector<std::string> args;
  for (std::string word; in >> word;) args.push_back(word);
  if (args.empty()) return "err empty command";
  const std::string& cmd = args[0];
  if (cmd == "ts") return Ts(args);
  if (cmd == "utrace") return Utrace(args);
  if (cmd == "hostile") return Hostile(args);
  if (cmd == "endless-chain") return EndlessChain(args);
  if (cmd == "sessions") return "ok " + store_.Describe();
  if (cmd == "drop-long-links") {
    const size_t n = store_.DropAll();
    Say("dropped %zu long links (as a device daemon restart does)", n);
    return "ok dropped " + std::to_string(n);
  }
  if (cmd == "wait-session") {
    long pid = 0, ms = 10000;
    if (args.size() < 2 || !Number(args[1], INT_MAX, &pid) || (args.size() > 2 && !Number(args[2], INT_MAX, &ms))) {
      return "err usage: wait-session HOSTPID [MS]";
    }
    return store_.WaitForNode(static_cast<int>(pid), options_.local_id, std::chrono::milliseconds(ms))
               ? "ok " + store_.Describe()
               : "err timeout: no long link of pid " + args[1];
  }
  if (cmd == "flush") {
    return store_.WaitIdle(std::chrono::seconds(30)) ? "ok flushed" : "err timeout: queues still not sent";
  }
  if (cmd == "quit") {
    *quit = true;
    return "ok bye";
  }
  return "err unknown command " + cmd;
}

std::string Commands::Queue(int pid, Outgoing message) {
  const std::string what = message.what;
  const size_t packets = message.hdc.size();
  switch (store_.Enqueue(pid, options_.local_id, std::move(message))) {
    case SessionStore::Queued::kOk:
      Say("queued %s for pid %d (%zu HDC messages)", what.c_str(), pid, packets);
      return "ok queued " + what + " packets=" + std::to_string(packets);
    case SessionStore::Queued::kNoSession:
      Say("%s for pid %d: no session node is valid, dropped", what.c_str(), pid);
      return "err no session node is valid";
    case SessionStore::Queued::kFull:
      Say("%s for pid %d: queue is full, dropped", what.c_str(), pid);
      return "err queue is full";
  }
  return "err ?";
}

// ts HOSTPID start|mid|end NBYTES [FILLCHAR]
std::string Commands::Ts(const std::vector<std::string>& args) {
  long pid = 0, bytes = 0;
  char fill = 0;
  uint8_t seq = 0;
  if (args.size() < 4 || !Number(args[1], INT_MAX, &pid) || !Number(args[3], kMaxTsData, &bytes) ||
      !FillChar(args, 4, &fill)) {
    return "err usage: ts HOSTPID start|mid|end NBYTES [FILLCHAR] (NBYTES <= " + std::to_string(kMaxTsData) + ")";
  }
  if (args[2] == "start") {
    seq = wire::kSeqStart;
  } else if (args[2] == "mid") {
    seq = wire::kSeqMiddle;
  } else if (args[2] == "end") {
    seq = wire::kSeqEnd;
  } else {
    return "err chunk kind must be start, mid or end";
  }
  wire::Event e;
  e.seq_flag = seq;
  e.dev_id = static_cast<uint32_t>(options_.local_id);
  e.pid = static_cast<int32_t>(pid);
  e.name = "ts_" + std::to_string(options_.phy_id);
  e.time = store_.TsEventTime(e.pid, options_.local_id, seq);
  if (e.time.empty()) {
    Say("ts chunk for pid %ld: no session node is valid, dropped", pid);
    return "err no session node is valid";
  }
  e.save_type = 0;
  e.data = Fill(static_cast<size_t>(bytes), fill, false);
  e.buf_len = static_cast<uint32_t>(e.data.size());
  std::string reply = Queue(e.pid, EventMessage(e, e.name + " " + args[2] + " " + args[3]));
  if (reply.rfind("ok", 0) == 0) reply += " time=" + e.time;
  return reply;
}

// utrace HOSTPID NAME txt|bin NBYTES TIME20 [FILLCHAR]
std::string Commands::Utrace(const std::vector<std::string>& args) {
  long pid = 0, bytes = 0;
  char fill = 0;
  if (args.size() < 6 || !Number(args[1], INT_MAX, &pid) || !Number(args[4], kMaxUtraceData, &bytes) || bytes == 0 ||
      !FillChar(args, 6, &fill)) {
    return "err usage: utrace HOSTPID NAME txt|bin NBYTES TIME20 [FILLCHAR] (0 < NBYTES <= " +
           std::to_string(kMaxUtraceData) + ")";
  }
  if (args[2].size() >= wire::kEventNameSize) return "err NAME must be shorter than 32 bytes";
  if (args[3] != "txt" && args[3] != "bin") return "err save type must be txt or bin";
  if (args[5].size() >= wire::kEventTimeSize) return "err TIME must be shorter than 29 bytes";
  const bool binary = args[3] == "bin";
  wire::Event e;
  e.seq_flag = wire::kSeqSingle;
  e.dev_id = static_cast<uint32_t>(options_.local_id);
  e.pid = static_cast<int32_t>(pid);
  e.name = args[2];
  e.time = args[5];  // the message's own time, as the device process stamped it
  e.save_type = binary ? 1 : 0;
  e.data = Fill(static_cast<size_t>(bytes), fill, binary);
  e.buf_len = static_cast<uint32_t>(e.data.size());
  return Queue(e.pid, EventMessage(e, e.name + "." + args[3] + " " + args[4]));
}

// hostile HOSTPID KIND
std::string Commands::Hostile(const std::vector<std::string>& args) {
  long pid = 0;
  if (args.size() < 3 || !Number(args[1], INT_MAX, &pid)) return "err usage: hostile HOSTPID KIND (" + HostileKinds() + ")";
  Outgoing message;
  std::string why;
  if (!HostileMessage(args[2], static_cast<int>(pid), options_.local_id, &message, &why)) return "err " + why;
  return Queue(static_cast<int>(pid), std::move(message));
}

// endless-chain HOSTPID [MS]: a packet chain that never ends. The long link of HOSTPID is
// taken off the lists and gets a 1-byte packet without isLast every MS ms (500 by default)
// until the host closes it; the device ignores the host's [end] and never closes it itself.
std::string Commands::EndlessChain(const std::vector<std::string>& args) {
  long pid = 0, ms = 500;
  if (args.size() < 2 || !Number(args[1], INT_MAX, &pid) || (args.size() > 2 && (!Number(args[2], 60000, &ms) || ms == 0))) {
    return "err usage: endless-chain HOSTPID [MS] (0 < MS <= 60000)";
  }
  HDC_SESSION session = store_.Take(static_cast<int>(pid), options_.local_id);
  if (session == nullptr) return "err no session node is valid";
  std::thread([session, pid, ms] {
    const std::string packet = wire::RawPacket(1, wire::kPacketType, /*is_last=*/0, "x");
    long sent = 0;
    for (;;) {
      const drvError_t rc = channel::SendOne(session, packet, HDC_FLAG_WAIT_TIMEOUT, 5000);
      if (rc != DRV_ERROR_NONE) {
        Say("endless chain to pid %ld: send failed (%d) after %ld packets: closed", pid, rc, sent);
        break;
      }
      ++sent;
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
    drvHdcSessionClose(session);
  }).detach();
  Say("endless chain to pid %ld: a 1-byte packet without isLast every %ld ms", pid, ms);
  return "ok endless chain to pid " + args[1] + " every " + std::to_string(ms) + " ms";
}

}  // namespace atraced::hal_double::device
