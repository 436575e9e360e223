// A process table the test fills in by hand.
#pragma once

#include <map>

#include "atraced/core/process_table.h"

namespace atraced::testing {

class FakeProcessTable final : public ProcessTable {
 public:
  std::optional<ProcessFacts> Lookup(int32_t pid) override {
    auto it = processes.find(pid);
    if (it == processes.end()) return std::nullopt;
    return it->second;
  }
  std::map<int32_t, ProcessFacts> processes;
};

}  // namespace atraced::testing
