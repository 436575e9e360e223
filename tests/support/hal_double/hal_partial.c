/* The second variant of libascend_hal.so: only the two platform functions, as an old or
 * foreign driver without the HDC functions would be. It answers "host side, one device",
 * so a receiver that checks only those two would go on, and one that resolves all 15 must
 * report the device side unsupported. */
#include "hal_export.h"

drvError_t drvGetPlatformInfo(uint32_t *info) {
  if (info == 0) return DRV_ERROR_INVALID_VALUE;
  *info = PLATFORM_HOST_SIDE;
  return DRV_ERROR_NONE;
}

drvError_t drvGetDevNum(uint32_t *num_dev) {
  if (num_dev == 0) return DRV_ERROR_INVALID_VALUE;
  *num_dev = 1;
  return DRV_ERROR_NONE;
}
