// atraced_emit_latency: N synchronous atrace_emit calls (one 4 KiB file each), each timed
// alone. Prints p50, p90, p99, p99.9 and the maximum, then the indices of the calls at or
// over p99 with the gap to the previous one: a tail that comes every so many events is a
// periodic cause in the daemon (docs/BENCHMARKS.md found its remover's batches that way).
//   atraced_emit_latency <socket> <n>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "atraced/atrace_client.h"

namespace {

long long NowNs() {
  timespec t;
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <socket> <n>\n", argv[0]);
    return 2;
  }
  const long n = std::strtol(argv[2], nullptr, 10);
  if (n < 100) {
    std::fprintf(stderr, "n: at least 100 calls, for a p99\n");
    return 2;
  }
  atrace_client_options options;
  atrace_client_options_init(&options);
  options.socket_path = argv[1];
  atrace_client* client = nullptr;
  if (int rc = atrace_client_open(&options, &client); rc != 0) {
    std::fprintf(stderr, "connect: %s\n", atrace_client_strerror(rc));
    return 1;
  }
  const std::vector<char> data(4096, 'x');
  const atrace_event_spec event{ATRACE_EVENT_SCHEDULE, ATRACE_SIDE_HOST, 0, nullptr};
  atrace_file_spec file{};
  file.form = ATRACE_FILE_OBJECT;
  file.name = "hccl";
  std::vector<long long> took(static_cast<size_t>(n));
  for (long i = 0; i < n; ++i) {
    const long long t0 = NowNs();
    if (int rc = atrace_emit(client, &event, &file, data.data(), data.size(), 0, nullptr, 0); rc != 0) {
      std::fprintf(stderr, "emit: %s\n", atrace_client_strerror(rc));
      return 1;
    }
    took[static_cast<size_t>(i)] = NowNs() - t0;
  }
  atrace_client_close(client);
  std::vector<long long> sorted = took;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double q) { return sorted[static_cast<size_t>(q * static_cast<double>(n - 1))] / 1000; };
  std::printf("us: p50 %lld p90 %lld p99 %lld p99.9 %lld max %lld\n", at(0.5), at(0.9), at(0.99), at(0.999),
              sorted.back() / 1000);
  const long long p99 = sorted[static_cast<size_t>(0.99 * static_cast<double>(n - 1))];
  std::printf("calls at or over p99 (index, gap to the previous):");
  long previous = -1;
  int shown = 0;
  for (long i = 0; i < n && shown < 40; ++i) {
    if (took[static_cast<size_t>(i)] < p99) continue;
    std::printf(" %ld(%ld)", i, previous < 0 ? 0 : i - previous);
    previous = i;
    ++shown;
  }
  std::printf("\n");
  return 0;
}
