// Names for a crash report: "11 (SIGSEGV)" and "1 (SEGV_MAPERR)". The code's name depends
// on the signal (si_code 1 is SEGV_MAPERR for SIGSEGV, BUS_ADRALN for SIGBUS); the numbers
// are Linux's, written out so the report does not depend on which names a libc defines.
#pragma once

#include <string>

namespace atraced {

std::string SignalName(int signo);
std::string SignalCodeName(int signo, int code);

}  // namespace atraced
