// What CANN's asys needs of a stackcore report to symbolize it (`asys analyze -r=stackcore`),
// restated from its public parsing rules (hicann/oam-tools, src/asys/collect/stackcore), not
// its code, so that CI can check our reports without asys:
//   - a line starting with "[" opens a section: "[stack]" frames, "[maps]" maps, any other
//     closes the open one;
//   - in [stack], a frame is a line starting with "#<digits>" with at least four tokens,
//     the second and third hexadecimal ("0x..."): pc, the module's load base, the module;
//   - in [maps], a line of exactly six columns whose last starts with "/" maps its start
//     address to that path; a frame's base must be one of those starts for asys to find
//     the binary;
//   - asys then runs `addr2line -f -C -s -i -e BINARY ADDRESS` with ADDRESS = pc - base, or pc
//     for an ET_EXEC image.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace atraced::testing {

struct AsysFrame {
  uint64_t pc = 0;
  uint64_t base = 0;
  std::string module;  // the path from [maps] that `base` names, empty if none
  std::string line;    // the frame line as written
};

struct AsysStackcore {
  std::vector<AsysFrame> frames;               // every frame asys would take, in order
  std::map<uint64_t, std::string> maps_bases;  // [maps]: start -> path
  std::vector<std::string> problems;           // frames asys would skip or could not resolve
};

AsysStackcore ParseAsAsys(const std::string& report);

// addr2line as asys runs it for `frame` (pc - base; pc for an ET_EXEC module): its output
// lines (function, file:line, ...), or empty when addr2line is missing or fails.
std::vector<std::string> Addr2LineAsAsys(const AsysFrame& frame);

}  // namespace atraced::testing
