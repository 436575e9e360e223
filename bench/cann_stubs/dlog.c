/* CANN's logging (libunified_dlog) reduced to what its default level does: errors reach
 * stderr, everything else is dropped. CANN's Dlog macro (dlog_pub.h, used unchanged) asks
 * CheckLogLevel first, so the submit path formats nothing unless a record fails. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "dlog_pub.h"

int32_t CheckLogLevel(int32_t moduleId, int32_t logLevel)
{
    (void)moduleId;
    return (logLevel == DLOG_ERROR) ? 1 : 0;
}

void DlogRecord(int32_t moduleId, int32_t level, const char *fmt, ...)
{
    (void)moduleId;
    (void)level;
    va_list ap;
    va_start(ap, fmt);
    fputs("[cann atrace] ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}
