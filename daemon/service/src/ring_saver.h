// Writes a client's rings (and, for a crash or a death, the report first) into one new event
// directory. Which rings a save takes is decided here too: every live one for a schedule
// save, one per object name at a death.
#pragma once

#include <string>
#include <vector>

#include "admission.h"
#include "atraced/common/log.h"
#include "atraced/rings/held_ring.h"
#include "atraced/service/service_types.h"
#include "atraced/store/trace_store.h"
#include "client.h"
#include "refusal.h"

namespace atraced {

class RingSaver {
 public:
  RingSaver(TraceStore& store, Admission& admission, Logger& log, ServiceCounters& counters)
      : store_(store), admission_(admission), log_(log), counters_(counters) {}

  // Writes the chosen rings of `c` into one new event directory of `kind` (none is made
  // when no ring holds a record). `report`, if given, is written first and makes the
  // directory even without records. Every byte counts against the process's
  // max-bytes-per-client; a save that would pass it is refused whole (-EBUSY).
  Reply Save(const Client& c, EventKind kind, const std::vector<const HeldRing*>& rings,
             const HeldRing::File* report = nullptr);

  // The rings RING_SAVE_ALL and DUMP save: every live one (destroyed exitSave ones wait for exit).
  static std::vector<const HeldRing*> Unreleased(const Client& c);
  // The rings a death or a crash saves: one per object name, a live object over a destroyed
  // exitSave one of the same name, else the newest. `names` lists them for the report.
  static std::vector<const HeldRing*> AtDeath(const Client& c, std::string* names);

 private:
  TraceStore& store_;
  Admission& admission_;
  Logger& log_;
  ServiceCounters& counters_;
};

}  // namespace atraced
