#include "files/bundle_meta.h"

#include <sys/timex.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>

#include "atraced/proto/codec.h"
#include "common/escape.h"

namespace atracectl {
namespace {

int64_t ClockUs(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

std::string FirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

const char* AdjtimexStateName(int state) {
  switch (state) {
    case TIME_OK: return "TIME_OK";
    case TIME_INS: return "TIME_INS";
    case TIME_DEL: return "TIME_DEL";
    case TIME_OOP: return "TIME_OOP";
    case TIME_WAIT: return "TIME_WAIT";
    case TIME_ERROR: return "TIME_ERROR";
    default: return "unknown";
  }
}

std::string JsonOrNull(const std::string& s) { return s.empty() ? "null" : JsonString(s); }

// A flat JSON object: "key": string | number | true | false | null, nothing nested. Values
// are kept as their text (strings unescaped); false when the line is not such an object.
bool ParseFlatObject(std::string_view s, std::map<std::string, std::string>* out, std::map<std::string, bool>* is_string) {
  size_t i = 0;
  auto ws = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
  };
  auto string = [&](std::string* v) {
    if (i >= s.size() || s[i] != '"') return false;
    ++i;
    while (i < s.size() && s[i] != '"') {
      if (v->size() > 4096) return false;
      char c = s[i++];
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        *v += c;
        continue;
      }
      if (i >= s.size()) return false;
      c = s[i++];
      switch (c) {
        case '"': case '\\': case '/': *v += c; break;
        case 'n': *v += '\n'; break;
        case 't': *v += '\t'; break;
        case 'r': *v += '\r'; break;
        case 'b': *v += '\b'; break;
        case 'f': *v += '\f'; break;
        case 'u': {
          if (i + 4 > s.size()) return false;
          unsigned code = 0;
          auto [p, ec] = std::from_chars(s.data() + i, s.data() + i + 4, code, 16);
          if (ec != std::errc() || p != s.data() + i + 4) return false;
          i += 4;
          // Kept as one byte below 0x100, else '?': the fields that matter are ASCII and checked.
          *v += code < 0x100 ? static_cast<char>(code) : '?';
          break;
        }
        default: return false;
      }
    }
    if (i >= s.size()) return false;
    ++i;
    return true;
  };
  ws();
  if (i >= s.size() || s[i++] != '{') return false;
  ws();
  if (i < s.size() && s[i] == '}') return true;
  for (;;) {
    ws();
    std::string key, value;
    if (!string(&key)) return false;
    ws();
    if (i >= s.size() || s[i++] != ':') return false;
    ws();
    bool str = false;
    if (i < s.size() && s[i] == '"') {
      if (!string(&value)) return false;
      str = true;
    } else {
      const size_t start = i;
      while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ' ') ++i;
      value = std::string(s.substr(start, i - start));
      if (value.empty() || value.size() > 32) return false;
    }
    if (out->size() > 64) return false;
    (*out)[key] = value;
    (*is_string)[key] = str;
    ws();
    if (i >= s.size()) return false;
    if (s[i] == ',') {
      ++i;
      continue;
    }
    if (s[i++] != '}') return false;
    ws();
    return i == s.size();
  }
}

bool Int(const std::string& text, int64_t* v) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *v);
  return ec == std::errc() && p == text.data() + text.size();
}

}  // namespace

BundleHost ThisHost() {
  BundleHost h;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) h.host = name;
  h.boot_id = FirstLine("/proc/sys/kernel/random/boot_id");
  // The three clocks as close together as three calls make them.
  h.realtime_us = ClockUs(CLOCK_REALTIME);
  h.monotonic_us = ClockUs(CLOCK_MONOTONIC);
  h.boottime_us = ClockUs(CLOCK_BOOTTIME);
  h.exported_unix_us = h.realtime_us;
  const time_t now = static_cast<time_t>(h.realtime_us / 1000000);
  struct tm tm {};
  ::localtime_r(&now, &tm);
  h.utc_offset_s = static_cast<int32_t>(tm.tm_gmtoff);
  struct timex tx {};
  const int state = ::adjtimex(&tx);
  h.adjtimex = state < 0 ? "unreadable" : AdjtimexStateName(state);
  if (state >= 0) h.clock_synchronized = state != TIME_ERROR && !(tx.status & STA_UNSYNC);
  return h;
}

