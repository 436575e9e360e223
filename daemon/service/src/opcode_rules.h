// Which opcode needs which feature, in one table: what HELLO grants (kSupportedFeatures and
// the bits granted only with another), what a request needs granted, and which one may carry
// a descriptor. The dispatcher (trace_service.cc) checks every request against it before its
// handler runs; a new opcode or feature is a row here, not a check in a handler.
#pragma once

#include <cstdint>

#include "atraced/proto/wire.h"

namespace atraced {

struct FeatureRule {
  uint64_t feature;
  const char* name;   // in refusals: "<OPCODE>: <name> was not negotiated in HELLO"
  uint64_t granted_with;  // granted only together with this one (0: alone)
};

// Every feature this daemon grants, in bit order.
inline constexpr FeatureRule kFeatureRules[] = {
    {ATR_FEATURE_FD_PASSING, "ATR_FEATURE_FD_PASSING", 0},
    {ATR_FEATURE_MEMFD, "ATR_FEATURE_MEMFD", 0},
    {ATR_FEATURE_CRASH, "ATR_FEATURE_CRASH", ATR_FEATURE_MEMFD},
    {ATR_FEATURE_RING_COUNTER, "ATR_FEATURE_RING_COUNTER", ATR_FEATURE_MEMFD},
    {ATR_FEATURE_STACK_DUMP, "ATR_FEATURE_STACK_DUMP", ATR_FEATURE_CRASH},
    {ATR_FEATURE_DEVICE_STATS, "ATR_FEATURE_DEVICE_STATS", 0},
    {ATR_FEATURE_CRASH_PATH, "ATR_FEATURE_CRASH_PATH", ATR_FEATURE_CRASH},
    {ATR_FEATURE_PROCESS_DUMP, "ATR_FEATURE_PROCESS_DUMP", 0},
    {ATR_FEATURE_LABELS, "ATR_FEATURE_LABELS", 0},
    {ATR_FEATURE_HANG_TIMEOUT, "ATR_FEATURE_HANG_TIMEOUT", ATR_FEATURE_LABELS},
    {ATR_FEATURE_LEDGER, "ATR_FEATURE_LEDGER", ATR_FEATURE_MEMFD},
    {ATR_FEATURE_LIST_LIVE, "ATR_FEATURE_LIST_LIVE", 0},
    {ATR_FEATURE_DUMPS_EXPORTED, "ATR_FEATURE_DUMPS_EXPORTED", 0},
    {ATR_FEATURE_AGED_DUMPS, "ATR_FEATURE_AGED_DUMPS", 0},
};

inline constexpr uint64_t kSupportedFeatures = [] {
  uint64_t all = 0;
  for (const FeatureRule& f : kFeatureRules) all |= f.feature;
  return all;
}();

// What HELLO grants of `asked`: the supported bits, without those whose requirement is not
// granted (in table order, so a chain, STACK_DUMP on CRASH on MEMFD, falls as a whole).
constexpr uint64_t GrantedFeatures(uint64_t asked) {
  uint64_t granted = asked & kSupportedFeatures;
  for (const FeatureRule& f : kFeatureRules) {
    if (f.granted_with != 0 && !(granted & f.granted_with)) granted &= ~f.feature;
  }
  return granted;
}

struct OpcodeRule {
  uint16_t opcode;
  uint64_t needs;        // the feature the connection must have been granted (0: none)
  bool descriptor;       // the request may carry a descriptor (SCM_RIGHTS on its first byte)
};

inline constexpr OpcodeRule kOpcodeRules[] = {
    {ATR_OP_HELLO, 0, false},
    {ATR_OP_EVENT_BEGIN, 0, false},
    {ATR_OP_FILE_OPEN, 0, false},
    {ATR_OP_FILE_APPEND, 0, false},
    {ATR_OP_FILE_GET_FD, 0, false},
    {ATR_OP_FILE_CLOSE, 0, false},
    {ATR_OP_EVENT_END, 0, false},
    {ATR_OP_STATUS, 0, false},
    {ATR_OP_LIST, 0, false},
    {ATR_OP_VACUUM, 0, false},
    {ATR_OP_RING_REGISTER, ATR_FEATURE_MEMFD, true},
    {ATR_OP_RING_RELEASE, ATR_FEATURE_MEMFD, false},
    {ATR_OP_RING_REPORT, ATR_FEATURE_MEMFD, false},
    {ATR_OP_RING_SAVE_ALL, ATR_FEATURE_MEMFD, false},
    {ATR_OP_GOODBYE, ATR_FEATURE_MEMFD, false},
    {ATR_OP_CRASH, ATR_FEATURE_CRASH, false},
    {ATR_OP_DUMP, ATR_FEATURE_CRASH, false},
    {ATR_OP_STACK_DUMP, ATR_FEATURE_STACK_DUMP, false},
    {ATR_OP_VACUUM_BY, 0, false},
    {ATR_OP_DEVICE_STATS, ATR_FEATURE_DEVICE_STATS, false},
    {ATR_OP_PROCESS_DUMP, ATR_FEATURE_PROCESS_DUMP, false},
    {ATR_OP_LABELS, ATR_FEATURE_LABELS, false},
    {ATR_OP_LIST_LIVE, ATR_FEATURE_LIST_LIVE, false},
    {ATR_OP_DUMPS_EXPORTED, ATR_FEATURE_DUMPS_EXPORTED, false},
    {ATR_OP_AGED_DUMPS, ATR_FEATURE_AGED_DUMPS, false},
};

// The rule of `opcode`; nullptr for an opcode of no operation (the dispatcher's ENOSYS).
constexpr const OpcodeRule* RuleOf(uint16_t opcode) {
  for (const OpcodeRule& r : kOpcodeRules) {
    if (r.opcode == opcode) return &r;
  }
  return nullptr;
}

constexpr const char* FeatureName(uint64_t feature) {
  for (const FeatureRule& f : kFeatureRules) {
    if (f.feature == feature) return f.name;
  }
  return "an unknown feature";
}

}  // namespace atraced
