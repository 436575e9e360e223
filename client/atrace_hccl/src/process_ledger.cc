#include "process_ledger.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "ledger_attach.h"

// Weak: a process whose libascend_trace is CANN's own (no such function) keeps its ledger in
// memory only, and says so once.
extern "C" int AtraceLedgerAttach(int memfd, uint32_t records, uint64_t bytes) __attribute__((weak));

namespace atrace_hccl {

namespace {

constexpr uint32_t kRecords = ATR_LEDGER_MAX_RECORDS;

std::atomic<LedgerWriter*> g_ledger{nullptr};
std::atomic<bool> g_failed{false};
std::mutex g_make;  // only the first call of a process (and of a forked child) takes it
// Never destroyed: the polling thread and late callers (other libraries' destructors) may
// still write into it while the process exits.
LedgerWriter& g_storage = *new LedgerWriter;
CommTable g_comms;
CompletionTracker g_completion;

void Say(const std::string& line) {
  const char* quiet = ::getenv("ATRACE_QUIET");
  if (quiet != nullptr && std::strcmp(quiet, "1") == 0) return;
  const std::string text = "libatrace_hccl: " + line + "\n";
  (void)!::write(STDERR_FILENO, text.data(), text.size());
}

void BeforeFork() { g_make.lock(); }
void AfterForkParent() { g_make.unlock(); }
void AfterForkChild() {
  // The parent's ledger stays the parent's: the child's first call makes its own.
  g_ledger.store(nullptr, std::memory_order_relaxed);
  g_failed.store(false, std::memory_order_relaxed);
  g_storage.Close();
  g_comms.Clear();
  g_completion.AfterForkChild();
  g_make.unlock();
}

LedgerWriter* MakeLedger() {
  std::lock_guard lock(g_make);
  if (LedgerWriter* w = g_ledger.load(std::memory_order_acquire)) return w;
  if (g_failed.load(std::memory_order_relaxed)) return nullptr;
  static const bool registered = ::pthread_atfork(BeforeFork, AfterForkParent, AfterForkChild) == 0;
  (void)registered;
  if (!g_storage.Create(kRecords)) {
    Say(std::string("no collective ledger (memfd: ") + std::strerror(errno) + ")");
    g_failed.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  if (g_completion.Probe()) g_storage.MarkCompletionTracked();
  if (AtraceLedgerAttach == nullptr) {
    Say("the libascend_trace loaded is not atraced's: the collective ledger stays in this process");
  } else if (const int rc = AtraceLedgerAttach(g_storage.memfd(), g_storage.records(), g_storage.bytes()); rc == -ENOTSUP) {
    Say("atraced does not hold collective ledgers (ATR_FEATURE_LEDGER): the ledger stays in this process");
  }
  // Another rc: no daemon now; libascend_trace registers the ledger when one is reached
  // (and has said so on stderr already).
  g_ledger.store(&g_storage, std::memory_order_release);
  return &g_storage;
}

}  // namespace

LedgerWriter* Ledger() {
  if (LedgerWriter* w = g_ledger.load(std::memory_order_acquire)) return w;
  return MakeLedger();
}

CommTable& Comms() { return g_comms; }
CompletionTracker& Completion() { return g_completion; }

void ProbeCompletion() {
  if (g_completion.available()) return;
  LedgerWriter* w = Ledger();
  if (w != nullptr && g_completion.Probe()) w->MarkCompletionTracked();
}

}  // namespace atrace_hccl
