// The double's own semantics, as device-channel.md §2.3 describes the driver's: one send is
// one receive, the wait modes, SOCKET_CLOSE, the session attributes, the refusals.
#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <thread>

#include "fake_device_process.h"
#include "mini_host.h"

using namespace mini_host;
using Clock = std::chrono::steady_clock;

namespace {

long MsSince(Clock::time_point start) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

// A device server and one host session to it, both in this process.
struct Pair {
  explicit Pair(int dev = 0) {
    REQUIRE(drvHdcServerCreate(dev, HDC_SERVICE_TYPE_BBOX, &server) == DRV_ERROR_NONE);
    REQUIRE(drvHdcClientCreate(&client, 96, HDC_SERVICE_TYPE_BBOX, 0) == DRV_ERROR_NONE);
    REQUIRE(drvHdcSessionConnect(0, dev, client, &host) == DRV_ERROR_NONE);
    REQUIRE(drvHdcSessionAccept(server, &device) == DRV_ERROR_NONE);
  }
  ~Pair() {
    if (host != nullptr) drvHdcSessionClose(host);
    drvHdcSessionClose(device);
    drvHdcClientDestroy(client);
    drvHdcServerDestroy(server);
  }
  HDC_SERVER server = nullptr;
  HDC_CLIENT client = nullptr;
  HDC_SESSION host = nullptr;
  HDC_SESSION device = nullptr;
};

std::string Recv(HDC_SESSION s, drvError_t* rc, UINT64 flag = 0, UINT32 timeout = 0) {
  std::string out;
  *rc = channel::RecvOne(s, &out, flag, timeout);
  return out;
}

}  // namespace

TEST_CASE("platform, device count and capacity come from the environment") {
  SocketDir dir;
  uint32_t value = 99;
  {
    ScopedEnv no_dir("ATRACE_HAL_DOUBLE_DIR", "");
    REQUIRE(drvGetDevNum(&value) == DRV_ERROR_NONE);
    CHECK(value == 0);  // no socket dir: no device
  }
  ScopedEnv env("ATRACE_HAL_DOUBLE_DIR", dir.path());
  REQUIRE(drvGetPlatformInfo(&value) == DRV_ERROR_NONE);
  CHECK(value == 1);
  REQUIRE(drvGetDevNum(&value) == DRV_ERROR_NONE);
  CHECK(value == 1);
  {
    ScopedEnv p("ATRACE_HAL_DOUBLE_PLATFORM", "0");
    ScopedEnv n("ATRACE_HAL_DOUBLE_DEVNUM", "4");
    REQUIRE(drvGetPlatformInfo(&value) == DRV_ERROR_NONE);
    CHECK(value == 0);
    REQUIRE(drvGetDevNum(&value) == DRV_ERROR_NONE);
    CHECK(value == 4);
  }
  {
    ScopedEnv n("ATRACE_HAL_DOUBLE_DEVNUM", "not-support");
    CHECK(drvGetDevNum(&value) == DRV_ERROR_NOT_SUPPORT);
  }
  drvHdcCapacity capacity{};
  REQUIRE(drvHdcGetCapacity(&capacity) == DRV_ERROR_NONE);
  CHECK(capacity.maxSegment == 524288);
  ScopedEnv seg("ATRACE_HAL_DOUBLE_MAX_SEGMENT", "4096");
  REQUIRE(drvHdcGetCapacity(&capacity) == DRV_ERROR_NONE);
  CHECK(capacity.maxSegment == 4096);
}

