// Names of wire.h constants, for logs and error messages.
#include "atraced/proto/codec.h"

namespace atraced::proto {

std::string_view OpcodeName(uint16_t opcode) {
  switch (opcode) {
    case ATR_OP_HELLO: return "HELLO";
    case ATR_OP_EVENT_BEGIN: return "EVENT_BEGIN";
    case ATR_OP_FILE_OPEN: return "FILE_OPEN";
    case ATR_OP_FILE_APPEND: return "FILE_APPEND";
    case ATR_OP_FILE_GET_FD: return "FILE_GET_FD";
    case ATR_OP_FILE_CLOSE: return "FILE_CLOSE";
    case ATR_OP_EVENT_END: return "EVENT_END";
    case ATR_OP_STATUS: return "STATUS";
    case ATR_OP_LIST: return "LIST";
    case ATR_OP_VACUUM: return "VACUUM";
    case ATR_OP_RING_REGISTER: return "RING_REGISTER";
    case ATR_OP_RING_RELEASE: return "RING_RELEASE";
    case ATR_OP_RING_REPORT: return "RING_REPORT";
    case ATR_OP_RING_SAVE_ALL: return "RING_SAVE_ALL";
    case ATR_OP_GOODBYE: return "GOODBYE";
    case ATR_OP_CRASH: return "CRASH";
    case ATR_OP_DUMP: return "DUMP";
    case ATR_OP_STACK_DUMP: return "STACK_DUMP";
    case ATR_OP_DEVICE_STATS: return "DEVICE_STATS";
    case ATR_OP_VACUUM_BY: return "VACUUM_BY";
    case ATR_OP_PROCESS_DUMP: return "PROCESS_DUMP";
    case ATR_OP_LABELS: return "LABELS";
    case ATR_OP_LIST_LIVE: return "LIST_LIVE";
    case ATR_OP_AGED_DUMPS: return "AGED_DUMPS";
    case ATR_OP_DUMPS_EXPORTED: return "DUMPS_EXPORTED";
    default: return "UNKNOWN";
  }
}

std::string_view StatusName(int32_t status) {
  switch (status) {
    case ATR_OK: return "OK";
    case ATR_EPERM: return "EPERM";
    case ATR_ENOENT: return "ENOENT";
    case ATR_ESRCH: return "ESRCH";
    case ATR_EIO: return "EIO";
    case ATR_EBADF: return "EBADF";
    case ATR_EAGAIN: return "EAGAIN";
    case ATR_EACCES: return "EACCES";
    case ATR_EBUSY: return "EBUSY";
    case ATR_EEXIST: return "EEXIST";
    case ATR_EINVAL: return "EINVAL";
    case ATR_EMFILE: return "EMFILE";
    case ATR_ENOSPC: return "ENOSPC";
    case ATR_ENAMETOOLONG: return "ENAMETOOLONG";
    case ATR_ENOSYS: return "ENOSYS";
    case ATR_EPROTO: return "EPROTO";
    case ATR_EBADMSG: return "EBADMSG";
    case ATR_EMSGSIZE: return "EMSGSIZE";
    case ATR_EPROTONOSUPPORT: return "EPROTONOSUPPORT";
    case ATR_ENOTSUP: return "ENOTSUP";
    case ATR_ESHUTDOWN: return "ESHUTDOWN";
    default: return "UNKNOWN";
  }
}

}  // namespace atraced::proto
