// One process of the report storm (bench/storm_bench.h): it fills `objects` full default
// rings (1024 x 112 B), says it is ready, waits for the start (its go pipe closes), saves
// them once and exits. `atraced`: one AtraceEventReportSync of an event bound to all of
// them, through the daemon at $ATRACED_SOCKET. `inproc`: the same rings formatted and
// written from this process, one write per file (InProcessSave); `cann`: the same with
// CANN's three writes per record.
//   atraced_storm_child atraced|inproc|cann OBJECTS READY_FD GO_FD [INPROC_DIR]
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "atrace_pub.h"
#include "bench_util.h"
#include "cann_baseline.h"

int main(int argc, char** argv) {
  using namespace atraced_bench;
  if (argc < 5) {
    std::fprintf(stderr, "usage: atraced_storm_child atraced|inproc|cann OBJECTS READY_FD GO_FD [INPROC_DIR]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int objects = std::atoi(argv[2]);
  const int ready = std::atoi(argv[3]), go = std::atoi(argv[4]);
  constexpr uint32_t kMsgNum = 1024, kMsgSize = 112;
  try {
    std::unique_ptr<InProcessSave> inproc;
    TraEventHandle ev = -1;
    if (mode == "inproc" || mode == "cann") {
      if (argc < 6) Fail("inproc needs INPROC_DIR");
      inproc = std::make_unique<InProcessSave>(std::string(argv[5]) + "/" + std::to_string(::getpid()), kMsgNum,
                                               kMsgSize, static_cast<uint32_t>(objects), mode == "cann");
    } else {
      ev = AtraceEventCreate("storm");
      if (ev < 0) Fail("AtraceEventCreate");
      for (int o = 0; o < objects; ++o) {
        const TraHandle h = AtraceCreate(TRACER_TYPE_SCHEDULE, ("storm" + std::to_string(o)).c_str());
        if (h < 0 || AtraceEventBindTrace(ev, h) != TRACE_SUCCESS) Fail("AtraceCreate");
        for (uint32_t i = 0; i < kMsgNum; ++i) {
          std::string text = "CqReport:devId=0,stmId=" + std::to_string(i) + ",";
          text.resize(kMsgSize - 1, 'x');
          if (AtraceSubmit(h, text.data(), static_cast<uint32_t>(text.size())) != TRACE_SUCCESS) Fail("AtraceSubmit");
        }
      }
    }
    char c = 1;
    if (!WriteFull(ready, &c, 1)) Fail("ready pipe");
    ::close(ready);
    (void)!::read(go, &c, 1);  // returns 0 when the parent closes its end: everyone starts at once
    if (inproc) {
      inproc->Save();
    } else if (AtraceEventReportSync(ev) != TRACE_SUCCESS) {
      Fail("AtraceEventReportSync");
    }
  } catch (const BenchError& e) {
    std::fprintf(stderr, "atraced_storm_child: %s\n", e.what());
    return 1;
  }
  return 0;
}
