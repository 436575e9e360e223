#include "daemon_talk/list_filter.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <cstdlib>
#include <ctime>
#include <limits>

#include "atraced/atrace_client.h"
#include "atraced/proto/codec.h"
#include "common/escape.h"
#include "common/command_line.h"

namespace atracectl {

std::optional<uint64_t> ParseSize(const std::string& text) {
  static const std::string kSuffixes = "KMGTPE";
  std::string digits = text;
  int shift = 0;
  if (!digits.empty() && digits.back() == 'B') digits.pop_back();
  if (!digits.empty()) {
    if (const size_t at = kSuffixes.find(digits.back()); at != std::string::npos) {
      shift = 10 * static_cast<int>(at + 1);
      digits.pop_back();
    }
  }
  if (digits.empty() || digits.size() > 20) return std::nullopt;
  uint64_t n = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (n > (std::numeric_limits<uint64_t>::max() - d) / 10) return std::nullopt;
    n = n * 10 + d;
  }
  if (shift != 0 && n > (std::numeric_limits<uint64_t>::max() >> shift)) return std::nullopt;
  return n << shift;
}

std::optional<int64_t> ParseSpan(const std::string& s) {
  // systemd.time(7)'s units; a month and a year as systemd counts them.
  static const struct {
    const char* name;
    int64_t us;
  } kUnits[] = {{"us", 1},           {"usec", 1},           {"ms", 1000},          {"msec", 1000},
                {"s", 1000000},      {"sec", 1000000},      {"second", 1000000},   {"seconds", 1000000},
                {"m", 60000000},     {"min", 60000000},     {"minute", 60000000},  {"minutes", 60000000},
                {"h", 3600000000},   {"hr", 3600000000},    {"hour", 3600000000},  {"hours", 3600000000},
                {"d", 86400000000},  {"day", 86400000000},  {"days", 86400000000}, {"w", 604800000000},
                {"week", 604800000000}, {"weeks", 604800000000}, {"M", 2629800000000}, {"month", 2629800000000},
                {"months", 2629800000000}, {"y", 31557600000000}, {"year", 31557600000000},
                {"years", 31557600000000}};
  constexpr int64_t kMax = 100LL * 31557600000000;  // a century: beyond any span worth asking for
  int64_t total = 0;
  size_t i = 0;
  bool any = false;
  while (i < s.size()) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    int64_t n = 0;
    const size_t digits = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (n > 1000000000) return std::nullopt;
      n = n * 10 + (s[i++] - '0');
    }
    const size_t unit_at = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    if (i == digits || unit_at == digits || unit_at == i) return std::nullopt;  // a number and a unit, each
    const std::string unit = s.substr(unit_at, i - unit_at);
    const auto* u = std::find_if(std::begin(kUnits), std::end(kUnits), [&unit](const auto& k) { return unit == k.name; });
    if (u == std::end(kUnits) || n > kMax / u->us) return std::nullopt;
    total += n * u->us;
    if (total > kMax) return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

