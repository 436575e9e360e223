// libFuzzer target: the order log is read back from the trace root, which is untrusted.
// Any bytes must parse without a crash, and what comes out must hold the invariants the
// store relies on: live sequences strictly increase, every path is a well-formed CANN
// process/event pair, and writing the live entries back replays to the same entries (an
// incomplete one as a 'p', which the rewrite at start-up keeps). A 'd' for each incomplete
// entry then completes exactly those, and a second 'd' is refused, changing nothing. An 's'
// (made for a save) survives the round trip with its entry (made_by_saves seeds it).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "atraced/store/names.h"
#include "atraced/store/order_log.h"

using namespace atraced;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  OrderLogReplay r = ReplayOrderLog(text);
  uint64_t last = 0;
  std::string again;
  for (const OrderEntry& e : r.live) {
    if (e.seq <= last) std::abort();
    last = e.seq;
    if (!ParseProcessDirName(e.process_dir) || !ParseEventDirName(e.event_dir)) std::abort();
    AppendCreated(e, again);
  }
  OrderLogReplay round = ReplayOrderLog(again);
  if (round.rejected != 0 || round.live.size() != r.live.size()) std::abort();
  for (size_t i = 0; i < r.live.size(); ++i) {
    if (!(round.live[i] == r.live[i])) std::abort();
  }
  size_t incomplete = 0;
  for (const OrderEntry& e : r.live) {
    if (!e.incomplete) continue;
    ++incomplete;
    AppendSaved(e.seq, again);
  }
  for (const OrderEntry& e : r.live) {
    if (e.incomplete) AppendSaved(e.seq, again);  // a second completion: refused
  }
  OrderLogReplay done = ReplayOrderLog(again);
  if (done.rejected != incomplete || done.live.size() != r.live.size()) std::abort();
  for (const OrderEntry& e : done.live) {
    if (e.incomplete) std::abort();
  }
  return 0;
}
