// Refusals come in floods from one uid (a client retrying in a loop): logged one line per
// interval per uid, with the count of those not logged since, so that one user cannot fill
// the journal (and trip its rate limit, losing other users' crash notices). The daemon has
// one, made by the daemon's start (daemon_main.cc) and given to the store, whose
// TraceStore::refusals() the service asks: every refusal line, whatever refused (a request, a
// connection, a descriptor, a ring, the rate limit's summaries, the store's ENOSPC), asks it,
// so a uid's flood on any mix of paths is one line. It sits in common, below both.
#pragma once

#include <chrono>
#include <cstdint>
#include <unordered_map>

namespace atraced {

class RefusalLog {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  static constexpr std::chrono::seconds kInterval{10};
  static constexpr size_t kMaxUids = 4096;  // quiet uids are forgotten past this

  // True when a refusal for `uid` should be logged at `now`; *suppressed is how many were
  // not logged since the last line for that uid.
  bool ShouldLog(uint32_t uid, TimePoint now, uint64_t* suppressed);
  bool ShouldLog(uint32_t uid, uint64_t* suppressed) { return ShouldLog(uid, std::chrono::steady_clock::now(), suppressed); }
  // Whether ShouldLog would say yes now, without counting a refusal (for summaries that keep
  // their own counts until their line may go).
  bool Due(uint32_t uid, TimePoint now) const;
  bool Due(uint32_t uid) const { return Due(uid, std::chrono::steady_clock::now()); }

 private:
  struct Entry {
    TimePoint last{};
    uint64_t suppressed = 0;
    bool logged = false;
  };
  std::unordered_map<uint32_t, Entry> by_uid_;
};

}  // namespace atraced
