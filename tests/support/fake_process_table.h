// A process table the test fills in by hand.
#pragma once

#include <map>

#include "atraced/processes/process_table.h"

namespace atraced::testing {

class FakeProcessTable final : public ProcessTable {
 public:
  // A process listed without credentials runs as the fixtures' default user, 1000:1000 (all
  // four ids), and is dumpable.
  std::optional<ProcessFacts> Lookup(int32_t pid) override {
    auto it = processes.find(pid);
    if (it == processes.end()) return std::nullopt;
    ProcessFacts facts = it->second;
    if (!facts.creds) facts.creds = ProcessCredentials{{1000, 1000, 1000, 1000}, {1000, 1000, 1000, 1000}, true};
    return facts;
  }
  // A pid listed in `ended` reports that end; others are gone when absent from `processes`.
  ProcessEnd CheckEnded(int32_t pid, uint64_t start_ticks, const UniqueFd& pidfd) override {
    auto it = ended.find(pid);
    return it != ended.end() ? it->second : ProcessTable::CheckEnded(pid, start_ticks, pidfd);
  }
  std::optional<std::string> CommandLine(int32_t pid) override {
    auto it = cmdlines.find(pid);
    if (it == cmdlines.end()) return std::nullopt;
    return it->second;
  }
  // OomKills: by pid at HELLO, then by file at death (absent: what the base class says).
  OomCount OomKills(int32_t pid) override {
    auto it = oom_at_hello.find(pid);
    return it != oom_at_hello.end() ? it->second : ProcessTable::OomKills(pid);
  }
  OomCount OomKillsIn(const std::string& file) override {
    auto it = oom_now.find(file);
    return it != oom_now.end() ? it->second : ProcessTable::OomKillsIn(file);
  }
  std::map<int32_t, ProcessFacts> processes;
  std::map<int32_t, OomCount> oom_at_hello;
  std::map<std::string, OomCount> oom_now;
  std::map<int32_t, ProcessEnd> ended;
  std::map<int32_t, std::string> cmdlines;
};

}  // namespace atraced::testing
