#!/usr/bin/python3
# device_child.c's commands, from Python: libascend_trace is loaded with ctypes (dlopen,
# RTLD_LOCAL), as torch_npu and other Python frameworks load CANN's libraries. The library's
# path comes in ASCEND_TRACE_LIBRARY_PATH. Commands: start N, stop N, exit.
import ctypes
import os
import sys

lib = ctypes.CDLL(os.environ["ASCEND_TRACE_LIBRARY_PATH"])
lib.AtraceReportStart.argtypes = [ctypes.c_int32]
lib.AtraceReportStart.restype = ctypes.c_int32
lib.AtraceReportStop.argtypes = [ctypes.c_int32]
lib.AtraceReportStop.restype = None

print("ready %d" % os.getpid(), flush=True)
for line in sys.stdin:
    words = line.split()
    if words[:1] == ["start"]:
        print("start %s %d" % (words[1], lib.AtraceReportStart(int(words[1]))), flush=True)
    elif words[:1] == ["stop"]:
        lib.AtraceReportStop(int(words[1]))
        print("stop %s" % words[1], flush=True)
    elif words[:1] == ["exit"]:
        # The interpreter's own exit: modules torn down, then the C library's exit handlers.
        sys.exit(0)
    else:
        print("unknown command", flush=True)
