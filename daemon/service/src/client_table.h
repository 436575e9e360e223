// The connections the service knows, by id. Owned by the dispatcher; handlers that must find
// another connection of the same process (the rings' holder of a CRASH or DUMP sent on the
// crash channel) get it, and nothing else of the service.
#pragma once

#include <unordered_map>

#include "client.h"

namespace atraced {

class ClientTable {
 public:
  using Map = std::unordered_map<ClientId, Client>;

  ClientId Add(Client client) {
    const ClientId id = next_++;
    clients_.emplace(id, std::move(client));
    return id;
  }
  Client* Find(ClientId id) {
    auto it = clients_.find(id);
    return it == clients_.end() ? nullptr : &it->second;
  }
  const Client* Find(ClientId id) const {
    auto it = clients_.find(id);
    return it == clients_.end() ? nullptr : &it->second;
  }
  // Takes the client out of the table (its id is never reused).
  Client Take(ClientId id) {
    auto it = clients_.find(id);
    Client c = std::move(it->second);
    clients_.erase(it);
    return c;
  }
  // The connection of c's process (pid and start time) that holds rings: c or another.
  Client* RingHolderOf(Client& c);
  // The id of a client of this table (0 if it is not one).
  ClientId IdOf(const Client* c) const;

  size_t size() const { return clients_.size(); }
  Map::iterator begin() { return clients_.begin(); }
  Map::iterator end() { return clients_.end(); }

 private:
  ClientId next_ = 1;
  Map clients_;
};

}  // namespace atraced