TEST_CASE("connecting where no device listens fails at once") {
  SocketDir dir;
  HDC_CLIENT client = nullptr;
  HDC_SESSION session = nullptr;
  REQUIRE(drvHdcClientCreate(&client, 96, HDC_SERVICE_TYPE_BBOX, 0) == DRV_ERROR_NONE);
  {
    ScopedEnv no_dir("ATRACE_HAL_DOUBLE_DIR", "");
    CHECK(drvHdcSessionConnect(0, 0, client, &session) == DRV_ERROR_NO_DEVICE);
  }
  ScopedEnv env("ATRACE_HAL_DOUBLE_DIR", dir.path());
  const auto start = Clock::now();
  CHECK(drvHdcSessionConnect(0, 0, client, &session) == DRV_ERROR_SOCKET_CONNECT);  // no socket file
  // A socket file nobody listens on (a device that died without cleaning up).
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = dir.path() + "/hdc-dev0-svc7.sock";
  std::strcpy(addr.sun_path, path.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  CHECK(drvHdcSessionConnect(0, 0, client, &session) == DRV_ERROR_SOCKET_CONNECT);
  ::close(fd);
  CHECK(MsSince(start) < 1000);
  CHECK(drvHdcSessionConnect(0, 1024, client, &session) == DRV_ERROR_INVALID_DEVICE);
  CHECK(drvHdcClientDestroy(client) == DRV_ERROR_NONE);
}

TEST_CASE("one halHdcSend is one halHdcRecv, whole, up to maxSegment") {
  SocketDir dir;
  ScopedEnv env("ATRACE_HAL_DOUBLE_DIR", dir.path());
  Pair pair;
  const std::string big(524288, 'x');
  drvError_t rc = 0;
  // The reader runs while the sender writes: the big message does not fit the socket's buffer.
  std::thread reader([&] {
    drvError_t r = 0;
    CHECK(Recv(pair.device, &r) == "a");
    CHECK(Recv(pair.device, &r).size() == 1000);
    CHECK(Recv(pair.device, &r) == big);
    CHECK(Recv(pair.device, &r) == "tail");
    CHECK(r == DRV_ERROR_NONE);
  });
  for (const std::string& m : {std::string("a"), std::string(1000, 'b'), big, std::string("tail")}) {
    CHECK(channel::SendOne(pair.host, m) == DRV_ERROR_NONE);
  }
  reader.join();
  // And the other way, the device to the host.
  REQUIRE(channel::SendOne(pair.device, "reply") == DRV_ERROR_NONE);
  CHECK(Recv(pair.host, &rc) == "reply");
  CHECK(rc == DRV_ERROR_NONE);
}

TEST_CASE("a send over maxSegment is refused, and the session stays usable") {
  SocketDir dir;
  ScopedEnv env("ATRACE_HAL_DOUBLE_DIR", dir.path());
  ScopedEnv seg("ATRACE_HAL_DOUBLE_MAX_SEGMENT", "2048");
  Pair pair;
  CHECK(channel::SendOne(pair.host, std::string(2049, 'x')) == DRV_ERROR_INVALID_VALUE);
  REQUIRE(channel::SendOne(pair.host, std::string(2048, 'y')) == DRV_ERROR_NONE);
  drvError_t rc = 0;
  CHECK(Recv(pair.device, &rc) == std::string(2048, 'y'));
}

TEST_CASE("wait modes: NOWAIT, WAIT_TIMEOUT (which wins over NOWAIT), and a wait for data") {
  SocketDir dir;
  ScopedEnv env("ATRACE_HAL_DOUBLE_DIR", dir.path());
  Pair pair;
  drvError_t rc = 0;
  auto start = Clock::now();
  Recv(pair.host, &rc, HDC_FLAG_NOWAIT);
  CHECK(rc == DRV_ERROR_NON_BLOCK);
  CHECK(MsSince(start) < 1000);  // returned, not waited: any wait here is for data that never comes
  start = Clock::now();
  Recv(pair.host, &rc, HDC_FLAG_WAIT_TIMEOUT, 300);
  CHECK(rc == DRV_ERROR_WAIT_TIMEOUT);
  CHECK(MsSince(start) >= 290);
  CHECK(MsSince(start) < 5000);
  start = Clock::now();
  Recv(pair.host, &rc, HDC_FLAG_WAIT_TIMEOUT | HDC_FLAG_NOWAIT, 200);
  CHECK(rc == DRV_ERROR_WAIT_TIMEOUT);
  CHECK(MsSince(start) >= 190);
  // Flag 0 waits as long as it takes.
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    channel::SendOne(pair.device, "late");
  });
  CHECK(Recv(pair.host, &rc, 0, 0) == "late");
  CHECK(rc == DRV_ERROR_NONE);
  later.join();
}

