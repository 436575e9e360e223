// RING_REGISTER, RING_RELEASE, RING_REPORT, RING_SAVE_ALL, GOODBYE and DUMP (protocol 1.1):
// the rings a process shares in sealed memfds, their bounds, and the saves a live process
// asks for (schedule dirs) or makes at a clean exit (exit dirs).
#pragma once

#include <cstdint>
#include <map>
#include <span>

#include "admission.h"
#include "atraced/base/unique_fd.h"
#include "atraced/common/log.h"
#include "atraced/service/service_types.h"
#include "client.h"
#include "client_table.h"
#include "refusal.h"
#include "ring_saver.h"

namespace atraced {

class Rings {
 public:
  Rings(ClientTable& clients, RingSaver& saver, Admission& admission, Logger& log, ServiceCounters& counters,
        const ServiceOptions& options)
      : clients_(clients), saver_(saver), admission_(admission), log_(log), counters_(counters), options_(options) {}

  Reply OnRingRegister(Client& c, std::span<const uint8_t> payload, UniqueFd memfd);
  Reply OnRingRelease(Client& c, std::span<const uint8_t> payload);
  Reply OnRingReport(Client& c, std::span<const uint8_t> payload);
  Reply OnRingSaveAll(Client& c, std::span<const uint8_t> payload);
  Reply OnGoodbye(Client& c, std::span<const uint8_t> payload);
  // The on-demand dump signal: RING_SAVE_ALL for the process's ring-holding connection.
  Reply OnDump(Client& c, std::span<const uint8_t> payload);

  // Unmaps every ring the client holds (it is gone for good, or said GOODBYE).
  void ReleaseAll(Client& c);
  size_t total() const { return total_; }

 private:
  void DropRing(Client& c, std::map<uint32_t, HeldRing>::iterator it);

  ClientTable& clients_;  // DUMP comes on the crash connection; the rings are another's
  RingSaver& saver_;
  Admission& admission_;
  Logger& log_;
  ServiceCounters& counters_;
  const ServiceOptions& options_;
  size_t total_ = 0;  // rings held by every client, against max_rings_total
};

}  // namespace atraced
