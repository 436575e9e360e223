/* CANN installs its public trace headers in pkg_inc/trace/, and some of its components
 * (GE: base/common/atrace) include them as "trace/atrace_types.h". This file makes that form
 * work against the same -I as "atrace_types.h": it is the header one directory up. */
#include "../atrace_types.h"
