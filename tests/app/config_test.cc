// Command line and configuration file: keys mirror flags, flags win, bad values are
// refused with the key and the allowed range (exit code 2 in the daemon).
#include <catch2/catch.hpp>

#include "atraced/proto/wire.h"

#include <fstream>
#include <string>
#include <vector>

#include "atraced/app/config.h"
#include "support/temp_dir.h"

using namespace atraced;
using Outcome = ParsedCommandLine::Outcome;

namespace {
ParsedCommandLine Parse(std::vector<std::string> args) {
  std::vector<const char*> argv{"atraced"};
  for (auto& a : args) argv.push_back(a.c_str());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data());
}
}  // namespace

TEST_CASE("no arguments run on the embedded defaults", "[config]") {
  auto p = Parse({});
  REQUIRE(p.outcome == Outcome::kRun);
  CHECK_FALSE(p.config.root);
  CHECK_FALSE(p.config.socket_path);
  CHECK_FALSE(p.config.record_num);
  CHECK(p.config.idle_timeout_s == 60);
}

TEST_CASE("help and version exit successfully", "[config]") {
  auto h = Parse({"--help"});
  CHECK(h.outcome == Outcome::kExitSuccess);
  CHECK(h.output.find("--record-num") != std::string::npos);
  auto v = Parse({"--version"});
  CHECK(v.outcome == Outcome::kExitSuccess);
  CHECK(v.output.find("atraced 0.1.0") != std::string::npos);
  // The protocol it speaks, from wire.h: it said 1.0 while the daemon spoke 1.1.
  CHECK(v.output == "atraced 0.1.0 (protocol " + std::to_string(ATR_VERSION_MAJOR) + "." +
                        std::to_string(ATR_VERSION_MINOR) + ")");
  CHECK(v.output.find("protocol 1.1") != std::string::npos);
}

TEST_CASE("flags are parsed", "[config]") {
  auto p = Parse({"--root", "/r", "--socket", "/s.sock", "--record-num", "15", "--log-level", "debug"});
  REQUIRE(p.outcome == Outcome::kRun);
  CHECK(p.config.root == "/r");
  CHECK(p.config.socket_path == "/s.sock");
  CHECK(p.config.record_num == 15u);
  CHECK(p.config.log_level == LogLevel::kDebug);
  CHECK(p.config.uid_descriptor_share == 25u);  // the default
  CHECK(Parse({"--uid-descriptor-share", "50"}).config.uid_descriptor_share == 50u);
  CHECK(p.config.exit_record_num == 100u);  // the default
  CHECK(Parse({"--exit-record-num", "10"}).config.exit_record_num == 10u);
  CHECK(Parse({"--exit-record-num", "100000"}).config.exit_record_num == 100000u);
  CHECK(p.config.crash_all_threads == 0u);  // the defaults
  CHECK(p.config.crash_unwind_timeout_ms == 2000u);
  CHECK(Parse({"--crash-all-threads", "1"}).config.crash_all_threads == 1u);
  CHECK(Parse({"--crash-unwind-timeout-ms", "100"}).config.crash_unwind_timeout_ms == 100u);
}

