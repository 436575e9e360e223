/* The mmpa functions CANN's trace sources call, over POSIX as libmmpa does on Linux
 * (signatures from CANN's pkg_inc/mmpa/sub_inc/mmpa_linux.h, used unchanged). */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "mmpa_api.h"

INT32 mmMutexInit(mmMutex_t *mutex)
{
    return (mutex != NULL && pthread_mutex_init(mutex, NULL) == 0) ? EN_OK : EN_ERROR;
}

INT32 mmMutexLock(mmMutex_t *mutex)
{
    return (mutex != NULL && pthread_mutex_lock(mutex) == 0) ? EN_OK : EN_ERROR;
}

INT32 mmMutexUnLock(mmMutex_t *mutex)
{
    return (mutex != NULL && pthread_mutex_unlock(mutex) == 0) ? EN_OK : EN_ERROR;
}

INT32 mmMutexDestroy(mmMutex_t *mutex)
{
    return (mutex != NULL && pthread_mutex_destroy(mutex) == 0) ? EN_OK : EN_ERROR;
}

INT32 mmGetPid(void)
{
    return (INT32)getpid();
}

INT32 mmGetErrorCode(void)
{
    return errno;
}

INT32 mmGetTimeOfDay(mmTimeval *timeVal, mmTimezone *timeZone)
{
    if (timeVal == NULL) {
        return EN_INVALID_PARAM;
    }
    struct timeval tv;
    struct timezone tz;
    if (gettimeofday(&tv, &tz) != 0) {
        return EN_ERROR;
    }
    timeVal->tv_sec = tv.tv_sec;
    timeVal->tv_usec = tv.tv_usec;
    if (timeZone != NULL) {
        timeZone->tz_minuteswest = tz.tz_minuteswest;
        timeZone->tz_dsttime = tz.tz_dsttime;
    }
    return EN_OK;
}

INT32 mmLocalTimeR(const time_t *timep, struct tm *result)
{
    return (timep != NULL && result != NULL && localtime_r(timep, result) != NULL) ? EN_OK : EN_ERROR;
}

INT32 mmRealPath(const CHAR *path, CHAR *realPath, INT32 realPathLen)
{
    if (path == NULL || realPath == NULL || realPathLen < PATH_MAX) {
        return EN_INVALID_PARAM;
    }
    return (realpath(path, realPath) != NULL) ? EN_OK : EN_ERROR;
}

INT32 mmRmdir(const CHAR *pathName)
{
    return (pathName != NULL && rmdir(pathName) == 0) ? EN_OK : EN_ERROR;
}

VOID *mmDlopen(const CHAR *fileName, INT32 mode)
{
    return (fileName == NULL) ? NULL : dlopen(fileName, mode);
}

VOID *mmDlsym(VOID *handle, const CHAR *funcName)
{
    return (handle == NULL || funcName == NULL) ? NULL : dlsym(handle, funcName);
}

INT32 mmDlclose(VOID *handle)
{
    return (handle != NULL && dlclose(handle) == 0) ? EN_OK : EN_ERROR;
}

INT32 mmSetCurrentThreadName(const CHAR *name)
{
    return (name != NULL && prctl(PR_SET_NAME, name) == 0) ? EN_OK : EN_ERROR;
}

INT32 mmAccess2(const CHAR *pathName, INT32 mode)
{
    return (pathName != NULL && access(pathName, mode) == 0) ? EN_OK : EN_ERROR;
}

INT32 mmCreateTaskWithThreadAttr(mmThread *threadHandle, const mmUserBlock_t *funcBlock,
                                 const mmThreadAttr *threadAttr)
{
    if (threadHandle == NULL || funcBlock == NULL || funcBlock->procFunc == NULL || threadAttr == NULL) {
        return EN_INVALID_PARAM;
    }
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) {
        return EN_ERROR;
    }
    if (threadAttr->detachFlag == 1) {
        (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    }
    if (threadAttr->stackFlag == 1) {
        (void)pthread_attr_setstacksize(&attr, threadAttr->stackSize);
    }
    int ret = pthread_create(threadHandle, &attr, funcBlock->procFunc, funcBlock->pulArg);
    (void)pthread_attr_destroy(&attr);
    return (ret == 0) ? EN_OK : EN_ERROR;
}

INT32 mmJoinTask(mmThread *threadHandle)
{
    return (threadHandle != NULL && pthread_join(*threadHandle, NULL) == 0) ? EN_OK : EN_ERROR;
}

mmSockHandle mmSocket(INT32 sockFamily, INT32 type, INT32 protocol)
{
    return socket(sockFamily, type, protocol);
}

INT32 mmBind(mmSockHandle sockFd, mmSockAddr *addr, mmSocklen_t addrLen)
{
    return (addr != NULL && bind(sockFd, addr, addrLen) == 0) ? EN_OK : EN_ERROR;
}

INT32 mmConnect(mmSockHandle sockFd, mmSockAddr *addr, mmSocklen_t addrLen)
{
    return (addr != NULL && connect(sockFd, addr, addrLen) == 0) ? EN_OK : EN_ERROR;
}

INT32 mmCloseSocket(mmSockHandle sockFd)
{
    return (close(sockFd) == 0) ? EN_OK : EN_ERROR;
}
