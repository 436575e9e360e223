/* The driver API of libascend_hal.so as far as the trace channel uses it, written from
 * docs device-channel.md §2.1/§2.2 (not copied from CANN's headers): the types, constants
 * and exact C signatures the test double implements. C, so the partial variant and any C
 * consumer can include it too. */
#ifndef ATRACED_TESTS_HAL_DOUBLE_ASCEND_HAL_DOUBLE_H
#define ATRACED_TESTS_HAL_DOUBLE_ASCEND_HAL_DOUBLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int drvError_t;
typedef drvError_t hdcError_t;
typedef unsigned long long UINT64;
typedef unsigned int UINT32;
typedef void *HDC_CLIENT;
typedef void *HDC_SESSION;
typedef void *HDC_SERVER;

/* drvError_t values (the ones §2.2 lists, plus the two the real connect path also uses). */
enum {
  DRV_ERROR_NONE = 0,
  DRV_ERROR_NO_DEVICE = 1,
  DRV_ERROR_INVALID_DEVICE = 2,
  DRV_ERROR_INVALID_VALUE = 3,
  DRV_ERROR_INVALID_HANDLE = 4,
  DRV_ERROR_INNER_ERR = 7,
  DRV_ERROR_PARA_ERROR = 8,
  DRV_ERROR_WAIT_TIMEOUT = 16,
  DRV_ERROR_SOCKET_CREATE = 18,
  DRV_ERROR_SOCKET_CONNECT = 19,
  DRV_ERROR_CLIENT_BUSY = 23,
  DRV_ERROR_SOCKET_CLOSE = 25,
  DRV_ERROR_RECV_MESG = 26,
  DRV_ERROR_SEND_MESG = 27,
  DRV_ERROR_DEVICE_NOT_READY = 34,
  DRV_ERROR_REMOTE_NOT_LISTEN = 35,
  DRV_ERROR_NON_BLOCK = 36,
  DRV_ERROR_OVER_LIMIT = 37,
  DRV_ERROR_MALLOC_FAIL = 40,
  DRV_ERROR_NOT_SUPPORT = 0xfffe
};

enum { PLATFORM_DEVICE_SIDE = 0, PLATFORM_HOST_SIDE = 1 };

enum drvHdcChanType { HDC_CHAN_TYPE_SOCKET = 0, HDC_CHAN_TYPE_PCIE, HDC_CHAN_TYPE_MAX };
struct drvHdcCapacity {
  enum drvHdcChanType chanType;
  unsigned int maxSegment;
};
struct drvHdcMsgBuf {
  char *pBuf;
  int len;
};
/* A zero-length array as in the driver's header: callers index bufList[0], and the
 * double allocates the head with room for exactly one buffer (drvHdcAllocMsg count 1). */
struct drvHdcMsg {
  int count;
  struct drvHdcMsgBuf bufList[0];
};

#define HDC_FLAG_NOWAIT (1 << 0)
#define HDC_FLAG_WAIT_TIMEOUT (1 << 1)

enum drvHdcServiceType { HDC_SERVICE_TYPE_IDE1 = 2, HDC_SERVICE_TYPE_LOG = 5, HDC_SERVICE_TYPE_BBOX = 7,
                         HDC_SERVICE_TYPE_IDE_FILE_TRANS = 12 };
enum drvHdcSessionAttr {
  HDC_SESSION_ATTR_DEV_ID = 0,
  HDC_SESSION_ATTR_UID = 1,
  HDC_SESSION_ATTR_RUN_ENV = 2,
  HDC_SESSION_ATTR_VFID = 3,
  HDC_SESSION_ATTR_LOCAL_CREATE_PID = 4,
  HDC_SESSION_ATTR_PEER_CREATE_PID = 5,
  HDC_SESSION_ATTR_STATUS = 6,
  HDC_SESSION_ATTR_DFX = 7
};
enum drvHdcSessionStatus { HDC_SESSION_STATUS_CONNECT = 1, HDC_SESSION_STATUS_CLOSE = 2,
                           HDC_SESSION_STATUS_UNKNOW_ERR = 3 };

/* The 15 functions the host trace path calls (§2.1). */
drvError_t drvGetPlatformInfo(uint32_t *info);
drvError_t drvGetDevNum(uint32_t *num_dev);
drvError_t drvHdcClientCreate(HDC_CLIENT *client, int maxSessionNum, int serviceType, int flag);
drvError_t drvHdcClientDestroy(HDC_CLIENT client);
drvError_t drvHdcSessionConnect(int peer_node, int peer_devid, HDC_CLIENT client, HDC_SESSION *session);
drvError_t drvHdcSetSessionReference(HDC_SESSION session);
drvError_t drvHdcSessionClose(HDC_SESSION session);
drvError_t drvHdcGetCapacity(struct drvHdcCapacity *capacity);
drvError_t drvHdcAllocMsg(HDC_SESSION session, struct drvHdcMsg **ppMsg, int count);
drvError_t drvHdcFreeMsg(struct drvHdcMsg *msg);
drvError_t drvHdcReuseMsg(struct drvHdcMsg *msg);
drvError_t drvHdcAddMsgBuffer(struct drvHdcMsg *msg, char *pBuf, int len);
drvError_t drvHdcGetMsgBuffer(struct drvHdcMsg *msg, int index, char **pBuf, int *pLen);
hdcError_t halHdcSend(HDC_SESSION session, struct drvHdcMsg *pMsg, UINT64 flag, UINT32 timeout);
hdcError_t halHdcRecv(HDC_SESSION session, struct drvHdcMsg *pMsg, int bufLen, UINT64 flag, int *recvBufCount,
                      UINT32 timeout);

/* The device side the fake device uses (no epoll: it accepts in a blocking loop). */
drvError_t drvHdcServerCreate(int devid, int serviceType, HDC_SERVER *pServer);
drvError_t drvHdcServerDestroy(HDC_SERVER server);
drvError_t drvHdcSessionAccept(HDC_SERVER server, HDC_SESSION *session);
hdcError_t halHdcGetSessionAttr(HDC_SESSION session, int attr, int *value);

#ifdef __cplusplus
}
#endif

#endif /* ATRACED_TESTS_HAL_DOUBLE_ASCEND_HAL_DOUBLE_H */
