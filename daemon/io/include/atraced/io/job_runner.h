// The seam between the event loop, which decides, and whoever does the file work it decided
// (docs/IO_WORKERS.md). A job's `work` runs on some worker thread and touches only what the
// job owns (descriptors the loop opened, ring mappings it holds a reference to, bytes it
// copied); its `done` runs back on the event loop, which owns every count, the store and
// the clients, and finishes the job there (the reply, the byte count, the end of the event).
#pragma once

#include <cstdint>
#include <functional>

namespace atraced {

class JobRunner {
 public:
  virtual ~JobRunner() = default;
  // Queues `work` in `uid`'s queue; `done` is called on the event loop after it ran, in no
  // promised order against other uids' jobs. Never calls either before returning.
  virtual void Submit(uint32_t uid, std::function<void()> work, std::function<void()> done) = 0;
};

}  // namespace atraced
