// The crash report's stacks in the form CANN's tools read (issue 25): CANN's stackcore
// report has a `[stack]` section of
//
//   Thread 1 (TID, NAME)
//   #0 0x<pc> 0x<load base of the module> <module path>
//
// and a `[maps]` section of raw /proc/PID/maps lines. asys (`asys analyze -r=stackcore`)
// takes the first four tokens of each frame line, finds the module by the maps line whose
// start address is the base, and runs addr2line at pc - base (at pc for an ET_EXEC image).
// We write the same four tokens, then what a person reading the file wants: the symbol and
// offset, and the source line where the debug info has it.
//
// Pure functions of what the unwinder saw, so they are tested without ptrace
// (tests/crash/stack_format_test.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace atraced::crash {

// One frame as the unwinder gave it.
struct StackFrame {
  uint64_t pc = 0;
  bool activation = false;  // libdwfl: the pc is exact (the first frame, or after a signal frame)
  std::string module;       // the module's path as /proc/PID/maps names it; empty if none
  std::string symbol;       // "function+0xoffset"; empty if unknown
  std::string source;       // "file.c:12"; empty if unknown
};

// Module path -> the start address of its mapping at file offset 0 (asys's "base"), from
// /proc/PID/maps text. A path mapped at offset 0 more than once keeps the lowest start.
std::map<std::string, uint64_t> ModuleBases(const std::string& maps);

// The index of the frame that faulted in a stack unwound from inside the library's signal
// handler: frames 0.. are the handler and the kernel's signal trampoline, and the frame
// after the trampoline has an exact pc again. The last frame of the first run of
// activation frames after frame 0; 0 when there is no such run (not in a handler).
size_t FaultingFrame(const std::vector<StackFrame>& frames);

// "Thread N (TID, NAME)".
std::string ThreadLine(int number, long tid, const std::string& name);

// "#N 0x<pc, 16 digits> 0x<base, 16 digits> <module or ??>[ symbol][ at source]". A module
// absent from `bases` gets base 0 (asys then finds no module and leaves the line as is).
std::string FrameLine(int number, const StackFrame& frame, const std::map<std::string, uint64_t>& bases);

}  // namespace atraced::crash
