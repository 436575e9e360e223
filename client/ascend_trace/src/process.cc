// Whole-process calls: AtraceSave, the global attribute, and the
// process life cycle (fork, exit).
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "atrace_api.h"
#include "atrace_pub.h"
#include "crash_handler.h"
#include "daemon_link.h"
#include "device/report_api.h"
#include "dump_signal.h"
#include "state.h"
#include "tracer_type.h"

using namespace ascend_trace;

extern "C" {

TRACE_EXPORT TraStatus AtraceSave(TracerType tracerType, bool syncFlag) {
  const unsigned type = RawTracerType(tracerType);
  if (type >= TRACER_TYPE_MAX) return TRACE_INVALID_PARAM;
  if (type != TRACER_TYPE_SCHEDULE) return TRACE_FAILURE;  // CANN: no manager for it
  State& s = GetState();
  std::lock_guard lock(s.mu);
  bool any = false;
  for (const ObjectSlot& o : s.objects) any = any || (o.live && o.pid == ::getpid());
  if (!any) return TRACE_SUCCESS;  // nothing to save, as in CANN
  // CANN ignores syncFlag; here it decides whether the call waits for the files.
  return s.link->SaveAll(s, syncFlag) == 0 ? TRACE_SUCCESS : TRACE_FAILURE;
}

TRACE_EXPORT TraStatus AtraceSetGlobalAttr(const TraceGlobalAttr* attr) {
  if (attr == nullptr) return TRACE_FAILURE;
  State& s = GetState();
  std::lock_guard lock(s.mu);
  s.global_attr = *attr;  // used by CANN's device-side library only
  return TRACE_SUCCESS;
}

}  // extern "C"

namespace {

// fork(): hold the mutex across it so the child never inherits it locked mid-call.
void BeforeFork() {
  device::LockForFork();
  GetState().mu.lock();
}
void AfterForkParent() {
  GetState().mu.unlock();
  device::UnlockAfterForkParent();
}
void AfterForkChild() {
  device::ForgetAfterForkChild();
  State& s = GetState();
  // The child must not write into its parent's rings: give it a private copy of each (CANN's
  // child has its own copy of the heap). It neither saves nor registers them (CANN saves only
  // objects whose pid is the caller's), and it gets its own connection when it needs one.
  for (ObjectSlot& o : s.objects) {
    if (o.live && o.memfd.valid()) {
      ::mmap(o.base, o.mapped_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, o.memfd.get(), 0);
      o.memfd.reset();
    }
  }
  s.released.clear();
  s.ledger = LedgerSlot{};  // the parent's; libatrace_hccl attaches the child's own
  s.link->ForgetAfterFork();
  s.mu.unlock();
}

// Normal exit (exit(), return from main; not dlclose, which never unloads the library: it is
// linked -z nodelete): the daemon writes the exitSave objects, destroyed ones included, into
// an `exit` directory before GOODBYE's reply.
__attribute__((destructor)) void AtExit() {
  // The device receivers first, and outside the state lock: what they took in is written
  // through their own connections before the process says goodbye.
  device::ExitAllReceivers();
  State& s = GetState();
  std::lock_guard lock(s.mu);
  s.link->Goodbye(s);
}

__attribute__((constructor)) void AtLoad() {
  ::pthread_atfork(BeforeFork, AfterForkParent, AfterForkChild);
  LoadCrashSettings();  // the environment, once; the fatal handlers come with the first connection
  InstallDumpHandler();  // now: signal 35 must not kill a process that uses the library, daemon or not
}

}  // namespace
