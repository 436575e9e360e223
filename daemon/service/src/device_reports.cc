#include "device_reports.h"

#include <algorithm>
#include <string>

#include "atraced/proto/codec.h"

namespace atraced {

void DeviceReports::CountEvent(const Client& c, uint32_t device_id) {
  ++counters_.devices[device_id].events;
  if (ProcessRecord* rec = records_.Find(c.peer.pid, c.start_ticks)) ++rec->devices[device_id].events;
}

Status DeviceReports::OnDeviceStats(const Client& c, std::span<const uint8_t> payload) {
  proto::DeviceStats m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  ProcessRecord::DeviceReport* sent = nullptr;
  if (ProcessRecord* rec = records_.Find(c.peer.pid, c.start_ticks)) {
    auto it = rec->devices.find(m.device_id);
    if (it != rec->devices.end()) sent = &it->second;
  }
  if (sent == nullptr) {
    // Not a warning: a receiver whose device has sent nothing good yet asks this too (and
    // keeps its counts for the next report).
    return Status::Error(EPERM, "device_id: this process has written no device event for device " + std::to_string(m.device_id) +
                       "; a process reports only for the devices it receives from");
  }
  const uint64_t saved = std::min(m.saved, sent->events - sent->saved);  // never past what the daemon took
  sent->saved += saved;
  DeviceCounts& uid_sum = by_uid_[{c.peer.uid, m.device_id}];
  DeviceCounts& total = counters_.devices[m.device_id];
  // The uid's share of each figure stops at kMaxPerUid; the total saturates only past 65,535
  // uids at it.
  auto add = [](uint64_t& uid_figure, uint64_t& total_figure, uint64_t v) {
    v = std::min(v, kMaxPerUid - std::min(uid_figure, kMaxPerUid));
    uid_figure += v;
    total_figure = v > UINT64_MAX - total_figure ? UINT64_MAX : total_figure + v;
  };
  add(uid_sum.received, total.received, m.received);
  add(uid_sum.saved, total.saved, saved);
  add(uid_sum.dropped_invalid, total.dropped_invalid, m.dropped_invalid);
  add(uid_sum.dropped_daemon, total.dropped_daemon, m.dropped_daemon);
  add(uid_sum.reconnects, total.reconnects, m.reconnects);
  return Status::Ok();
}

}  // namespace atraced