std::string BundleHostLine(const BundleHost& h) {
  return "{\"record\":\"host\",\"format\":1,\"host\":" + JsonString(h.host) + ",\"boot_id\":" + JsonString(h.boot_id) +
         ",\"exported_unix_us\":" + std::to_string(h.exported_unix_us) + ",\"utc_offset_s\":" +
         std::to_string(h.utc_offset_s) + ",\"realtime_us\":" + std::to_string(h.realtime_us) +
         ",\"monotonic_us\":" + std::to_string(h.monotonic_us) + ",\"boottime_us\":" + std::to_string(h.boottime_us) +
         ",\"clock_synchronized\":" +
         (h.clock_synchronized ? (*h.clock_synchronized ? "true" : "false") : "null") +
         ",\"adjtimex\":" + JsonString(h.adjtimex) + "}\n";
}

std::string BundleDirLine(const atrace::ListEntry& e) {
  const char* kind = e.kind == ATRACE_EVENT_STACKCORE ? "stackcore" : e.kind == ATRACE_EVENT_EXIT ? "exit" : "schedule";
  return "{\"record\":\"dir\",\"path\":" + JsonString(e.path) + ",\"pid\":" + std::to_string(e.pid) +
         ",\"comm\":" + JsonOrNull(e.comm) + ",\"kind\":\"" + kind + "\",\"side\":\"" +
         (e.side == ATRACE_SIDE_DEVICE ? "device" : "host") + "\",\"device_id\":" + std::to_string(e.device_id) +
         ",\"created_unix_us\":" + std::to_string(e.created_unix_us) + ",\"job\":" + JsonOrNull(e.job) +
         ",\"rank\":" + (e.rank.empty() ? "null" : e.rank) +
         ",\"world_size\":" + (e.world_size.empty() ? "null" : e.world_size) + ",\"uid\":" + std::to_string(e.uid) +
         ",\"seq\":" + std::to_string(e.seq) + ",\"made_by\":" + ((e.flags & ATRACE_LIST_CLIENT) ? "\"client\"" : "\"daemon\"") +
         "}\n";
}

namespace {

constexpr const char* kAgedReasons[] = {"count", "bytes", "keep-free", "age", "vacuum"};  // by ATRACE_AGED_*

}  // namespace

std::string BundleAgedLine(const atrace::Client::AgedEntry& e) {
  if (e.job.empty() || e.rank.empty() || e.reason >= std::size(kAgedReasons)) return "";
  return "{\"record\":\"aged\",\"dir\":" + JsonString(e.path) + ",\"job\":" + JsonString(e.job) + ",\"rank\":" + e.rank +
         ",\"world_size\":" + (e.world_size.empty() ? "null" : e.world_size) + ",\"uid\":" + std::to_string(e.uid) +
         ",\"reason\":\"" + kAgedReasons[e.reason] + "\",\"at\":" + std::to_string(e.aged_unix_us) +
         ",\"exported\":" + ((e.flags & ATRACE_AGED_EXPORTED) ? "true" : "false") + ",\"by\":\"" +
         ((e.flags & ATRACE_AGED_HANG) ? "hang" : "dump") + "\"}\n";
}

