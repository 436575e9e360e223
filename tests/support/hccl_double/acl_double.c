/* A test double of the four acl runtime calls libatrace_hccl uses (acl_rt.h): events. The
 * double's collectives (hccl_double.c) have finished when they return, so an event recorded
 * after one is complete at once; an event never recorded is not ready. */
#include <stdlib.h>

#include "hccl_types.h"

#define EXPORT __attribute__((visibility("default")))

struct double_event {
  int recorded;
};

EXPORT aclError aclrtCreateEvent(aclrtEvent* event) {
  if (event == NULL) return 100000; /* ACL_ERROR_INVALID_PARAM */
  *event = calloc(1, sizeof(struct double_event));
  return *event != NULL ? 0 : 200000;
}

EXPORT aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  (void)stream;
  if (event == NULL) return 100000;
  __atomic_store_n(&((struct double_event*)event)->recorded, 1, __ATOMIC_RELEASE);
  return 0;
}

EXPORT aclError aclrtQueryEventStatus(aclrtEvent event, int* status) {
  if (event == NULL || status == NULL) return 100000;
  *status = __atomic_load_n(&((struct double_event*)event)->recorded, __ATOMIC_ACQUIRE) ? ATRACE_ACL_EVENT_COMPLETE
                                                                                        : ATRACE_ACL_EVENT_NOT_READY;
  return 0;
}

EXPORT aclError aclrtDestroyEvent(aclrtEvent event) {
  free(event);
  return 0;
}
