"""One rank run with LD_PRELOAD=libatrace_hccl.so that reaches HCCL the way torch_npu's function
loaders do (dlopen of libhccl, dlsym of each name on that handle), for hccl_ledger_tests.

  LD_PRELOAD=libatrace_hccl.so python3 ctypes_handle_rank.py LIBHCCL

A one-rank world communicator, made through libhccl's handle. Through that handle:
AllReduce (count 111), Reduce (222, root 0), Scatter (333, root 0), AlltoAllV; then through the
process's global scope (ctypes.CDLL(None), dlsym(RTLD_DEFAULT)): AllReduce (444) and Reduce
(555). Prints "handle RESULT..." and "global RESULT..." (each call's HcclResult); exit 0 once
all returned 0.
"""
import ctypes
import sys

hccl = ctypes.CDLL(sys.argv[1])  # RTLD_LOCAL, ctypes' default: a handle of its own
world = ctypes.CDLL(None)  # the global scope: LD_PRELOAD's definitions come first
p = ctypes.c_void_p
signatures = {
    "HcclAllReduce": [p, p, ctypes.c_uint64, ctypes.c_int, ctypes.c_int, p, p],
    "HcclReduce": [p, p, ctypes.c_uint64, ctypes.c_int, ctypes.c_int, ctypes.c_uint32, p, p],
    "HcclScatter": [p, p, ctypes.c_uint64, ctypes.c_int, ctypes.c_uint32, p, p],
    "HcclAlltoAllV": [p, p, p, ctypes.c_int, p, p, p, ctypes.c_int, p, p],
}
for lib in (hccl, world):
    for name, args in signatures.items():
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = ctypes.c_int

info = ctypes.create_string_buffer(4108)
comm = ctypes.c_void_p()
if hccl.HcclGetRootInfo(info) != 0 or hccl.HcclCommInitRootInfo(1, info, 0, ctypes.byref(comm)) != 0:
    sys.exit(4)
stream = 0x5151
handle = [
    hccl.HcclAllReduce(None, None, 111, 3, 0, comm, stream),
    hccl.HcclReduce(None, None, 222, 3, 0, 0, comm, stream),
    hccl.HcclScatter(None, None, 333, 3, 0, comm, stream),
    hccl.HcclAlltoAllV(None, None, None, 3, None, None, None, 3, comm, stream),
]
print("handle", *handle, flush=True)
scope = [
    world.HcclAllReduce(None, None, 444, 3, 0, comm, stream),
    world.HcclReduce(None, None, 555, 3, 0, 0, comm, stream),
]
print("global", *scope, flush=True)
sys.exit(0 if not any(handle + scope) else 6)