BundleMetaLine ParseBundleMetaLine(std::string_view line) {
  BundleMetaLine out;
  std::map<std::string, std::string> f;
  std::map<std::string, bool> str;
  if (!ParseFlatObject(line, &f, &str)) return out;
  auto text = [&](const char* key) { return str[key] ? f[key] : std::string(); };
  auto number = [&](const char* key, int64_t* v) { return f.count(key) && !str[key] && Int(f[key], v); };
  const std::string record = text("record");
  if (record == "host") {
    BundleHost& h = out.host;
    h.host = text("host");
    h.boot_id = text("boot_id");
    h.adjtimex = text("adjtimex");
    int64_t v = 0;
    if (number("exported_unix_us", &v)) h.exported_unix_us = v;
    if (number("utc_offset_s", &v) && v > -86400 && v < 86400) h.utc_offset_s = static_cast<int32_t>(v);
    if (number("realtime_us", &v)) h.realtime_us = v;
    if (number("monotonic_us", &v)) h.monotonic_us = v;
    if (number("boottime_us", &v)) h.boottime_us = v;
    if (f["clock_synchronized"] == "true" && !str["clock_synchronized"]) h.clock_synchronized = true;
    if (f["clock_synchronized"] == "false" && !str["clock_synchronized"]) h.clock_synchronized = false;
    out.record = record;
  } else if (record == "dir") {
    BundleDir& d = out.dir;
    d.path = text("path");
    d.comm = text("comm");
    d.kind = text("kind");
    d.side = text("side");
    int64_t v = 0;
    if (!number("pid", &v) || v <= 0 || v > 0x7fffffff || d.path.empty()) return out;
    d.pid = static_cast<int32_t>(v);
    if (number("device_id", &v) && v >= 0 && v <= ATR_MAX_DEVICE_ID) d.device_id = static_cast<uint32_t>(v);
    if (number("created_unix_us", &v)) d.created_unix_us = v;
    if (number("uid", &v) && v >= 0 && v <= 0xffffffffll) d.uid = static_cast<uint32_t>(v);
    if (number("seq", &v) && v > 0) d.seq = static_cast<uint64_t>(v);
    d.client = text("made_by") == "client";
    namespace p = atraced::proto;
    if (const std::string job = text("job"); p::CheckLabel(p::LabelKind::kJob, job).empty()) d.job = job;
    if (f.count("rank") && !str["rank"] && p::CheckLabel(p::LabelKind::kRank, f["rank"]).empty() && number("rank", &v)) d.rank = v;
    if (f.count("world_size") && !str["world_size"] && p::CheckLabel(p::LabelKind::kWorldSize, f["world_size"]).empty() &&
        number("world_size", &v)) {
      d.world_size = v;
    }
    out.record = record;
  } else if (record == "aged") {
    // The daemon's word as export wrote it, or anything an editor put there: each field checked,
    // a line with one that fails is not one (hang then calls its rank missing, the safe side).
    BundleAged& a = out.aged;
    namespace p = atraced::proto;
    a.dir = text("dir");
    a.job = text("job");
    a.reason = text("reason");
    int64_t v = 0;
    if (a.job.empty() || !p::CheckLabel(p::LabelKind::kJob, a.job).empty()) return out;
    if (!f.count("rank") || str["rank"] || !p::CheckLabel(p::LabelKind::kRank, f["rank"]).empty() || !number("rank", &v)) {
      return out;
    }
    a.rank = v;
    if (std::find(std::begin(kAgedReasons), std::end(kAgedReasons), a.reason) == std::end(kAgedReasons)) return out;
    if (!number("at", &v) || v < 0) return out;
    a.at_us = v;
    if (f.count("world_size") && !str["world_size"] && p::CheckLabel(p::LabelKind::kWorldSize, f["world_size"]).empty() &&
        number("world_size", &v)) {
      a.world_size = v;
    }
    if (number("uid", &v) && v >= 0 && v <= 0xffffffffll) a.uid = static_cast<uint32_t>(v);
    a.exported = f["exported"] == "true" && !str["exported"];
    a.hang = text("by") == "hang";
    out.record = record;
  }
  return out;
}

}  // namespace atracectl
