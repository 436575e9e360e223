// What the unwinder saw, turned into the crash report's `[stack]` lines in CANN's form (their
// writer and reader are atraced/proto/stack_report.h). asys (`asys analyze -r=stackcore`)
// takes the first four tokens of each frame line, finds the module by the `[maps]` line whose
// start address is the base, and runs addr2line at pc - base (at pc for an ET_EXEC image).
//
// Pure functions of what the unwinder saw, so they are tested without ptrace
// (tests/crash/stack_format_test.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "atraced/proto/stack_report.h"

namespace atraced::crash {

// One frame as the unwinder gave it (the process's own bytes: the report's writer escapes them).
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

// Frame `number` of a thread's block: its pc, its module's base from `bases` (0 for a module
// absent from them: asys then finds no module and leaves the line as is), module, symbol, source.
proto::StackFrameText FrameText(uint32_t number, const StackFrame& frame, const std::map<std::string, uint64_t>& bases);

}  // namespace atraced::crash
