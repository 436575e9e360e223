// libatrace_client against the real daemon: the happy paths and the refusals.
#include <catch2/catch.hpp>

#include <errno.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "atraced/atrace_client.h"
#include "atraced/atrace_client.hpp"
#include "client_test_util.h"
#include "support/daemon_process.h"

using namespace atraced::testing;
using atrace_test::OpenClient;

namespace {

atrace_event_spec HostEvent(int kind = ATRACE_EVENT_SCHEDULE) { return {kind, ATRACE_SIDE_HOST, 0, nullptr}; }
atrace_file_spec Object(const char* name, int binary = 0) {
  return {ATRACE_FILE_OBJECT, name, binary, 0, 0, 0, nullptr};
}
std::string Base(const std::string& p) { return p.substr(p.rfind('/') + 1); }
std::string Parent(const std::string& p) { return p.substr(0, p.rfind('/')); }

}  // namespace

TEST_CASE("emit (streamed) creates the file with the content and reports its path", "[client]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket());
  auto ev = HostEvent();
  auto f = Object("hccl");
  char path[ATRACE_PATH_MAX];
  const std::string text = "op=allreduce\n";
  REQUIRE(atrace_emit(c, &ev, &f, text.data(), text.size(), 0, path, sizeof path) == 0);
  CHECK(ReadFile(path) == text);
  CHECK(Base(path) == "schedule_tracer_hccl.txt");
  CHECK(Parent(Parent(Parent(path))) == d.trace_dir());
  CHECK(Base(Parent(Parent(path))).find("_" + std::to_string(::getpid()) + "_") != std::string::npos);
  atrace_client_stats s{};
  REQUIRE(atrace_client_get_stats(c, &s) == 0);
  CHECK(s.connects == 1);
  CHECK(s.round_trips == 1);  // the whole event went out in one write and came back once
  atrace_client_close(c);
}

TEST_CASE("emit via the passed descriptor writes the same bytes in two round trips", "[client]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket());
  auto ev = HostEvent();
  auto f = Object("aicpu", 1);
  std::string data(3 * 1024 * 1024 + 7, 'q');
  char path[ATRACE_PATH_MAX];
  REQUIRE(atrace_emit(c, &ev, &f, data.data(), data.size(), ATRACE_EMIT_VIA_FD, path, sizeof path) == 0);
  CHECK(Base(path) == "schedule_tracer_aicpu.bin");
  CHECK(ReadFile(path) == data);
  atrace_client_stats s{};
  atrace_client_get_stats(c, &s);
  CHECK(s.round_trips == 2);
  atrace_status st{};
  REQUIRE(atrace_client_status_ex(c, &st, sizeof st) == 0);
  // Written through the descriptor, so measured from the file: its length exactly, and the
  // blocks it takes in 512-byte units (a compressing file system may need fewer than its length).
  CHECK(st.bytes_apparent == data.size());
  CHECK(st.bytes_written % 512 == 0);
  CHECK(st.bytes_written >= data.size() / 2);
  atrace_status old_layout{};
  old_layout.bytes_apparent = 77;
  REQUIRE(atrace_client_status(c, &old_layout) == 0);
  CHECK(old_layout.bytes_apparent == 77);  // a 0.1.0 caller's struct ends before it
  CHECK(old_layout.bytes_written == st.bytes_written);
  atrace_client_close(c);
}

TEST_CASE("a streamed emit larger than one frame is split into appends", "[client]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket());
  auto ev = HostEvent();
  auto f = Object("big");
  std::string data(2 * 1048568 + 5, 'x');
  char path[ATRACE_PATH_MAX];
  REQUIRE(atrace_emit(c, &ev, &f, data.data(), data.size(), 0, path, sizeof path) == 0);
  CHECK(ReadFile(path).size() == data.size());
  atrace_client_close(c);
}

TEST_CASE("step by step: begin, open, append, fetch the fd, write through it, close, end", "[client]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket());
  atrace_event_spec ev{ATRACE_EVENT_SCHEDULE, ATRACE_SIDE_DEVICE, 3, "20260101000000000000"};
  atrace_event* e = nullptr;
  REQUIRE(atrace_event_begin(c, &ev, &e) == 0);
  CHECK(Base(atrace_event_path(e)) == "schedule_event_" + std::to_string(::getpid()) + "_20260101000000000000");
  atrace_file_spec ts{ATRACE_FILE_TS, nullptr, 0, 3, 0, 0, nullptr};
  atrace_file* f = nullptr;
  REQUIRE(atrace_file_open(e, &ts, &f) == 0);
  CHECK(Base(atrace_file_path(f)) == "schedule_tracer_ts_3.txt");
  REQUIRE(atrace_file_write(f, "streamed;", 9) == 0);
  int fd = -1;
  REQUIRE(atrace_file_get_fd(f, &fd) == 0);
  CHECK(fd >= 0);
  REQUIRE(atrace_file_write(f, "direct", 6) == 0);  // now through the descriptor
  std::string path = atrace_file_path(f);
  uint64_t size = 0;
  REQUIRE(atrace_file_close(f, &size) == 0);
  CHECK(size == 15);
  CHECK(ReadFile(path) == "streamed;direct");
  uint64_t bytes = 0;
  REQUIRE(atrace_event_end(e, &bytes) == 0);
  // The event's disk use: a descriptor was passed, so the file's allocated blocks (whole
  // 512-byte units), not the 15 bytes of its length that the close reported.
  CHECK(bytes % 512 == 0);
  CHECK(bytes < 1024 * 1024);
  atrace_client_close(c);
}

