// The double is built with hidden visibility; only the driver API in ascend_hal_double.h
// is exported, so its C++ internals cannot clash with a program that loads it.
#pragma once

#pragma GCC visibility push(default)
#include "ascend_hal_double.h"
#pragma GCC visibility pop
