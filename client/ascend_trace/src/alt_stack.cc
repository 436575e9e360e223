#include "alt_stack.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>

#include "crash_handler.h"

namespace ascend_trace {
namespace {

// CANN's handler stack is of this order; ours only sends a frame and waits (no unwinding
// in process), which needs far less.
constexpr size_t kAltStackBytes = 64 * 1024;

class ThreadAltStack {
 public:
  ~ThreadAltStack() {
    if (mem_ == nullptr) return;
    // Only ours is switched off: an application may have installed another meanwhile.
    stack_t current{};
    if (::sigaltstack(nullptr, &current) == 0 && current.ss_sp == usable()) {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      ::sigaltstack(&off, nullptr);
    }
    ::munmap(mem_, mapped_);
    mem_ = nullptr;  // tried_ stays set: a call after this (an exit handler) adds none
  }

  void Ensure() {
    if (tried_) return;
    tried_ = true;
    stack_t current{};
    if (::sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;  // it has one
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    mapped_ = kAltStackBytes + page;
    void* mem = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (mem == MAP_FAILED) return;
    mem_ = static_cast<char*>(mem);
    // A guard page below: a handler that overflows the alternate stack faults instead of
    // writing over whatever lies under it.
    ::mprotect(mem_, page, PROT_NONE);
    guard_ = page;
    stack_t ss{};
    ss.ss_sp = usable();
    ss.ss_size = kAltStackBytes;
    if (::sigaltstack(&ss, nullptr) != 0) {
      ::munmap(mem_, mapped_);
      mem_ = nullptr;
    }
  }

 private:
  void* usable() const { return mem_ + guard_; }

  bool tried_ = false;
  char* mem_ = nullptr;
  size_t mapped_ = 0;
  size_t guard_ = 0;
};

thread_local ThreadAltStack t_alt_stack;

}  // namespace

namespace alt_stack_internal {

thread_local constinit bool t_checked __attribute__((tls_model("initial-exec"))) = false;

void EnsureSlow() {
  // Set first: once the thread's ThreadAltStack is destroyed (thread exit), a later call
  // from a destructor must not construct it again.
  t_checked = true;
  if (CrashHandlersEnabled()) t_alt_stack.Ensure();
}

}  // namespace alt_stack_internal

}  // namespace ascend_trace