TEST_CASE("ending an event closes its open files, their handles still free cleanly", "[client]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket());
  auto ev = HostEvent(ATRACE_EVENT_STACKCORE);
  atrace_event* e = nullptr;
  REQUIRE(atrace_event_begin(c, &ev, &e) == 0);
  atrace_file_spec sc{ATRACE_FILE_STACKCORE, "myprog", 0, 0, 11, 1234, "20260101000000000000"};
  atrace_file* f = nullptr;
  REQUIRE(atrace_file_open(e, &sc, &f) == 0);
  CHECK(Base(atrace_file_path(f)) == "stackcore_tracer_11_1234_myprog_20260101000000000000.txt");
  REQUIRE(atrace_file_write(f, "bt", 2) == 0);
  REQUIRE(atrace_event_end(e, nullptr) == 0);
  CHECK(atrace_file_write(f, "late", 4) == -EBADF);
  CHECK(atrace_file_close(f, nullptr) == 0);
  atrace_client_close(c);
}

TEST_CASE("refused requests return the daemon's status and message", "[client]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket());
  auto ev = HostEvent();
  auto bad = Object("a/b");
  CHECK(atrace_emit(c, &ev, &bad, "x", 1, 0, nullptr, 0) == -EINVAL);
  CHECK(std::string(atrace_client_last_message(c)).find("object name") != std::string::npos);

  auto too_long = Object("abcdefghijklmnopqrstuvwxyz0123456");  // 33 > 31: the daemon refuses
  CHECK(atrace_emit(c, &ev, &too_long, "x", 1, 0, nullptr, 0) == -ENAMETOOLONG);

  atrace_event_spec host_time{ATRACE_EVENT_SCHEDULE, ATRACE_SIDE_HOST, 0, "20260101000000000000"};
  auto ok = Object("ok");
  CHECK(atrace_emit(c, &host_time, &ok, "x", 1, 0, nullptr, 0) == -EINVAL);
  CHECK(std::string(atrace_client_last_message(c)).find("time") != std::string::npos);

  atrace_event_spec short_time{ATRACE_EVENT_SCHEDULE, ATRACE_SIDE_DEVICE, 0, "2026"};  // refused locally
  CHECK(atrace_emit(c, &short_time, &ok, "x", 1, 0, nullptr, 0) == -EINVAL);
  atrace_event_spec bad_kind{9, ATRACE_SIDE_HOST, 0, nullptr};
  CHECK(atrace_emit(c, &bad_kind, &ok, "x", 1, 0, nullptr, 0) == -EINVAL);
  atrace_event_spec bad_device{ATRACE_EVENT_SCHEDULE, ATRACE_SIDE_DEVICE, 5000, nullptr};
  CHECK(atrace_emit(c, &bad_device, &ok, "x", 1, 0, nullptr, 0) == -EINVAL);

  // The connection is still good after all that.
  char path[ATRACE_PATH_MAX];
  CHECK(atrace_emit(c, &ev, &ok, "fine", 4, 0, path, sizeof path) == 0);
  CHECK(ReadFile(path) == "fine");
  atrace_client_stats s{};
  atrace_client_get_stats(c, &s);
  CHECK(s.connects == 1);
  atrace_client_close(c);
}

TEST_CASE("a too small path buffer is truncated and terminated", "[client]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket());
  auto ev = HostEvent();
  auto f = Object("short");
  char path[8];
  std::memset(path, 'Z', sizeof path);
  REQUIRE(atrace_emit(c, &ev, &f, "x", 1, 0, path, sizeof path) == 0);
  CHECK(std::strlen(path) == 7);
  CHECK(std::string(path) == d.trace_dir().substr(0, 7));
  atrace_client_close(c);
}

