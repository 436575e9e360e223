#include "client_table.h"

namespace atraced {

Client* ClientTable::RingHolderOf(Client& c) {
  if (!c.rings.empty() && !c.goodbye) return &c;
  for (auto& [id, other] : clients_) {
    if (other.peer.pid == c.peer.pid && other.start_ticks == c.start_ticks && !other.rings.empty() && !other.goodbye) {
      return &other;
    }
  }
  return nullptr;
}

ClientId ClientTable::IdOf(const Client* c) const {
  for (const auto& [id, client] : clients_) {
    if (&client == c) return id;
  }
  return 0;
}

}  // namespace atraced
