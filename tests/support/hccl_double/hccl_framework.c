/* A framework's library as torch_npu's libtorch_npu.so is one for HCCL: linked with -lhccl
 * (DT_NEEDED) and calling HCCL's functions by name, bound when the library is loaded (ctypes and
 * Python's import load with RTLD_NOW). tests/hccl_ledger/ctypes_order_rank.py loads it with
 * ctypes beside libatrace_hccl, in one order or the other. It is also a framework's HCCL plugin
 * as MindSpore's libhccl_plugin.so is one: ctypes_plugin_rank.py opens it with RTLD_DEEPBIND and
 * looks HcclAllReduce up on its handle. */
#include <stddef.h>

#include "hccl_types.h"

#define FRAMEWORK_EXPORT __attribute__((visibility("default")))

HcclResult HcclGetRootInfo(HcclRootInfo* info);
HcclResult HcclCommInitRootInfo(uint32_t n, const HcclRootInfo* info, uint32_t rank, HcclComm* comm);
HcclResult HcclAllReduce(void* s, void* r, uint64_t n, HcclDataType t, HcclReduceOp o, HcclComm c, aclrtStream st);

/* A one-rank world communicator, as the framework's process group makes it. */
FRAMEWORK_EXPORT HcclResult FrameworkWorld(HcclComm* comm) {
  static HcclRootInfo info;
  const HcclResult rc = HcclGetRootInfo(&info);
  return rc != 0 ? rc : HcclCommInitRootInfo(1, &info, 0, comm);
}

/* An fp16 sum AllReduce of `count` elements on stream 0x5151, as the framework's collective. */
FRAMEWORK_EXPORT HcclResult FrameworkAllReduce(HcclComm comm, uint64_t count) {
  return HcclAllReduce(NULL, NULL, count, 3, 0, comm, (aclrtStream)0x5151);
}