TEST_CASE("bad flag values name the key and the range", "[config]") {
  auto [args, needle] = GENERATE(table<std::vector<std::string>, std::string>({
      {{"--record-num", "9"}, "invalid value [9] for record-num: expected an integer in [10, 1000]"},
      {{"--record-num", "abc"}, "for record-num: expected an integer in [10, 1000]"},
      {{"--record-num", "1001"}, "for record-num"},
      {{"--log-level", "loud"}, "invalid value [loud] for log-level: expected one of error, warning"},
      {{"--idle-timeout", "0"}, "for idle-timeout: expected an integer in [1, 86400]"},
      {{"--max-clients", "-1"}, "for max-clients"},
      {{"--uid-descriptor-share", "0"}, "invalid value [0] for uid-descriptor-share: expected an integer in [1, 100]"},
      {{"--uid-descriptor-share", "101"}, "for uid-descriptor-share: expected an integer in [1, 100]"},
      {{"--exit-record-num", "9"}, "invalid value [9] for exit-record-num: expected an integer in [10, 100000]"},
      {{"--exit-record-num", "100001"}, "for exit-record-num: expected an integer in [10, 100000]"},
      {{"--exit-record-num", "1e3"}, "for exit-record-num"},
      {{"--crash-all-threads", "2"}, "invalid value [2] for crash-all-threads: expected an integer in [0, 1]"},
      {{"--crash-unwind-timeout-ms", "99"}, "for crash-unwind-timeout-ms: expected an integer in [100, 10000]"},
      {{"--crash-unwind-timeout-ms", "10001"}, "for crash-unwind-timeout-ms"},
      {{"--socket", std::string(120, 's')}, "for socket: expected a path of 1-107 bytes"},
      {{"--root", ""}, "for root"},
      {{"--bogus"}, "unrecognised option '--bogus'"},
      {{"--record-num"}, "record-num"},
      {{"--config", "/nonexistent/atraced.conf"}, "cannot read configuration file /nonexistent/atraced.conf"},
  }));
  auto p = Parse(args);
  CAPTURE(args, p.output);
  CHECK(p.outcome == Outcome::kUsageError);
  CHECK(p.output.find(needle) != std::string::npos);
}

TEST_CASE("the configuration file sets keys and flags override it", "[config]") {
  atraced::testing::TempDir tmp;
  atraced::testing::WriteFile(tmp / "a.conf", "# comment\nroot = /from/file\nrecord-num = 50\nsocket = /file.sock\nidle-timeout = 5\nexit-record-num = 20\n");
  auto p = Parse({"--config", tmp / "a.conf", "--socket", "/flag.sock"});
  REQUIRE(p.outcome == Outcome::kRun);
  CHECK(p.config.configured_root == "/from/file");
  CHECK_FALSE(p.config.root);  // a file root ranks below ASCEND_WORK_PATH, so it is kept apart
  CHECK(p.config.configured_record_num == 50u);
  CHECK_FALSE(p.config.record_num);
  CHECK(p.config.socket_path == "/flag.sock");
  CHECK(p.config.idle_timeout_s == 5);
  CHECK(p.config.exit_record_num == 20u);
  CHECK(Parse({"--config", tmp / "a.conf", "--exit-record-num", "30"}).config.exit_record_num == 30u);
}

TEST_CASE("bad configuration file values name the file and key", "[config]") {
  atraced::testing::TempDir tmp;
  auto [text, needle] = GENERATE(table<std::string, std::string>({
      {"record-num = 5\n", "invalid value [5] for record-num"},
      {"colour = blue\n", "unknown key 'colour'"},
      {"max-events-per-client = 5000\n", "for max-events-per-client: expected an integer in [1, 4096]"},
      {"forwarder-group =\n", "a group name must not be empty"},
      {"uid-descriptor-share = 25%\n", "invalid value [25%] for uid-descriptor-share"},
      {"exit-record-num = 0\n", "invalid value [0] for exit-record-num"},
  }));
  atraced::testing::WriteFile(tmp / "bad.conf", text);
  auto p = Parse({"--config", tmp / "bad.conf"});
  CAPTURE(text, p.output);
  CHECK(p.outcome == Outcome::kUsageError);
  CHECK(p.output.find(tmp / "bad.conf") != std::string::npos);
  CHECK(p.output.find(needle) != std::string::npos);
}

TEST_CASE("a mistyped flag is answered with the flag it is close to", "[config]") {
  auto typo = Parse({"--recrd-num", "20"});
  CHECK(typo.outcome == Outcome::kUsageError);
  CHECK(typo.output == "atraced: unrecognised option '--recrd-num'; did you mean '--record-num'?\nTry 'atraced --help'.");
  auto far = Parse({"--colour", "blue"});
  CHECK(far.outcome == Outcome::kUsageError);
  CHECK(far.output == "atraced: unrecognised option '--colour'\nTry 'atraced --help'.");
}

