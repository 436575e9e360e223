#include "process_labels.h"

namespace atraced {

Status ProcessLabels::OnLabels(Client& c, std::span<const uint8_t> payload) {
  if (!(c.features & ATR_FEATURE_LABELS)) return Status::Error(ENOTSUP, "LABELS: ATR_FEATURE_LABELS was not negotiated in HELLO");
  proto::Labels m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  if (ProcessRecord* rec = records_.Find(c.peer.pid, c.start_ticks)) rec->labels = m;
  for (auto& [id, other] : clients_) {
    if (other.peer.pid == c.peer.pid && other.start_ticks == c.start_ticks) other.labels = m;
  }
  c.labels = m;
  // Checked to be short and printable, so the line needs no escaping beyond the logger's.
  log_.Info("pid ", c.peer.pid, " labels: job '", m.job, "' rank '", m.rank, "' world size '", m.world_size, "'");
  return Status::Ok();
}

}  // namespace atraced
