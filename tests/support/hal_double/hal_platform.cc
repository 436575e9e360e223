// The two functions a host library resolves first to decide whether a device side exists,
// and the HDC capacity: all answered from the environment.
#include <cstdlib>
#include <cstring>

#include "hal_export.h"
#include "hal_state.h"

using namespace atraced::hal_double::drv;

extern "C" {

drvError_t drvGetPlatformInfo(uint32_t* info) {
  if (info == nullptr) return Ret("drvGetPlatformInfo", DRV_ERROR_INVALID_VALUE);
  *info = Platform();
  Log("drvGetPlatformInfo: %u", *info);
  return Ret("drvGetPlatformInfo", DRV_ERROR_NONE);
}

drvError_t drvGetDevNum(uint32_t* num_dev) {
  if (num_dev == nullptr) return Ret("drvGetDevNum", DRV_ERROR_INVALID_VALUE);
  // "not-support": CANN's host library takes DRV_ERROR_NOT_SUPPORT as a plain failure;
  // a test can check that the receiver does too.
  const char* text = std::getenv("ATRACE_HAL_DOUBLE_DEVNUM");
  if (text != nullptr && std::strcmp(text, "not-support") == 0) return Ret("drvGetDevNum", DRV_ERROR_NOT_SUPPORT);
  // No socket directory: a host without a device (the driver is installed, no card is).
  if (SocketDir().empty()) {
    *num_dev = 0;
  } else {
    char* end = nullptr;
    const unsigned long n = (text == nullptr || *text == '\0') ? 1 : std::strtoul(text, &end, 10);
    *num_dev = (end != nullptr && *end != '\0') ? 1 : static_cast<uint32_t>(n);
  }
  Log("drvGetDevNum: %u", *num_dev);
  return Ret("drvGetDevNum", DRV_ERROR_NONE);
}

drvError_t drvHdcGetCapacity(struct drvHdcCapacity* capacity) {
  if (capacity == nullptr) return Ret("drvHdcGetCapacity", DRV_ERROR_INVALID_VALUE);
  capacity->chanType = HDC_CHAN_TYPE_PCIE;  // what a real host reports; the double's sockets are invisible
  capacity->maxSegment = MaxSegment();
  return Ret("drvHdcGetCapacity", DRV_ERROR_NONE);
}

}  // extern "C"
