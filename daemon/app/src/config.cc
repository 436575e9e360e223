#include "atraced/app/config.h"

#include <errno.h>
#include <sys/stat.h>

#include <boost/program_options.hpp>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <vector>

#include "atraced/base/nearest_name.h"
#include "atraced/base/option_error.h"
#include "atraced/proto/wire.h"
#include "atraced/store/aging.h"
#include "atraced/store/record_num.h"

namespace po = boost::program_options;

namespace atraced {
namespace {

constexpr const char* kVersion = "0.1.0";
// Where a user finds the keys: the man page once installed, its source in a checkout.
constexpr const char* kKeysListed = "atraced.conf(5) lists the keys; in the source, docs/man/atraced.conf.5.md";

// Options shared by the command line and the configuration file; each key mirrors a flag.
po::options_description SettingOptions() {
  po::options_description d("Settings (also keys of the configuration file)");
  d.add_options()
      ("root", po::value<std::string>(), "trace root; data goes to ROOT/atrace (default: $ASCEND_WORK_PATH, else $HOME/ascend)")
      ("socket", po::value<std::string>(), "listening socket path (default: /run/atraced/atraced.sock as root, else $XDG_RUNTIME_DIR/atraced.sock)")
      ("record-num", po::value<std::string>(), "event dirs kept per class (host, device), 10-1000 (default: $ASCEND_TRACE_RECORD_NUM, else 10)")
      ("log-level", po::value<std::string>(), "error, warning, notice, info or debug (default: info)")
      ("socket-group", po::value<std::string>(), "group that owns the socket, mode 0660 (default: the daemon's group)")
      ("forwarder-group", po::value<std::string>(), "members may write device events for other pids (default: none; root and the daemon's uid always may)")
      ("reader-group", po::value<std::string>(), "members read every user's traces and reports; each user reads their own, root all (default: none)")
      ("idle-timeout", po::value<std::string>(), "seconds before a silent connection is dropped, 1-86400 (default: 60)")
      ("max-clients", po::value<std::string>(), "connections served at once, 1-65536 (default: 16384; a libascend_trace process holds 2)")
      ("uid-connection-share", po::value<std::string>(), "percent of max-clients the connections of one uid may hold, 1-100 (default: 25)")
      ("max-rings", po::value<std::string>(), "rings held at once for all processes, 1-60000 (default: 32768)")
      ("max-ring-memory", po::value<std::string>(), "memory the held rings may cost, their mappings and struct entries: a size with K, M, G or T (default: 4G)")
      ("uid-ring-share", po::value<std::string>(), "percent of max-rings and of max-ring-memory the rings of one uid may hold, 1-100 (default: 25)")
      ("io-workers", po::value<std::string>(), "threads that write ring saves, crash and death reports off the event loop: auto (the CPUs minus one, 2-16) or 1-64 (default: auto)")
      ("max-queued-bytes", po::value<std::string>(), "bytes the saves queued for the I/O workers may reserve, in all: a size with K, M, G or T, at least 1M (default: 1G)")
      ("uid-queued-share", po::value<std::string>(), "percent of max-queued-bytes the saves of one uid may reserve, 1-100 (default: 25; a schedule save past it gets -EAGAIN)")
      ("max-events-per-client", po::value<std::string>(), "open events per connection, 1-4096 (default: 64)")
      ("max-files-per-client", po::value<std::string>(), "open files per connection, 1-4096 (default: 256)")
      ("exit-record-num", po::value<std::string>(), "exit event dirs kept across the whole root (the newest), 10-100000 (default: 100)")
      ("uid-descriptor-share", po::value<std::string>(), "percent of the daemon's descriptor budget for clients that the connections and files of one uid may hold, 1-100 (default: 25)")
      ("max-use", po::value<std::string>(), "byte budget of the trace root: a size with K, M, G or T, or a % of its file system (default: 10%, at most 4G)")
      ("keep-free", po::value<std::string>(), "free space kept on the root's file system: a size with K, M, G or T, or a % (default: 15%, at most 4G)")
      ("aging-policy", po::value<std::string>(), "which dir goes first when a limit asks: fifo (the oldest) or fair (the oldest of the uid holding the most) (default: fifo)")
      ("max-age", po::value<std::string>(), "age event dirs older than this, a time span like 7d, 12h, 30min; 0 turns it off (default: 0)")
      ("rate-limit-interval", po::value<std::string>(), "refill time of each client's event buckets, a time span like 30s; 0 turns rate limiting off (default: 30s)")
      ("rate-limit-burst", po::value<std::string>(), "event dirs a client process may create per interval, 0-1000000000; 0 turns rate limiting off (default: 10000)")
      ("max-bytes-per-client", po::value<std::string>(), "bytes one client process may write over its life, a size with K, M, G or T; 0: no bound (default: 0)")
      ("crash-all-threads", po::value<std::string>(), "1: a crash report has the backtrace of every thread, not only the crashing one, 0-1 (default: 0)")
      ("crash-unwind-timeout-ms", po::value<std::string>(), "deadline for unwinding a crashed client (on a thread of its own), 100-10000 (default: 2000)")
      ("hang-timeout", po::value<std::string>(), "a watched process whose rings advance for none of this time while it lives is dumped with the rest of its job: a time span like 300s or 5min, at most 7d; 0 turns the watch off (default: 300s)")
      ("hang-watch-unlabelled", po::value<std::string>(), "1: processes without a job label are watched too, each its own job, 0-1 (default: 0)")
      ("hang-dumps-per-hour", po::value<std::string>(), "processes the hang watch may dump per hour on this host, 1-100000 (default: 64)")
      ("dump-keep", po::value<std::string>(), "a dump's directories are spared by record-num aging this long, or until exported: a time span like 24h; 0: never spared (default: 24h)");
  return d;
}

po::options_description CommandOptions() {
  po::options_description d("Options");
  d.add_options()
      ("help,h", "show this help and exit")
      ("version", "show the version and exit")
      ("config", po::value<std::string>(), "read settings from FILE (flags override it)");
  return d;
}

bool ParseBounded(const std::string& text, uint32_t lo, uint32_t hi, uint32_t* out);

// The size keys: journald's syntax (byte_budget.h); `percent_ok` for shares of the file system.
std::string ApplySize(const po::variables_map& vm, const char* key, bool percent_ok, const std::string& origin,
                      std::optional<SizeSpec>* out) {
  if (!vm.count(key)) return "";
  const std::string text = vm[key].as<std::string>();
  auto spec = ParseSizeSpec(text);
  if (!spec || (spec->percent && !percent_ok)) {
    return origin + ": invalid value [" + text + "] for " + key + ": expected bytes with an optional K, M, G or T" +
           (percent_ok ? ", or a percentage of the file system up to 100%" : "");
  }
  *out = spec;
  return "";
}

// The time-span keys, bounded to [0, max].
std::string ApplySpan(const po::variables_map& vm, const char* key, std::chrono::milliseconds max,
                      const std::string& origin, std::chrono::milliseconds* out) {
  if (!vm.count(key)) return "";
  const std::string text = vm[key].as<std::string>();
  auto span = ParseTimeSpan(text);
  if (!span || *span > max) {
    return origin + ": invalid value [" + text + "] for " + key +
           ": expected a time span like 500ms, 30s, 5min, 12h or 7d, at most " +
           std::to_string(std::chrono::duration_cast<std::chrono::hours>(max).count() / 24) + "d; 0 turns it off";
  }
  *out = *span;
  return "";
}

bool ParseBounded(const std::string& text, uint32_t lo, uint32_t hi, uint32_t* out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size() && *out >= lo && *out <= hi;
}

// Applies the values of `vm` to `config`. `from_file` decides where root/record-num go.
std::string Apply(const po::variables_map& vm, const std::string& origin, bool from_file, Config* config) {
  auto str = [&](const char* key) { return vm[key].as<std::string>(); };
  auto bounded = [&](const char* key, uint32_t lo, uint32_t hi, uint32_t* out) -> std::string {
    if (!vm.count(key)) return "";
    if (ParseBounded(str(key), lo, hi, out)) return "";
    return origin + ": invalid value [" + str(key) + "] for " + key + ": expected an integer in [" +
           std::to_string(lo) + ", " + std::to_string(hi) + "]";
  };
  if (vm.count("root")) {
    if (str("root").empty()) return origin + ": invalid value [] for root: expected a directory path";
    (from_file ? config->configured_root : config->root) = str("root");
  }
  if (vm.count("socket")) {
    if (str("socket").empty() || str("socket").size() >= 108) {
      return origin + ": invalid value [" + str("socket") + "] for socket: expected a path of 1-107 bytes";
    }
    config->socket_path = str("socket");
  }
  if (vm.count("record-num")) {
    auto n = ParseRecordNum(str("record-num"));
    if (!n) {
      return origin + ": invalid value [" + str("record-num") + "] for record-num: expected an integer in [" +
             std::to_string(kRecordNumMin) + ", " + std::to_string(kRecordNumMax) + "]";
    }
    (from_file ? config->configured_record_num : config->record_num) = *n;
  }
  if (vm.count("log-level") && !ParseLogLevel(str("log-level"), &config->log_level)) {
    return origin + ": invalid value [" + str("log-level") +
           "] for log-level: expected one of error, warning, notice, info, debug";
  }
  if (vm.count("socket-group")) config->socket_group = str("socket-group");
  if (vm.count("forwarder-group")) config->forwarder_group = str("forwarder-group");
  if (vm.count("reader-group")) config->reader_group = str("reader-group");
  for (auto* e : {&config->socket_group, &config->forwarder_group, &config->reader_group}) {
    if (*e && e->value().empty()) return origin + ": a group name must not be empty";
  }
  if (auto m = bounded("idle-timeout", 1, 86400, &config->idle_timeout_s); !m.empty()) return m;
  if (auto m = bounded("max-clients", 1, 65536, &config->max_clients); !m.empty()) return m;
  if (auto m = bounded("uid-connection-share", 1, 100, &config->uid_connection_share); !m.empty()) return m;
  if (auto m = bounded("max-rings", 1, 60000, &config->max_rings); !m.empty()) return m;
  if (auto m = bounded("uid-ring-share", 1, 100, &config->uid_ring_share); !m.empty()) return m;
  if (auto m = bounded("uid-queued-share", 1, 100, &config->uid_queued_share); !m.empty()) return m;
  if (vm.count("io-workers") && str("io-workers") == "auto") {
    config->io_workers = 0;
  } else if (auto m = bounded("io-workers", 1, 64, &config->io_workers); !m.empty()) {
    return m + " or auto";
  }
  if (auto m = bounded("max-events-per-client", 1, 4096, &config->max_events_per_client); !m.empty()) return m;
  if (auto m = bounded("max-files-per-client", 1, 4096, &config->max_files_per_client); !m.empty()) return m;
  if (auto m = bounded("uid-descriptor-share", 1, 100, &config->uid_descriptor_share); !m.empty()) return m;
  if (auto m = bounded("crash-all-threads", 0, 1, &config->crash_all_threads); !m.empty()) return m;
  if (auto m = bounded("crash-unwind-timeout-ms", 100, 10000, &config->crash_unwind_timeout_ms); !m.empty()) return m;
  if (auto m = bounded("exit-record-num", kExitRecordNumMin, kExitRecordNumMax, &config->exit_record_num); !m.empty()) {
    return m;
  }
  RetentionSettings& r = config->retention;
  if (auto m = ApplySize(vm, "max-use", true, origin, &r.max_use); !m.empty()) return m;
  if (auto m = ApplySize(vm, "keep-free", true, origin, &r.keep_free); !m.empty()) return m;
  if (vm.count("aging-policy")) {
    auto policy = ParseAgingPolicy(str("aging-policy"));
    if (!policy) return origin + ": invalid value [" + str("aging-policy") + "] for aging-policy: expected fifo or fair";
    r.policy = *policy;
  }
  constexpr std::chrono::milliseconds kMaxSpan = std::chrono::hours(24 * 3650);
  std::chrono::milliseconds max_age = r.max_age;
  if (auto m = ApplySpan(vm, "max-age", kMaxSpan, origin, &max_age); !m.empty()) return m;
  if (max_age.count() % 1000 != 0) {
    return origin + ": invalid value [" + str("max-age") + "] for max-age: expected whole seconds";
  }
  r.max_age = std::chrono::duration_cast<std::chrono::seconds>(max_age);
  if (auto m = ApplySpan(vm, "rate-limit-interval", std::chrono::hours(24), origin, &config->rate_limit.interval);
      !m.empty()) {
    return m;
  }
  if (auto m = bounded("rate-limit-burst", 0, 1000000000, &config->rate_limit.burst); !m.empty()) return m;
  if (auto m = ApplySpan(vm, "hang-timeout", std::chrono::hours(24 * 7), origin, &config->hang.timeout); !m.empty()) {
    return m;
  }
  uint32_t unlabelled = config->hang.watch_unlabelled ? 1 : 0;
  if (auto m = bounded("hang-watch-unlabelled", 0, 1, &unlabelled); !m.empty()) return m;
  config->hang.watch_unlabelled = unlabelled != 0;
  if (auto m = bounded("hang-dumps-per-hour", 1, 100000, &config->hang.dumps_per_hour); !m.empty()) return m;
  std::chrono::milliseconds dump_keep = config->dump_keep;
  if (auto m = ApplySpan(vm, "dump-keep", kMaxSpan, origin, &dump_keep); !m.empty()) return m;
  if (dump_keep.count() % 1000 != 0) {
    return origin + ": invalid value [" + str("dump-keep") + "] for dump-keep: expected whole seconds";
  }
  config->dump_keep = std::chrono::duration_cast<std::chrono::seconds>(dump_keep);
  std::optional<SizeSpec> per_client;
  if (auto m = ApplySize(vm, "max-bytes-per-client", false, origin, &per_client); !m.empty()) return m;
  if (per_client) config->max_bytes_per_client = per_client->value;
  std::optional<SizeSpec> ring_memory;
  if (auto m = ApplySize(vm, "max-ring-memory", false, origin, &ring_memory); !m.empty()) return m;
  if (ring_memory) {
    if (ring_memory->value < (1u << 20)) {
      return origin + ": invalid value [" + str("max-ring-memory") + "] for max-ring-memory: expected at least 1M";
    }
    config->max_ring_memory = ring_memory->value;
  }
  std::optional<SizeSpec> queued;
  if (auto m = ApplySize(vm, "max-queued-bytes", false, origin, &queued); !m.empty()) return m;
  if (queued) {
    if (queued->value < (1u << 20)) {
      return origin + ": invalid value [" + str("max-queued-bytes") + "] for max-queued-bytes: expected at least 1M";
    }
    config->max_queued_bytes = queued->value;
  }
  return "";
}

}  // namespace

std::string UsageText() {
  std::ostringstream out;
  out << "Usage: atraced [--config FILE] [--root DIR] [--socket PATH] [--record-num N]\n"
         "               [--log-level LEVEL] [--help] [--version]\n\n"
         "The trace spool daemon for Ascend hosts: owns ROOT/atrace, creates CANN-layout\n"
         "event directories for its clients and ages them against one counter per class.\n\n"
      << CommandOptions() << "\n"
      << SettingOptions();
  return out.str();
}

namespace {

// A line of the file as a message may show it: at most 60 bytes, anything but printable
// ASCII (and '%', which Boost's formatter loops on) as '?'.
std::string Shown(std::string_view text) {
  std::string out;
  for (char ch : text.substr(0, 60)) out += (ch >= 0x20 && ch < 0x7f && ch != '%') ? ch : '?';
  return text.size() > 60 ? out + "..." : out;
}

std::vector<std::string> LongNames(const po::options_description& options) {
  std::vector<std::string> names;
  for (const auto& option : options.options()) names.push_back(option->long_name());
  return names;
}

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

// Line by line, so every message names its line: the form is checked here (a section, a line
// without '=', a key that is not a setting, a key given twice), then each line goes through
// Boost's parser and Apply alone, with "FILE:N" as its origin.
std::string ParseConfigText(const std::string& text, const std::string& origin, Config* config) {
  const po::options_description settings = SettingOptions();
  std::map<std::string, size_t, std::less<>> seen;  // key -> the line that set it
  size_t number = 0;
  for (size_t at = 0; at <= text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view raw(text.data() + at, end - at);
    at = end + 1;
    ++number;
    const std::string where = origin + ":" + std::to_string(number);
    std::string_view line = Trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    if (line.front() == '[') {
      return where + ": sections such as '" + Shown(line) +
             "' are not supported: write each setting as 'key = value' at the top level";
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return where + ": expected 'key = value', got '" + Shown(line) + "'";
    }
    const std::string key(Trim(line.substr(0, eq)));
    if (key.empty()) return where + ": expected 'key = value', got '" + Shown(line) + "'";
    if (settings.find_nothrow(key, /*approx=*/false) == nullptr) {
      return where + ": unknown key '" + Shown(key) + "'" + DidYouMean(key, LongNames(settings)) + " (" + kKeysListed + ")";
    }
    if (auto before = seen.find(key); before != seen.end()) {
      return where + ": " + key + " is already set on line " + std::to_string(before->second);
    }
    seen.emplace(key, number);
    try {
      std::istringstream in{std::string(line)};
      po::variables_map vm;
      po::store(po::parse_config_file(in, settings, /*allow_unregistered=*/false), vm);
      po::notify(vm);
      if (std::string err = Apply(vm, where, /*from_file=*/true, config); !err.empty()) return err;
    } catch (const po::error& e) {
      return where + ": " + DescribeOptionError(e);
    }
  }
  return "";
}

ParsedCommandLine ParseCommandLine(int argc, const char* const* argv) {
  ParsedCommandLine out;
  po::options_description all;
  all.add(CommandOptions()).add(SettingOptions());
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    out.outcome = ParsedCommandLine::Outcome::kUsageError;
    std::string hint;
    if (const auto* unknown = dynamic_cast<const po::unknown_option*>(&e)) {
      std::string typed = unknown->get_option_name();
      typed.erase(0, typed.find_first_not_of('-'));
      if (std::string near = NearestName(typed, LongNames(all)); !near.empty()) hint = "; did you mean '--" + near + "'?";
    }
    out.output = "atraced: " + DescribeOptionError(e) + hint + "\nTry 'atraced --help'.";
    return out;
  }
  if (vm.count("help")) {
    out.outcome = ParsedCommandLine::Outcome::kExitSuccess;
    out.output = UsageText();
    return out;
  }
  if (vm.count("version")) {
    out.outcome = ParsedCommandLine::Outcome::kExitSuccess;
    out.output = std::string("atraced ") + kVersion + " (protocol " + std::to_string(ATR_VERSION_MAJOR) + "." +
                 std::to_string(ATR_VERSION_MINOR) + ")";
    return out;
  }
  auto fail = [&](std::string message) {
    out.outcome = ParsedCommandLine::Outcome::kUsageError;
    out.output = "atraced: " + std::move(message);
    return out;
  };
  if (vm.count("config")) {
    const std::string path = vm["config"].as<std::string>();
    std::ifstream in(path);
    if (!in) return fail("cannot read configuration file " + path + ": " + std::strerror(errno));
    // An ifstream opens a directory and then reads nothing: that would be an empty file.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return fail("cannot read configuration file " + path + ": " + std::strerror(EISDIR));
    }
    std::stringstream text;
    text << in.rdbuf();
    out.config.config_file = path;
    if (auto err = ParseConfigText(text.str(), path, &out.config); !err.empty()) return fail(err);
  }
  // Flags last, so they override the file.
  if (auto err = Apply(vm, "command line", /*from_file=*/false, &out.config); !err.empty()) return fail(err);
  return out;
}

}  // namespace atraced
