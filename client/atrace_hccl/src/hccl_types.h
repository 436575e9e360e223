// HCCL's and the acl runtime's types as their public C headers define them (hccl.h,
// hccl_types.h, hccl_comm.h, acl_rt.h), restated here from the signatures so that the
// interposer and its test doubles build without CANN: handles are pointers, enums are ints.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int HcclResult;  // HCCL_SUCCESS is 0
typedef void* HcclComm;
typedef int HcclDataType;  // HCCL_DATA_TYPE_INT8 = 0 ... FP8E8M0 = 17
typedef int HcclReduceOp;  // HCCL_REDUCE_SUM = 0, PROD, MAX, MIN
typedef void* aclrtStream;
typedef void* aclrtEvent;
typedef int aclError;  // ACL_SUCCESS is 0

#define ATRACE_HCCL_SUCCESS 0
#define ATRACE_HCCL_ROOT_INFO_BYTES 4108  // HcclRootInfo: an opaque 4108-byte array
#define ATRACE_HCCL_COMM_NAME_MAX 128     // HcclGetCommName writes at most this many bytes

typedef struct {
  char internal[ATRACE_HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

typedef struct {
  int sendRecvType;  // HCCL_SEND 0, HCCL_RECV 1
  void* buf;
  uint64_t count;
  HcclDataType dataType;
  uint32_t remoteRank;
} HcclSendRecvItem;

// aclrtQueryEventStatus's answer.
#define ATRACE_ACL_EVENT_NOT_READY 0  // ACL_EVENT_RECORDED_STATUS_NOT_READY
#define ATRACE_ACL_EVENT_COMPLETE 1   // ACL_EVENT_RECORDED_STATUS_COMPLETE

#ifdef __cplusplus
}
#endif