// Issue 23's errors table: a user reads which line is wrong and what was expected there.
TEST_CASE("every configuration file error names its line and what was expected", "[config][lines]") {
  atraced::testing::TempDir tmp;
  auto [text, says] = GENERATE(table<std::string, std::string>({
      {"record-num 20\n", ":1: expected 'key = value', got 'record-num 20'"},
      {"# the main part\n[main]\nrecord-num = 20\n",
       ":2: sections such as '[main]' are not supported: write each setting as 'key = value' at the top level"},
      {"record-num = 20\n\n  colour = blue  # a comment\n", ":3: unknown key 'colour' (atraced.conf(5) lists the keys; in the source, docs/man/atraced.conf.5.md)"},
      {"record-num = 20\nsocket = /a.sock\nrecord-num = 30\n", ":3: record-num is already set on line 1"},
      {"idle-timeout = 5\nexit-record-num = 9\n", ":2: invalid value [9] for exit-record-num: expected an integer in [10, 100000]"},
      {"= 5\n", ":1: expected 'key = value', got '= 5'"},
      {"recrd-num = 20\n", ":1: unknown key 'recrd-num'; did you mean 'record-num'? (atraced.conf(5) lists the keys; in the source, docs/man/atraced.conf.5.md)"},
      {"help = 1\n", ":1: unknown key 'help' (atraced.conf(5) lists the keys; in the source, docs/man/atraced.conf.5.md)"},  // a flag, not a setting
  }));
  atraced::testing::WriteFile(tmp / "bad.conf", text);
  auto p = Parse({"--config", tmp / "bad.conf"});
  CAPTURE(text);
  CHECK(p.outcome == Outcome::kUsageError);
  CHECK(p.output == "atraced: " + (tmp / "bad.conf") + says);
}

TEST_CASE("a configuration file that cannot be read says why", "[config][lines]") {
  atraced::testing::TempDir tmp;
  auto p = Parse({"--config", tmp / "missing.conf"});
  CHECK(p.outcome == Outcome::kUsageError);
  CHECK(p.output == "atraced: cannot read configuration file " + (tmp / "missing.conf") + ": No such file or directory");
  auto d = Parse({"--config", tmp.path()});  // a directory
  CHECK(d.outcome == Outcome::kUsageError);
  CHECK(d.output == "atraced: cannot read configuration file " + tmp.path() + ": Is a directory");
}

TEST_CASE("the shipped conf/atraced.conf parses and documents every key", "[config]") {
  std::string text = atraced::testing::ReadFile(std::string(ATRACED_SOURCE_DIR) + "/conf/atraced.conf");
  REQUIRE_FALSE(text.empty());
  Config c;
  CHECK(ParseConfigText(text, "conf/atraced.conf", &c) == "");
  for (const char* key : {"root", "socket", "record-num", "log-level", "socket-group", "forwarder-group",
                          "idle-timeout", "max-clients", "max-events-per-client", "max-files-per-client",
                          "uid-descriptor-share", "exit-record-num", "crash-all-threads", "crash-unwind-timeout-ms",
                          "hang-timeout", "hang-watch-unlabelled", "hang-dumps-per-hour", "dump-keep"}) {
    CAPTURE(key);
    // Documented with its default, commented out, or set (socket-group = atrace).
    CHECK((text.find(std::string("# ") + key + " =") != std::string::npos ||
           text.find(std::string("\n") + key + " =") != std::string::npos));
  }
}

