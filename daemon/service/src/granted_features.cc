#include "granted_features.h"

#include "atraced/proto/wire.h"

namespace atraced {
namespace {

constexpr uint64_t kSupportedFeatures = ATR_FEATURE_FD_PASSING | ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH |
    ATR_FEATURE_RING_COUNTER | ATR_FEATURE_STACK_DUMP | ATR_FEATURE_DEVICE_STATS | ATR_FEATURE_CRASH_PATH |
    ATR_FEATURE_PROCESS_DUMP | ATR_FEATURE_LABELS | ATR_FEATURE_HANG_TIMEOUT;

}  // namespace

uint64_t GrantedFeatures(uint64_t asked, bool counter_trusted) {
  uint64_t f = asked & kSupportedFeatures;
  if (!(f & ATR_FEATURE_MEMFD)) f &= ~(ATR_FEATURE_CRASH | ATR_FEATURE_RING_COUNTER);  // ring features
  if (!(f & ATR_FEATURE_CRASH)) f &= ~(ATR_FEATURE_STACK_DUMP | ATR_FEATURE_CRASH_PATH);
  if (!(f & ATR_FEATURE_LABELS)) f &= ~ATR_FEATURE_HANG_TIMEOUT;
  // Counter-stamped rings only while the daemon's measurements trust the counter.
  if (!counter_trusted) f &= ~ATR_FEATURE_RING_COUNTER;
  return f;
}

}  // namespace atraced