TEST_CASE("the peer closing is SOCKET_CLOSE and STATUS CLOSE, and a close wakes a blocked receive") {
  SocketDir dir;
  ScopedEnv env("ATRACE_HAL_DOUBLE_DIR", dir.path());
  Pair pair;
  int status = 0;
  REQUIRE(halHdcGetSessionAttr(pair.device, HDC_SESSION_ATTR_STATUS, &status) == DRV_ERROR_NONE);
  CHECK(status == HDC_SESSION_STATUS_CONNECT);
  REQUIRE(channel::SendOne(pair.host, "last words") == DRV_ERROR_NONE);
  REQUIRE(drvHdcSessionClose(pair.host) == DRV_ERROR_NONE);
  pair.host = nullptr;
  REQUIRE(halHdcGetSessionAttr(pair.device, HDC_SESSION_ATTR_STATUS, &status) == DRV_ERROR_NONE);
  CHECK(status == HDC_SESSION_STATUS_CLOSE);
  drvError_t rc = 0;
  CHECK(Recv(pair.device, &rc) == "last words");  // what was sent before the close still arrives
  Recv(pair.device, &rc);
  CHECK(rc == DRV_ERROR_SOCKET_CLOSE);
  CHECK(channel::SendOne(pair.device, "x") == DRV_ERROR_SOCKET_CLOSE);

  Pair second;
  std::thread blocked([&] {
    drvError_t r = 0;
    Recv(second.host, &r, 0, 0);
    CHECK(r == DRV_ERROR_SOCKET_CLOSE);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(drvHdcSessionClose(second.host) == DRV_ERROR_NONE);
  blocked.join();
  second.host = nullptr;
  CHECK(drvHdcSessionClose(second.host) == DRV_ERROR_INVALID_VALUE);
}

TEST_CASE("PEER_CREATE_PID is the connecting process, DEV_ID the device") {
  SocketDir dir;
  ScopedEnv env("ATRACE_HAL_DOUBLE_DIR", dir.path());
  HDC_SERVER server = nullptr;
  REQUIRE(drvHdcServerCreate(3, HDC_SERVICE_TYPE_BBOX, &server) == DRV_ERROR_NONE);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    Link link;
    if (link.Open(3) != DRV_ERROR_NONE) std::_Exit(1);
    int dev = -1;
    if (halHdcGetSessionAttr(link.session(), HDC_SESSION_ATTR_DEV_ID, &dev) != DRV_ERROR_NONE || dev != 3) std::_Exit(2);
    std::string reply;
    if (channel::RecvOne(link.session(), &reply, HDC_FLAG_WAIT_TIMEOUT, 5000) != DRV_ERROR_NONE) std::_Exit(3);
    std::_Exit(reply == "bye" ? 0 : 4);
  }
  HDC_SESSION session = nullptr;
  REQUIRE(drvHdcSessionAccept(server, &session) == DRV_ERROR_NONE);
  int value = -1;
  REQUIRE(halHdcGetSessionAttr(session, HDC_SESSION_ATTR_PEER_CREATE_PID, &value) == DRV_ERROR_NONE);
  CHECK(value == child);
  REQUIRE(halHdcGetSessionAttr(session, HDC_SESSION_ATTR_LOCAL_CREATE_PID, &value) == DRV_ERROR_NONE);
  CHECK(value == ::getpid());
  REQUIRE(halHdcGetSessionAttr(session, HDC_SESSION_ATTR_DEV_ID, &value) == DRV_ERROR_NONE);
  CHECK(value == 3);
  CHECK(halHdcGetSessionAttr(session, HDC_SESSION_ATTR_VFID, &value) == DRV_ERROR_NOT_SUPPORT);
  REQUIRE(channel::SendOne(session, "bye") == DRV_ERROR_NONE);
  int status = -1;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  drvHdcSessionClose(session);
  drvHdcServerDestroy(server);
}

TEST_CASE("message heads: count 1 only, the driver allocates receive buffers, reuse frees them") {
  SocketDir dir;
  ScopedEnv env("ATRACE_HAL_DOUBLE_DIR", dir.path());
  Pair pair;
  drvHdcMsg* msg = nullptr;
  CHECK(drvHdcAllocMsg(pair.host, &msg, 2) == DRV_ERROR_INVALID_VALUE);
  REQUIRE(drvHdcAllocMsg(pair.host, &msg, 1) == DRV_ERROR_NONE);
  char own[4] = {'a', 'b', 'c', 'd'};
  REQUIRE(drvHdcAddMsgBuffer(msg, own, 4) == DRV_ERROR_NONE);
  int count = 0;
  CHECK(halHdcRecv(pair.host, msg, 0, HDC_FLAG_NOWAIT, &count, 0) == DRV_ERROR_INVALID_VALUE);  // pBuf not NULL
  REQUIRE(halHdcSend(pair.host, msg, 0, 0) == DRV_ERROR_NONE);
  REQUIRE(drvHdcReuseMsg(msg) == DRV_ERROR_NONE);  // the caller's buffer is not freed
  CHECK(msg->bufList[0].pBuf == nullptr);
  drvHdcMsg* in = nullptr;
  REQUIRE(drvHdcAllocMsg(pair.device, &in, 1) == DRV_ERROR_NONE);
  REQUIRE(halHdcRecv(pair.device, in, 0, HDC_FLAG_WAIT_TIMEOUT, &count, 1000) == DRV_ERROR_NONE);
  CHECK(count == 1);
  char* buf = nullptr;
  int len = 0;
  REQUIRE(drvHdcGetMsgBuffer(in, 0, &buf, &len) == DRV_ERROR_NONE);
  CHECK(std::string(buf, static_cast<size_t>(len)) == "abcd");
  CHECK(drvHdcGetMsgBuffer(in, 1, &buf, &len) == DRV_ERROR_INVALID_VALUE);
  REQUIRE(drvHdcReuseMsg(in) == DRV_ERROR_NONE);  // frees the driver's buffer (ASan would see a leak)
  REQUIRE(channel::SendOne(pair.host, "again") == DRV_ERROR_NONE);
  REQUIRE(halHdcRecv(pair.device, in, 0, 0, &count, 0) == DRV_ERROR_NONE);
  REQUIRE(drvHdcFreeMsg(in) == DRV_ERROR_NONE);  // frees head and buffer
  REQUIRE(drvHdcFreeMsg(msg) == DRV_ERROR_NONE);
  CHECK(drvHdcFreeMsg(msg) == DRV_ERROR_INVALID_VALUE);
}

TEST_CASE("a client with an open session cannot be destroyed") {
  SocketDir dir;
  ScopedEnv env("ATRACE_HAL_DOUBLE_DIR", dir.path());
  Pair pair;
  CHECK(drvHdcClientDestroy(pair.client) == DRV_ERROR_CLIENT_BUSY);
}

TEST_CASE("the full double exports the 15 host functions, the partial variant only the two platform ones") {
  const char* host_functions[] = {"drvGetPlatformInfo", "drvGetDevNum", "drvHdcClientCreate", "drvHdcClientDestroy",
                                  "drvHdcSessionConnect", "drvHdcSetSessionReference", "drvHdcSessionClose",
                                  "drvHdcGetCapacity", "drvHdcAllocMsg", "drvHdcFreeMsg", "drvHdcReuseMsg",
                                  "drvHdcAddMsgBuffer", "drvHdcGetMsgBuffer", "halHdcSend", "halHdcRecv"};
  using atraced::hal_double::testing::HalDoubleLibDir;
  using atraced::hal_double::testing::HalDoublePartialLibDir;
  // The partial one first, by path, RTLD_LOCAL: this process already has the full one
  // loaded under the same soname, which dlopen of that name alone would return.
  void* partial = ::dlopen((HalDoublePartialLibDir() + "/libascend_hal.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(partial != nullptr);
  int found = 0;
  for (const char* name : host_functions) found += ::dlsym(partial, name) != nullptr ? 1 : 0;
  CHECK(found == 2);
  CHECK(::dlsym(partial, "halHdcRecv") == nullptr);
  void* full = ::dlopen((HalDoubleLibDir() + "/libascend_hal.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(full != nullptr);
  for (const char* name : host_functions) {
    INFO(name);
    CHECK(::dlsym(full, name) != nullptr);
  }
  ::dlclose(full);
  ::dlclose(partial);
}
