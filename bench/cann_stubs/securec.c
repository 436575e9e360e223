/* securec's functions as plain checked copies (see include/securec.h). Each checks what
 * securec checks (null pointers, a destination too small, overlap) and then does what libc
 * does; the error codes are securec's values. Exported from the library, as libc_sec.so's
 * are, so CANN's ring calls memcpy_s through the PLT as it does in a CANN install. */
#include "securec.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SEC_MEM_MAX_LEN 0x7fffffffUL
#define SEC_STRING_MAX_LEN 0x7fffffffUL
#define EINVAL_AND_RESET (22 | 128)
#define ERANGE_AND_RESET (34 | 128)
#define EOVERLAP_AND_RESET (54 | 128)
#define SEC_EINVAL 22
#define SEC_ERANGE 34

static int Overlaps(const void *a, size_t aLen, const void *b, size_t bLen)
{
    uintptr_t x = (uintptr_t)a;
    uintptr_t y = (uintptr_t)b;
    return (x < y + bLen) && (y < x + aLen);
}

errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count)
{
    if (dest == NULL || destMax == 0 || destMax > SEC_MEM_MAX_LEN) {
        return SEC_ERANGE;
    }
    if (src == NULL) {
        memset(dest, 0, destMax);
        return EINVAL_AND_RESET;
    }
    if (count > destMax) {
        memset(dest, 0, destMax);
        return ERANGE_AND_RESET;
    }
    if (dest == src) {
        return EOK;
    }
    if (Overlaps(dest, count, src, count)) {
        memset(dest, 0, destMax);
        return EOVERLAP_AND_RESET;
    }
    memcpy(dest, src, count);
    return EOK;
}

errno_t memset_s(void *dest, size_t destMax, int c, size_t count)
{
    if (dest == NULL || destMax == 0 || destMax > SEC_MEM_MAX_LEN) {
        return SEC_ERANGE;
    }
    if (count > destMax) {
        memset(dest, c, destMax);
        return ERANGE_AND_RESET;
    }
    memset(dest, c, count);
    return EOK;
}

errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc)
{
    return strncpy_s(strDest, destMax, strSrc, SEC_STRING_MAX_LEN);
}

errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count)
{
    if (strDest == NULL || destMax == 0 || destMax > SEC_STRING_MAX_LEN) {
        return SEC_ERANGE;
    }
    if (strSrc == NULL) {
        strDest[0] = '\0';
        return EINVAL_AND_RESET;
    }
    size_t len = strnlen(strSrc, count < destMax ? count : destMax);
    if (len >= destMax) {
        strDest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    if (Overlaps(strDest, len + 1, strSrc, len + 1)) {
        strDest[0] = '\0';
        return EOVERLAP_AND_RESET;
    }
    memcpy(strDest, strSrc, len);
    strDest[len] = '\0';
    return EOK;
}

errno_t strncat_s(char *strDest, size_t destMax, const char *strSrc, size_t count)
{
    if (strDest == NULL || destMax == 0 || destMax > SEC_STRING_MAX_LEN) {
        return SEC_ERANGE;
    }
    size_t have = strnlen(strDest, destMax);
    if (have == destMax || strSrc == NULL) {
        strDest[0] = '\0';
        return strSrc == NULL ? EINVAL_AND_RESET : SEC_EINVAL;
    }
    size_t add = strnlen(strSrc, count);
    if (have + add >= destMax) {
        strDest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    memcpy(strDest + have, strSrc, add);
    strDest[have + add] = '\0';
    return EOK;
}

int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList)
{
    if (strDest == NULL || format == NULL || destMax == 0 || destMax > SEC_STRING_MAX_LEN) {
        return -1;
    }
    size_t limit = (count < destMax) ? count + 1 : destMax;
    int n = vsnprintf(strDest, limit, format, argList);
    if (n < 0 || (size_t)n >= limit) {
        /* securec truncates when count < destMax, and fails when the output does not fit. */
        if (count < destMax && n >= 0) {
            return -1;
        }
        strDest[0] = '\0';
        return -1;
    }
    return n;
}

int snprintf_s(char *strDest, size_t destMax, size_t count, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf_s(strDest, destMax, count, format, ap);
    va_end(ap);
    return n;
}

int sprintf_s(char *strDest, size_t destMax, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf_s(strDest, destMax, destMax - 1, format, ap);
    va_end(ap);
    return n;
}

int snprintf_truncated_s(char *strDest, size_t destMax, const char *format, ...)
{
    if (strDest == NULL || format == NULL || destMax == 0 || destMax > SEC_STRING_MAX_LEN) {
        return -1;
    }
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(strDest, destMax, format, ap);
    va_end(ap);
    if (n < 0) {
        strDest[0] = '\0';
        return -1;
    }
    return ((size_t)n >= destMax) ? (int)(destMax - 1) : n;
}