namespace {

constexpr int64_t kUsPerSec = 1000000;

// Local midnight of the day `days` from the day of `now_us`.
int64_t MidnightUs(int64_t now_us, int days) {
  const time_t now = static_cast<time_t>(now_us / kUsPerSec);
  struct tm tm {};
  ::localtime_r(&now, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_mday += days;
  tm.tm_isdst = -1;
  return static_cast<int64_t>(::mktime(&tm)) * kUsPerSec;
}

// "[+-]SPAN" relative to now.
std::optional<int64_t> Relative(const std::string& s, int64_t now_us) {
  if (s.size() < 2 || (s[0] != '-' && s[0] != '+')) return std::nullopt;
  auto span = ParseSpan(s.substr(1));
  if (!span) return std::nullopt;
  return s[0] == '-' ? now_us - *span : now_us + *span;
}

// "YYYY-MM-DD[ HH:MM[:SS]]" or "HH:MM[:SS]" (today), local time.
std::optional<int64_t> Absolute(const std::string& s, int64_t now_us) {
  struct tm tm {};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, used = 0;
  const char* p = s.c_str();
  if (std::sscanf(p, "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 && used == 10) {
    p += used;
    if (*p == ' ' || *p == 'T') {
      ++p;
    } else if (*p != '\0') {
      return std::nullopt;
    }
  } else {
    const time_t now = static_cast<time_t>(now_us / kUsPerSec);
    struct tm today {};
    ::localtime_r(&now, &today);
    y = today.tm_year + 1900;
    mo = today.tm_mon + 1;
    d = today.tm_mday;
  }
  if (*p != '\0') {
    int n = 0;
    if (std::sscanf(p, "%2d:%2d%n", &h, &mi, &n) != 2 || n != 5) return std::nullopt;
    p += n;
    if (*p == ':') {
      if (std::sscanf(p, ":%2d%n", &sec, &n) != 1 || n != 3) return std::nullopt;
      p += n;
    }
    if (*p != '\0') return std::nullopt;
  } else if (p == s.c_str()) {
    return std::nullopt;  // empty
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970 || y > 9999) {
    return std::nullopt;
  }
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  tm.tm_isdst = -1;
  const time_t t = ::mktime(&tm);
  if (t == static_cast<time_t>(-1) || tm.tm_mday != d) return std::nullopt;  // 2026-02-31 is not a day
  return static_cast<int64_t>(t) * kUsPerSec;
}

}  // namespace

std::optional<int64_t> ParseTimeSpec(const std::string& spec, int64_t now_us, std::string* why) {
  std::optional<int64_t> t;
  if (spec == "now") {
    t = now_us;
  } else if (spec == "today") {
    t = MidnightUs(now_us, 0);
  } else if (spec == "yesterday") {
    t = MidnightUs(now_us, -1);
  } else if (spec == "tomorrow") {
    t = MidnightUs(now_us, 1);
  } else if (!spec.empty() && spec[0] == '@') {
    char* end = nullptr;
    const long long secs = std::strtoll(spec.c_str() + 1, &end, 10);
    if (end != spec.c_str() + 1 && *end == '\0' && secs >= 0 && secs < 253402300800LL) t = secs * kUsPerSec;
  } else if (!spec.empty() && (spec[0] == '-' || spec[0] == '+')) {
    t = Relative(spec, now_us);
  } else {
    t = Absolute(spec, now_us);
  }
  if (!t) {
    *why = "'" + spec +
           "' is not a time: use 'YYYY-MM-DD HH:MM[:SS]', 'YYYY-MM-DD', 'HH:MM', 'now', 'today', 'yesterday', "
           "'tomorrow', '-1h' or '+30min' (us, ms, s, min, h, d, w, M, y) or '@SECONDS'";
  }
  return t;
}

bool ListFilter::Matches(const atrace::ListEntry& e) const {
  if (pid && e.pid != *pid) return false;
  if (uid && e.uid != *uid) return false;
  if (comm && e.comm != *comm) return false;
  if (job && e.job != *job) return false;
  if (rank && e.rank != *rank) return false;
  if (kind && e.kind != *kind) return false;
  if (side && e.side != *side) return false;
  if (device && (e.side != ATRACE_SIDE_DEVICE || e.device_id != *device)) return false;
  const auto created = static_cast<int64_t>(e.created_unix_us);
  if (since_us && created < *since_us) return false;
  if (until_us && created > *until_us) return false;
  return true;
}

void AddFilterOptions(boost::program_options::options_description& options) {
  namespace po = boost::program_options;
  options.add_options()(
      "pid", po::value<int32_t>(), "only directories of this process")(
      "uid", po::value<uint32_t>(), "only directories this uid's process made")(
      "comm", po::value<std::string>(), "only directories made for this program (its kernel name, as COMM shows it)")(
      "job", po::value<std::string>(), "only directories of processes labelled with this job (ATRACE_JOB, SLURM_JOB_ID, JOB_ID)")(
      "rank", po::value<std::string>(), "only directories of processes labelled with this rank (RANK_ID, RANK, SLURM_PROCID, JOB_COMPLETION_INDEX)")(
      "kind", po::value<std::string>(), "schedule, stackcore or exit")(
      "side", po::value<std::string>(), "host or device")(
      "device", po::value<uint32_t>(), "only this device's (device side) directories")(
      "since", po::value<std::string>(), "made at or after this time ('2026-12-01 10:00', '-1h', 'today', ...)")(
      "until", po::value<std::string>(), "made at or before this time (the same forms)");
}

// The filters from the options; false after printing a usage error.
bool ReadFilter(const boost::program_options::variables_map& vm, int64_t now_us, ListFilter* f, int* exit_code) {
  auto bad = [exit_code](const std::string& why) {
    *exit_code = UsageError(why);
    return false;
  };
  if (vm.count("pid")) f->pid = vm["pid"].as<int32_t>();
  if (vm.count("uid")) f->uid = vm["uid"].as<uint32_t>();
  if (vm.count("comm")) {
    f->comm = vm["comm"].as<std::string>();
    if (f->comm->empty() || f->comm->size() > 63) return bad("--comm '" + *f->comm + "': a program name is 1 to 63 bytes");
  }
  if (vm.count("job")) {
    f->job = vm["job"].as<std::string>();
    if (std::string why = atraced::proto::CheckLabel(atraced::proto::LabelKind::kJob, *f->job); f->job->empty() || !why.empty()) {
      return bad("--job '" + TerminalLine(*f->job) + "': " + (why.empty() ? "empty" : why));
    }
  }
  if (vm.count("rank")) {
    f->rank = vm["rank"].as<std::string>();
    if (std::string why = atraced::proto::CheckLabel(atraced::proto::LabelKind::kRank, *f->rank); f->rank->empty() || !why.empty()) {
      return bad("--rank '" + TerminalLine(*f->rank) + "': " + (why.empty() ? "empty" : why));
    }
  }
  if (vm.count("device")) f->device = vm["device"].as<uint32_t>();
  if (vm.count("kind")) {
    const std::string k = vm["kind"].as<std::string>();
    if (k == "schedule") {
      f->kind = ATRACE_EVENT_SCHEDULE;
    } else if (k == "stackcore") {
      f->kind = ATRACE_EVENT_STACKCORE;
    } else if (k == "exit") {
      f->kind = ATRACE_EVENT_EXIT;
    } else {
      return bad("--kind " + k + ": use schedule, stackcore or exit");
    }
  }
  if (vm.count("side")) {
    const std::string s = vm["side"].as<std::string>();
    if (s != "host" && s != "device") return bad("--side " + s + ": use host or device");
    f->side = s == "host" ? ATRACE_SIDE_HOST : ATRACE_SIDE_DEVICE;
  }
  std::string why;
  for (const char* key : {"since", "until"}) {
    if (!vm.count(key)) continue;
    auto t = ParseTimeSpec(vm[key].as<std::string>(), now_us, &why);
    if (!t) return bad(std::string("--") + key + ": " + why);
    (std::string(key) == "since" ? f->since_us : f->until_us) = t;
  }
  if (f->since_us && f->until_us && *f->since_us > *f->until_us) return bad("--since is after --until");
  return true;
}


}  // namespace atracectl