TEST_CASE("option text containing Boost placeholders is reported, not looped on", "[config]") {
  // Boost 1.74 formats these errors in a loop that never ends; the parser must not use it.
  auto p = Parse({"--%canonical_option%"});
  CHECK(p.outcome == Outcome::kUsageError);
  CHECK(p.output.find("unrecognised option '--?canonical_option?'") != std::string::npos);
  Config c;
  for (const char* text : {"%canonical_option% = 1\n", "%option% = %value%\n", "root\n%prefix%\n"}) {
    CAPTURE(text);
    std::string err = ParseConfigText(text, "x.conf", &c);
    CHECK(err.rfind("x.conf:1: ", 0) == 0);
    CHECK(err.find('%') == std::string::npos);
  }
}

TEST_CASE("retention and rate-limit keys are parsed with journald's units", "[config]") {
  auto d = Parse({});
  REQUIRE(d.outcome == Outcome::kRun);
  CHECK_FALSE(d.config.retention.max_use);  // journald's defaults, resolved against the disk
  CHECK_FALSE(d.config.retention.keep_free);
  CHECK(d.config.retention.policy == AgingPolicy::kFifo);
  CHECK(d.config.retention.max_age.count() == 0);
  CHECK(d.config.rate_limit.interval == std::chrono::seconds(30));
  CHECK(d.config.rate_limit.burst == 10000u);
  CHECK(d.config.max_bytes_per_client == 0u);

  auto p = Parse({"--max-use", "2G", "--keep-free", "20%", "--aging-policy", "fair", "--max-age", "7d",
                  "--rate-limit-interval", "500ms", "--rate-limit-burst", "0", "--max-bytes-per-client", "64M"});
  REQUIRE(p.outcome == Outcome::kRun);
  CHECK(p.config.retention.max_use == SizeSpec{2ull << 30, false});
  CHECK(p.config.retention.keep_free == SizeSpec{20, true});
  CHECK(p.config.retention.policy == AgingPolicy::kFair);
  CHECK(p.config.retention.max_age == std::chrono::hours(24 * 7));
  CHECK(p.config.rate_limit.interval == std::chrono::milliseconds(500));
  CHECK_FALSE(p.config.rate_limit.enabled());
  CHECK(p.config.max_bytes_per_client == 64u << 20);

  testing::TempDir dir;
  std::string path = dir.path() + "/a.conf";
  {
    std::ofstream out(path);
    out << "max-use = 100M\nkeep-free = 1G\nmax-age = 12h\nrate-limit-burst = 5\n";
  }
  auto f = Parse({"--config", path, "--max-use", "200M"});
  REQUIRE(f.outcome == Outcome::kRun);
  CHECK(f.config.retention.max_use == SizeSpec{200u << 20, false});  // the flag wins
  CHECK(f.config.retention.keep_free == SizeSpec{1u << 30, false});
  CHECK(f.config.retention.max_age == std::chrono::hours(12));
  CHECK(f.config.rate_limit.burst == 5u);
}

TEST_CASE("bad retention values name the key and what is allowed", "[config]") {
  auto [args, needle] = GENERATE(table<std::vector<std::string>, std::string>({
      {{"--max-use", "10X"}, "invalid value [10X] for max-use: expected bytes with an optional K, M, G or T, or a percentage"},
      {{"--max-use", "101%"}, "for max-use"},
      {{"--max-use", "-1"}, "for max-use"},
      {{"--keep-free", "1.5G"}, "invalid value [1.5G] for keep-free"},
      {{"--aging-policy", "lifo"}, "invalid value [lifo] for aging-policy: expected fifo or fair"},
      {{"--max-age", "7w"}, "invalid value [7w] for max-age: expected a time span like 500ms, 30s"},
      {{"--max-age", "1500ms"}, "for max-age: expected whole seconds"},
      {{"--max-age", "99999d"}, "for max-age"},
      {{"--rate-limit-interval", "s"}, "for rate-limit-interval"},
      {{"--rate-limit-interval", "2d"}, "for rate-limit-interval"},
      {{"--rate-limit-burst", "1000000001"}, "for rate-limit-burst: expected an integer in [0, 1000000000]"},
      {{"--max-bytes-per-client", "10%"}, "invalid value [10%] for max-bytes-per-client: expected bytes with an optional K, M, G or T"},
  }));
  auto p = Parse(args);
  CHECK(p.outcome == Outcome::kUsageError);
  CHECK(p.output.find(needle) != std::string::npos);
}

