/* Stand-in for Huawei's securec.h (libc_sec), which CANN's trace sources include but its
 * repository does not carry. Declares the functions those sources call, with securec's
 * signatures; securec.c implements them as plain checked copies. Used only to build CANN's
 * libascend_trace for bench/cann_submit_bench.sh. */
#ifndef ATRACED_CANN_STUB_SECUREC_H
#define ATRACED_CANN_STUB_SECUREC_H

#include <stdarg.h>
#include <stddef.h>

#ifndef EOK
#define EOK 0
#endif
#ifndef __errno_t_defined
typedef int errno_t;
#define __errno_t_defined 1
#endif

#ifdef __cplusplus
extern "C" {
#endif

errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count);
errno_t memset_s(void *dest, size_t destMax, int c, size_t count);
errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc);
errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count);
errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count);
int sprintf_s(char *strDest, size_t destMax, const char *format, ...) __attribute__((format(printf, 3, 4)));
int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
int snprintf_truncated_s(char *strDest, size_t destMax, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList)
    __attribute__((format(printf, 4, 0)));

#ifdef __cplusplus
}
#endif

#endif
