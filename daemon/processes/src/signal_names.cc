#include "atraced/processes/signal_names.h"

#include <signal.h>
#include <string.h>

#include <array>

namespace atraced {
namespace {

// Linux's si_code values per signal (uapi asm-generic/siginfo.h), index = code - 1.
const char* FaultCodeName(int signo, int code) {
  static constexpr std::array<const char*, 5> kSegv{"SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR",
                                                    "SEGV_ACCADI"};
  static constexpr std::array<const char*, 5> kBus{"BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR",
                                                   "BUS_MCEERR_AO"};
  static constexpr std::array<const char*, 8> kIll{"ILL_ILLOPC", "ILL_ILLOPN", "ILL_ILLADR", "ILL_ILLTRP",
                                                   "ILL_PRVOPC", "ILL_PRVREG", "ILL_COPROC", "ILL_BADSTK"};
  static constexpr std::array<const char*, 8> kFpe{"FPE_INTDIV", "FPE_INTOVF", "FPE_FLTDIV", "FPE_FLTOVF",
                                                   "FPE_FLTUND", "FPE_FLTRES", "FPE_FLTINV", "FPE_FLTSUB"};
  static constexpr std::array<const char*, 4> kTrap{"TRAP_BRKPT", "TRAP_TRACE", "TRAP_BRANCH", "TRAP_HWBKPT"};
  auto pick = [code](const auto& names) -> const char* {
    return code >= 1 && static_cast<size_t>(code) <= names.size() ? names[static_cast<size_t>(code - 1)] : nullptr;
  };
  switch (signo) {
    case SIGSEGV: return pick(kSegv);
    case SIGBUS: return pick(kBus);
    case SIGILL: return pick(kIll);
    case SIGFPE: return pick(kFpe);
    case SIGTRAP: return pick(kTrap);
    default: return nullptr;
  }
}

}  // namespace

std::string SignalName(int signo) {
  const char* abbrev = ::sigabbrev_np(signo);
  return std::to_string(signo) + (abbrev ? " (SIG" + std::string(abbrev) + ")" : "");
}

std::string SignalCodeName(int signo, int code) {
  const char* name = nullptr;
  switch (code) {  // codes any signal may carry: who sent it
    case 0: name = "SI_USER: kill()"; break;
    case 0x80: name = "SI_KERNEL"; break;
    case -1: name = "SI_QUEUE: sigqueue()"; break;
    case -6: name = "SI_TKILL: tgkill(), raise(), abort()"; break;
    default: name = FaultCodeName(signo, code);
  }
  return std::to_string(code) + (name ? " (" + std::string(name) + ")" : "");
}

}  // namespace atraced