TEST_CASE("the hang watch's keys: defaults, spans, and a bad value named with its key", "[config][hang]") {
  const Config defaults = Parse({}).config;
  CHECK(defaults.hang.timeout == std::chrono::seconds(300));
  CHECK_FALSE(defaults.hang.watch_unlabelled);
  CHECK(defaults.hang.dumps_per_hour == 64u);
  CHECK(defaults.dump_keep == std::chrono::hours(24));

  atraced::testing::TempDir tmp;
  atraced::testing::WriteFile(tmp / "h.conf", "hang-timeout = 5min\nhang-watch-unlabelled = 1\nhang-dumps-per-hour = 12\n"
                                              "dump-keep = 2h\n");
  auto p = Parse({"--config", tmp / "h.conf"});
  REQUIRE(p.outcome == Outcome::kRun);
  CHECK(p.config.hang.timeout == std::chrono::minutes(5));
  CHECK(p.config.hang.watch_unlabelled);
  CHECK(p.config.hang.dumps_per_hour == 12u);
  CHECK(p.config.dump_keep == std::chrono::hours(2));
  // The flag wins over the file; 0 turns the watch off.
  CHECK(Parse({"--config", tmp / "h.conf", "--hang-timeout", "0"}).config.hang.timeout.count() == 0);
  CHECK(Parse({"--hang-timeout", "2s"}).config.hang.timeout == std::chrono::seconds(2));

  auto [args, needle] = GENERATE(table<std::vector<std::string>, std::string>({
      {{"--hang-timeout", "5 min"}, "invalid value [5 min] for hang-timeout"},
      {{"--hang-timeout", "-1"}, "invalid value [-1] for hang-timeout"},
      {{"--hang-timeout", "8d"}, "invalid value [8d] for hang-timeout: expected a time span like 500ms"},
      // Past 7d, and past what a span holds at all: refused by name, never clamped or wrapped.
      {{"--hang-timeout", "604800001ms"}, "invalid value [604800001ms] for hang-timeout: expected a time span like 500ms, 30s, 5min, 12h or 7d, at most 7d"},
      {{"--hang-timeout", "106751991167301d"}, "invalid value [106751991167301d] for hang-timeout"},
      {{"--hang-timeout", "99999999999999999999s"}, "invalid value [99999999999999999999s] for hang-timeout"},
      {{"--hang-watch-unlabelled", "yes"}, "invalid value [yes] for hang-watch-unlabelled"},
      {{"--hang-dumps-per-hour", "0"}, "invalid value [0] for hang-dumps-per-hour: expected an integer in [1, 100000]"},
      {{"--dump-keep", "1500ms"}, "invalid value [1500ms] for dump-keep: expected whole seconds"},
  }));
  auto bad = Parse(args);
  CAPTURE(bad.output);
  CHECK(bad.outcome == Outcome::kUsageError);
  CHECK(bad.output.find(needle) != std::string::npos);
}

TEST_CASE("time spans", "[config]") {
  CHECK(ParseTimeSpan("0") == std::chrono::milliseconds(0));
  CHECK(ParseTimeSpan("45") == std::chrono::seconds(45));
  CHECK(ParseTimeSpan("5min") == std::chrono::minutes(5));
  CHECK(ParseTimeSpan("2h") == std::chrono::hours(2));
  CHECK_FALSE(ParseTimeSpan(""));
  CHECK_FALSE(ParseTimeSpan("min"));
  CHECK_FALSE(ParseTimeSpan("5 min"));
  CHECK_FALSE(ParseTimeSpan("99999999999999999999d"));
  CHECK_FALSE(ParseTimeSpan("9999999999999999d"));
}