TEST_CASE("NULL arguments give -EINVAL and never crash", "[client]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket());
  auto ev = HostEvent();
  auto f = Object("n");
  CHECK(atrace_client_open(nullptr, nullptr) == -EINVAL);
  CHECK(atrace_emit(nullptr, &ev, &f, "x", 1, 0, nullptr, 0) == -EINVAL);
  CHECK(atrace_emit(c, nullptr, &f, "x", 1, 0, nullptr, 0) == -EINVAL);
  CHECK(atrace_emit(c, &ev, nullptr, "x", 1, 0, nullptr, 0) == -EINVAL);
  CHECK(atrace_emit(c, &ev, &f, nullptr, 1, 0, nullptr, 0) == -EINVAL);
  auto no_name = Object(nullptr);
  CHECK(atrace_emit(c, &ev, &no_name, "x", 1, 0, nullptr, 0) == -EINVAL);
  CHECK(atrace_emit_async(nullptr, &ev, &f, "x", 1) == -EINVAL);
  CHECK(atrace_emit_async(c, nullptr, &f, "x", 1) == -EINVAL);
  CHECK(atrace_client_flush(nullptr) == -EINVAL);
  atrace_event* e = reinterpret_cast<atrace_event*>(1);
  CHECK(atrace_event_begin(nullptr, &ev, &e) == -EINVAL);
  CHECK(e == nullptr);  // out parameters are cleared on failure
  CHECK(atrace_event_begin(c, nullptr, &e) == -EINVAL);
  CHECK(atrace_event_begin(c, &ev, nullptr) == -EINVAL);
  CHECK(atrace_event_end(nullptr, nullptr) == -EINVAL);
  atrace_file* file = nullptr;
  CHECK(atrace_file_open(nullptr, &f, &file) == -EINVAL);
  CHECK(atrace_file_write(nullptr, "x", 1) == -EINVAL);
  CHECK(atrace_file_get_fd(nullptr, nullptr) == -EINVAL);
  CHECK(atrace_file_close(nullptr, nullptr) == -EINVAL);
  CHECK(atrace_client_status(nullptr, nullptr) == -EINVAL);
  CHECK(atrace_client_status(c, nullptr) == -EINVAL);
  CHECK(atrace_client_list(c, nullptr, nullptr) == -EINVAL);
  CHECK(atrace_client_vacuum(nullptr, 1, nullptr, nullptr) == -EINVAL);
  CHECK(atrace_client_shares(nullptr, [](const atrace_share*, void*) { return 0; }, nullptr) == -EINVAL);
  CHECK(atrace_client_shares(c, nullptr, nullptr) == -EINVAL);
  CHECK(atrace_client_devices(nullptr, [](const atrace_device_stat*, void*) { return 0; }, nullptr) == -EINVAL);
  CHECK(atrace_client_devices(c, nullptr, nullptr) == -EINVAL);
  CHECK(atrace_client_get_stats(c, nullptr) == -EINVAL);
  CHECK(std::string(atrace_client_last_message(nullptr)).empty());
  CHECK(std::string(atrace_event_path(nullptr)).empty());
  CHECK(std::string(atrace_file_path(nullptr)).empty());
  atrace_client_options_init(nullptr);
  atrace_client_close(nullptr);
  // Nothing above reached the daemon.
  atrace_status st{};
  REQUIRE(atrace_client_status(c, &st) == 0);
  CHECK(st.events_begun == 0);
  atrace_client_close(c);
}

TEST_CASE("strerror names the errors applications see", "[client]") {
  CHECK(std::string(atrace_client_strerror(0)) == "success");
  CHECK(std::string(atrace_client_strerror(-ECONNREFUSED)).find("refused") != std::string::npos);
  CHECK(std::string(atrace_client_strerror(-ETIMEDOUT)).find("timeout") != std::string::npos);
  CHECK(std::string(atrace_client_strerror(-ECONNRESET)).find("lost") != std::string::npos);
  CHECK(std::string(atrace_client_strerror(-99999)) == "unknown error");
  CHECK(std::string(atrace_client_strerror(5)).find("invalid") != std::string::npos);
}

