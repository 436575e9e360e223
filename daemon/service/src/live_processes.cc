#include "live_processes.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "atraced/proto/codec.h"

namespace atraced {
namespace {

uint64_t UnixUs(std::chrono::system_clock::time_point t) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  return us > 0 ? static_cast<uint64_t>(us) : 0;
}

uint64_t Ms(std::chrono::milliseconds d) { return d.count() > 0 ? static_cast<uint64_t>(d.count()) : 0; }

// The entry of the process whose rings `holder` holds, as the hang watch last saw it.
proto::LiveEntry EntryOf(const Client& holder, HangWatch& hang) {
  proto::LiveEntry e;
  e.pid = holder.peer.pid;
  e.uid = holder.peer.uid;
  e.comm = holder.program;
  e.labels = holder.labels;
  const HangWatch::Live l = hang.LiveOf(holder);
  if (l.watched) {
    e.flags |= ATR_LIVE_WATCHED;
    e.timeout_ms = Ms(l.timeout);
  }
  if (l.stalled) e.flags |= ATR_LIVE_STALLED | (l.busy ? ATR_LIVE_BUSY : 0u);
  if (l.captured) e.flags |= ATR_LIVE_CAPTURED;
  if (!l.seen || l.never_wrote) {
    e.flags |= l.seen ? ATR_LIVE_NEVER_WROTE : 0u;  // not sampled yet: nothing known, no claim
  } else {
    e.last_moved_unix_us = UnixUs(l.last_moved);
    e.still_ms = Ms(l.still_for);
  }
  return e;
}

}  // namespace

Status OnListLive(const Client& asker, std::span<const uint8_t> payload, ClientTable& clients, HangWatch& hang,
                  std::vector<uint8_t>& body) {
  proto::ListLive m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  // One entry per process (pid and start time), whichever of its connections holds rings;
  // a labelled connection without rings (not the asker's own) when none does.
  std::map<std::pair<int32_t, uint64_t>, const Client*> processes;
  for (auto& [id, c] : clients) {
    if (!asker.reads_all && c.peer.uid != asker.peer.uid) continue;  // LIST's rule: never another user's
    if (!m.job.empty() && c.labels.job != m.job) continue;
    const bool labelled_peer = !c.labels.empty() && c.peer.pid != asker.peer.pid;
    if (c.rings.empty() && !labelled_peer) continue;
    const Client*& chosen = processes[{c.peer.pid, c.start_ticks}];
    if (chosen == nullptr || (chosen->rings.empty() && !c.rings.empty())) chosen = &c;
  }
  proto::ListLiveReply r;
  for (const auto& [key, holder] : processes) {
    if (r.entries.size() >= ATR_MAX_LIVE_ENTRIES) {
      ++r.omitted;
      continue;
    }
    proto::LiveEntry e = EntryOf(*holder, hang);
    // Rings held for the process, over all its connections.
    for (auto& [id, c] : clients) {
      if (c.peer.pid == holder->peer.pid && c.start_ticks == holder->start_ticks) e.rings += static_cast<uint32_t>(c.rings.size());
    }
    r.entries.push_back(std::move(e));
  }
  proto::Encode(r, body);
  return Status::Ok();
}

}  // namespace atraced
