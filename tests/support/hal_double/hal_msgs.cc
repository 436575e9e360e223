// Message heads (drvHdcMsg) and their single buffer. A head from drvHdcAllocMsg holds
// exactly one drvHdcMsgBuf; the buffer is either the caller's (drvHdcAddMsgBuffer, for a
// send) or the double's own (halHdcRecv allocates it), and only the latter is freed by
// drvHdcReuseMsg / drvHdcFreeMsg, as the real driver's hidden freeBuf flag does.
#include <cstdlib>
#include <memory>

#include "hal_export.h"
#include "hal_state.h"

using namespace atraced::hal_double::drv;

extern "C" {

drvError_t drvHdcAllocMsg(HDC_SESSION session, struct drvHdcMsg** ppMsg, int count) {
  if (ppMsg == nullptr || count != 1 || !Sessions().Find(session)) return Ret("drvHdcAllocMsg", DRV_ERROR_INVALID_VALUE);
  auto state = std::make_shared<MsgState>();
  state->head = static_cast<drvHdcMsg*>(std::calloc(1, sizeof(drvHdcMsg) + sizeof(drvHdcMsgBuf)));
  if (state->head == nullptr) return Ret("drvHdcAllocMsg", DRV_ERROR_MALLOC_FAIL);
  state->head->count = 1;
  *ppMsg = state->head;
  Msgs().Add(state, state->head);
  return Ret("drvHdcAllocMsg", DRV_ERROR_NONE);
}

drvError_t drvHdcFreeMsg(struct drvHdcMsg* msg) {
  // Removing it from the registry drops the last reference: ~MsgState frees what it owns.
  if (!Msgs().Remove(msg)) return Ret("drvHdcFreeMsg", DRV_ERROR_INVALID_VALUE);
  return Ret("drvHdcFreeMsg", DRV_ERROR_NONE);
}

drvError_t drvHdcReuseMsg(struct drvHdcMsg* msg) {
  auto state = Msgs().Find(msg);
  if (!state) return Ret("drvHdcReuseMsg", DRV_ERROR_INVALID_VALUE);
  if (state->driver_owned) std::free(msg->bufList[0].pBuf);
  state->driver_owned = false;
  msg->bufList[0].pBuf = nullptr;
  msg->bufList[0].len = 0;
  return Ret("drvHdcReuseMsg", DRV_ERROR_NONE);
}

drvError_t drvHdcAddMsgBuffer(struct drvHdcMsg* msg, char* pBuf, int len) {
  if (pBuf == nullptr || len <= 0) return Ret("drvHdcAddMsgBuffer", DRV_ERROR_INVALID_VALUE);
  auto state = Msgs().Find(msg);
  if (!state) return Ret("drvHdcAddMsgBuffer", DRV_ERROR_INVALID_VALUE);
  // One buffer per head: a second one without drvHdcReuseMsg in between is refused.
  if (msg->bufList[0].pBuf != nullptr) return Ret("drvHdcAddMsgBuffer", DRV_ERROR_OVER_LIMIT);
  msg->bufList[0].pBuf = pBuf;
  msg->bufList[0].len = len;
  state->driver_owned = false;
  return Ret("drvHdcAddMsgBuffer", DRV_ERROR_NONE);
}

drvError_t drvHdcGetMsgBuffer(struct drvHdcMsg* msg, int index, char** pBuf, int* pLen) {
  if (pBuf == nullptr || pLen == nullptr || !Msgs().Find(msg)) return Ret("drvHdcGetMsgBuffer", DRV_ERROR_INVALID_VALUE);
  if (index != 0) return Ret("drvHdcGetMsgBuffer", DRV_ERROR_INVALID_VALUE);
  *pBuf = msg->bufList[0].pBuf;
  *pLen = msg->bufList[0].len;
  return Ret("drvHdcGetMsgBuffer", DRV_ERROR_NONE);
}

}  // extern "C"