TEST_CASE("status, list and vacuum report what the daemon holds", "[client]") {
  DaemonProcess d;  // record number 10
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket());
  auto host = HostEvent();
  atrace_event_spec dev{ATRACE_EVENT_SCHEDULE, ATRACE_SIDE_DEVICE, 2, nullptr};
  auto ex = HostEvent(ATRACE_EVENT_EXIT);
  auto f = Object("o");
  for (int i = 0; i < 12; ++i) REQUIRE(atrace_emit(c, &host, &f, "hh", 2, 0, nullptr, 0) == 0);
  REQUIRE(atrace_emit(c, &dev, &f, "ddd", 3, 0, nullptr, 0) == 0);
  REQUIRE(atrace_emit(c, &ex, &f, "e", 1, 0, nullptr, 0) == 0);

  atrace_status st{};
  REQUIRE(atrace_client_status(c, &st) == 0);
  CHECK(st.record_num == 10);
  CHECK(st.host_dirs == 10);  // aged down to the limit
  CHECK(st.device_dirs == 1);
  CHECK(st.exit_dirs == 1);
  CHECK(st.events_begun == 14);
  CHECK(st.dirs_aged == 2);
  CHECK(std::string(st.root) == d.root());

  struct Seen {
    int host = 0, device = 0, exit = 0;
    uint64_t bytes = 0, last_seq = 0;
    bool ordered = true;
  } seen;
  REQUIRE(atrace_client_list(
              c,
              [](const atrace_list_entry* e, void* user) {
                auto* s = static_cast<Seen*>(user);
                if (e->kind == ATRACE_EVENT_EXIT) ++s->exit;
                else if (e->side == ATRACE_SIDE_DEVICE) ++s->device;
                else ++s->host;
                s->bytes += e->bytes;
                if (e->seq <= s->last_seq) s->ordered = false;
                s->last_seq = e->seq;
                if (e->pid != ::getpid() || e->uid != ::getuid()) s->ordered = false;
                return 0;
              },
              &seen) == 0);
  CHECK(seen.host == 10);
  CHECK(seen.device == 1);
  CHECK(seen.exit == 1);
  CHECK(seen.bytes == 12 * Blocks(d.trace_dir(), 1));  // a block per file, however small
  CHECK(seen.ordered);

  // A callback's non-zero return stops the walk and is returned.
  int calls = 0;
  CHECK(atrace_client_list(
            c,
            [](const atrace_list_entry*, void* user) {
              ++*static_cast<int*>(user);
              return 42;
            },
            &calls) == 42);
  CHECK(calls == 1);

  int removed = 0;
  CHECK(atrace_client_vacuum(
            c, 1,
            [](const char*, void* user) {
              ++*static_cast<int*>(user);
              return 0;
            },
            &removed) == 0);
  CHECK(removed == 0);  // the limit already holds
  atrace_client_close(c);
}

TEST_CASE("list pages through more entries than one LIST reply holds", "[client]") {
  DaemonProcess d({{"--exit-record-num", "2000"}});  // keep all 1100 exit dirs
  REQUIRE(d.Start());
  atrace_client* c = OpenClient(d.socket(), 5000, 256);
  auto ev = HostEvent(ATRACE_EVENT_EXIT);  // under exit-record-num: none aged
  auto f = Object("p");
  const int n = 1100;  // > 1024, the LIST page size
  for (int i = 0; i < n; ++i) REQUIRE(atrace_emit_async(c, &ev, &f, "x", 1) == 0);
  REQUIRE(atrace_client_flush(c) == 0);
  int count = 0;
  REQUIRE(atrace_client_list(
              c,
              [](const atrace_list_entry*, void* user) {
                ++*static_cast<int*>(user);
                return 0;
              },
              &count) == 0);
  CHECK(count == n);
  atrace_client_close(c);
}

TEST_CASE("the C++ wrapper: RAII handles and std::error_code", "[client]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  std::error_code ec;
  atrace::Client::Options o;
  o.socket_path = d.socket();
  atrace::Client c = atrace::Client::Open(o, ec);
  REQUIRE_FALSE(ec);
  std::string event_path;
  {
    atrace::Event e = c.Begin(atrace::EventSpec{}, ec);
    REQUIRE_FALSE(ec);
    event_path = e.path();
    atrace::File f = e.Open(atrace::FileSpec::Object("raii"), ec);
    REQUIRE_FALSE(ec);
    REQUIRE_FALSE(f.Write("kept\n"));
    // No explicit Close/End: the destructors end the file and then the event.
  }
  CHECK(ReadFile(event_path + "/schedule_tracer_raii.txt") == "kept\n");
  atrace_status st{};
  REQUIRE_FALSE(c.Status(&st));
  CHECK(st.events_begun == 1);

  std::string path;
  CHECK(c.Emit(atrace::EventSpec{}, atrace::FileSpec::Object("bad/name"), "x", &path) == std::errc::invalid_argument);
  CHECK(c.last_message().find("object name") != std::string::npos);
  std::vector<atrace::ListEntry> entries;
  REQUIRE_FALSE(c.List(&entries));
  CHECK(entries.size() == 1);  // the RAII event: the refused one left no directory (issue 23)
  std::vector<std::string> removed{"stale"};
  REQUIRE_FALSE(c.Vacuum(true, &removed));
  CHECK(removed.empty());

  o.socket_path = d.tmp() / "nobody.sock";
  atrace::Client absent = atrace::Client::Open(o, ec);
  CHECK(ec == std::errc::no_such_file_or_directory);
  CHECK_FALSE(absent);
}
