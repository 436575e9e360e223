// atraced_emit_loop: N synchronous events, one 4 KiB file each, either through atraced or
// the CANN-style in-process writer. It exists to be run under `strace -f -c` (or perf), so
// that bench/syscalls.sh can count the system calls one event costs on each side: the
// difference between a run of N events and a run of 0 is the per-event cost, free of the
// start-up and connection calls.
//   atraced_emit_loop daemon <socket> <n>
//   atraced_emit_loop direct <root> <n> [record_num]
//   atraced_emit_loop daemon-fd <socket> <n>   the same through a passed descriptor
//                                              (ATRACE_EMIT_VIA_FD: two round trips)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "atraced/atrace_client.h"
#include "cann_baseline.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s daemon|daemon-fd <socket> <n> | direct <root> <n> [record_num]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const long n = std::strtol(argv[3], nullptr, 10);
  std::vector<char> data(4096, 'x');
  if (mode == "direct") {
    const size_t record_num = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 10;
    atraced_bench::CannWriter writer(argv[2], record_num);
    for (long i = 0; i < n; ++i) {
      if (int rc = writer.Emit(data.data(), data.size()); rc != 0) {
        std::fprintf(stderr, "emit: %s\n", std::strerror(-rc));
        return 1;
      }
    }
    return 0;
  }
  if (mode != "daemon" && mode != "daemon-fd") return 2;
  const unsigned flags = mode == "daemon-fd" ? ATRACE_EMIT_VIA_FD : 0;
  atrace_client_options options;
  std::memset(&options, 0, sizeof options);
  options.socket_path = argv[2];
  atrace_client* client = nullptr;
  if (int rc = atrace_client_open(&options, &client); rc != 0) {
    std::fprintf(stderr, "connect: %s\n", atrace_client_strerror(rc));
    return 1;
  }
  atrace_event_spec event{ATRACE_EVENT_SCHEDULE, ATRACE_SIDE_HOST, 0, nullptr};
  atrace_file_spec file;
  std::memset(&file, 0, sizeof file);
  file.form = ATRACE_FILE_OBJECT;
  file.name = "hccl";
  for (long i = 0; i < n; ++i) {
    if (int rc = atrace_emit(client, &event, &file, data.data(), data.size(), flags, nullptr, 0); rc != 0) {
      std::fprintf(stderr, "emit: %s\n", atrace_client_strerror(rc));
      return 1;
    }
  }
  atrace_client_close(client);
  return 0;
}
