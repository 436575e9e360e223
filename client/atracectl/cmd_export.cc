// atracectl export [list's filters] --format chrome-json [--output FILE] (issue 26): the
// selected event directories' records as one Trace Event Format document, which the Perfetto
// UI and chrome://tracing open (trace_events.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "bundle.h"
#include "cli.h"
#include "list_filter.h"
#include "parse.h"
#include "timeline_html.h"
#include "trace_events.h"

namespace po = boost::program_options;

namespace atracectl {

int RunExport(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  po::options_description options("options");
  options.add_options()("format", po::value<std::string>(),
                        "chrome-json: the Trace Event Format (Perfetto, chrome://tracing); html: one self-contained "
                        "timeline page; tar: a .tar.gz bug-report bundle (needs --output)")(
      "output,o", po::value<std::string>(), "write to FILE (made with mode 0640, never over an existing file); "
                                            "default: standard output");
  AddFilterOptions(options);
  auto vm = ParseCommand(args,
                         "Usage: atracectl [--socket PATH] export --format chrome-json|html|tar [--output FILE] [--pid N] "
                         "[--uid N] [--comm NAME] [--kind KIND] [--side SIDE] [--device N] [--since TIME] [--until TIME]",
                         options, po::positional_options_description(), &exit_code);
  if (!vm) return exit_code;
  if (!vm->count("format")) return UsageError("export: give --format chrome-json, html or tar");
  const std::string format = (*vm)["format"].as<std::string>();
  if (format != "chrome-json" && format != "html" && format != "tar") {
    return UsageError("export: --format " + format + ": the formats are chrome-json, html and tar");
  }
  if (format == "tar" && !vm->count("output")) return UsageError("export: --format tar writes a file: give --output");
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  ListFilter filter;
  if (!ReadFilter(*vm, static_cast<int64_t>(now.tv_sec) * 1000000 + now.tv_nsec / 1000, &filter, &exit_code)) {
    return exit_code;
  }
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  atrace_status status{};
  if (auto ec = client.Status(&status)) return Fail(client, "status", ec);
  std::vector<atrace::ListEntry> all, chosen;
  if (auto ec = client.List(&all)) return Fail(client, "list", ec);
  for (auto& e : all) {
    if (filter.Matches(e)) chosen.push_back(std::move(e));
  }
  if (format == "tar") {
    std::vector<std::string> dirs;
    for (const auto& e : chosen) dirs.push_back(e.path);
    return WriteBundle(g, std::string(status.root) + "/atrace", dirs, (*vm)["output"].as<std::string>());
  }
  std::vector<std::string> problems;
  const std::string trace = ChromeTraceJson(chosen, std::string(status.root) + "/atrace", &problems);
  const std::string json = format == "html" ? TimelineHtml(trace) : trace;
  for (const auto& p : problems) std::cerr << "atracectl: export: skipped " << p << "\n";
  if (!vm->count("output")) {
    std::cout << json;
    return std::cout.good() ? kExitOk : kExitFailed;
  }
  const std::string path = (*vm)["output"].as<std::string>();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd < 0) {
    std::cerr << "atracectl: export: " << path << ": " << std::strerror(errno) << "\n";
    return kExitFailed;
  }
  size_t put = 0;
  while (put < json.size()) {
    const ssize_t n = ::write(fd, json.data() + put, json.size() - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::cerr << "atracectl: export: " << path << ": " << std::strerror(errno) << "\n";
      ::close(fd);
      return kExitFailed;
    }
    put += static_cast<size_t>(n);
  }
  ::close(fd);
  std::cerr << "atracectl: wrote " << chosen.size() << " event director" << (chosen.size() == 1 ? "y" : "ies") << " to "
            << path << "\n";
  return kExitOk;
}

}  // namespace atracectl
