#include "atraced/store/aging.h"

namespace atraced {

const char* AgeClassName(AgeClass c) {
  switch (c) {
    case AgeClass::kHost: return "host";
    case AgeClass::kDevice: return "device";
    case AgeClass::kExit: return "exit";
  }
  return "?";
}

std::optional<AgingPolicy> ParseAgingPolicy(std::string_view text) {
  if (text == "fifo") return AgingPolicy::kFifo;
  if (text == "fair") return AgingPolicy::kFair;
  return std::nullopt;
}

const char* AgingPolicyName(AgingPolicy policy) { return policy == AgingPolicy::kFair ? "fair" : "fifo"; }

const char* AgingReasonName(AgingReason reason) {
  switch (reason) {
    case AgingReason::kCount: return "count";
    case AgingReason::kMaxUse: return "bytes";
    case AgingReason::kKeepFree: return "keep-free";
    case AgingReason::kAge: return "age";
    case AgingReason::kVacuum: return "vacuum";
  }
  return "?";
}

}  // namespace atraced
