// The NPU driver's functions the device channel uses, found in libascend_hal.so at run time.
//
// No link-time dependency: a CPU-only host has no driver, and the library must load there
// and pay nothing. The driver is opened on the first AtraceReportStart and never closed (a
// receive thread may be inside it). The signatures are the driver's C ones
// (../shared/reference/device-channel.md §2.1), restated here so the build needs no driver
// headers.
#pragma once

#include <cstdint>
#include <string>

namespace ascend_trace::device {

// drvError_t values the channel tells apart.
inline constexpr int kDrvOk = 0;
inline constexpr int kDrvWaitTimeout = 16;
inline constexpr int kDrvSocketClose = 25;
inline constexpr int kDrvNonBlock = 36;

inline constexpr int kServiceBbox = 7;      // HDC_SERVICE_TYPE_BBOX
inline constexpr int kMaxSessions = 96;     // what CANN's adcore asks the client for
inline constexpr uint64_t kFlagWaitTimeout = 1u << 1;
inline constexpr uint32_t kPlatformHostSide = 1;

struct HdcMsgBuf {
  char* buf;
  int len;
};
struct HdcMsg {
  int count;
  HdcMsgBuf list[1];
};
struct HdcCapacity {
  int chan_type;
  unsigned int max_segment;
};

struct HalDriver {
  int (*get_platform_info)(uint32_t* info);
  int (*get_dev_num)(uint32_t* num);
  int (*client_create)(void** client, int max_sessions, int service, int flag);
  int (*client_destroy)(void* client);
  int (*session_connect)(int peer_node, int peer_devid, void* client, void** session);
  int (*set_session_reference)(void* session);
  int (*session_close)(void* session);
  int (*get_capacity)(HdcCapacity* capacity);
  int (*alloc_msg)(void* session, HdcMsg** msg, int count);
  int (*free_msg)(HdcMsg* msg);
  int (*reuse_msg)(HdcMsg* msg);
  int (*add_msg_buffer)(HdcMsg* msg, char* buf, int len);
  int (*get_msg_buffer)(HdcMsg* msg, int index, char** buf, int* len);
  int (*send)(void* session, HdcMsg* msg, unsigned long long flag, unsigned int timeout);
  int (*recv)(void* session, HdcMsg* msg, int buf_len, unsigned long long flag, int* count, unsigned int timeout);
};

// The driver if it is there, complete, and says this is the host side of a machine with at
// least one device; null otherwise, with the reason in *why. Decided once per process, as
// CANN decides at load: later calls return the same answer.
const HalDriver* LoadHalDriver(std::string* why);

}  // namespace ascend_trace::device
