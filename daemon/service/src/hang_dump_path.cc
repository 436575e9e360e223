#include "hang_dump_path.h"

#include <utility>

#include "process_dumps.h"

namespace atraced {

void DumpForHang(ProcessDumps& dumps, std::vector<HangTarget> targets,
                 std::function<void(std::vector<HangDumped>)> done) {
  std::vector<ProcessDumps::OwnTarget> own;
  for (HangTarget& t : targets) own.push_back({t.holder, std::move(t.note)});
  dumps.DumpOnOwn(std::move(own), [done = std::move(done)](std::vector<ProcessDumps::OwnResult> results) {
    std::vector<HangDumped> out;
    for (ProcessDumps::OwnResult& r : results) {
      const bool ok = r.entry.status == 0;
      out.push_back({r.entry.pid, ok ? r.entry.text : "", ok ? "" : r.entry.text, std::move(r.backtrace)});
    }
    done(std::move(out));
  });
}

}  // namespace atraced
