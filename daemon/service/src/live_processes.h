// LIST_LIVE (`atracectl list --live`): the live processes whose rings the daemon holds, with
// their labels and the hang watch's view of them (when their rings last moved, stalled busy
// or blocked, or not watched). Step 1 of docs/FLEET.md on a hung job before anything was
// saved.
//
// Who sees what is LIST's rule (Client::reads_all): root, the daemon's uid and the reader
// group see every process; anyone else only its own uid's, and nothing of the others, not
// even how many there are.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "atraced/base/status.h"
#include "client.h"
#include "client_table.h"
#include "hang_watch.h"

namespace atraced {

Status OnListLive(const Client& asker, std::span<const uint8_t> payload, ClientTable& clients, HangWatch& hang,
                  std::vector<uint8_t>& body);

}  // namespace atraced
