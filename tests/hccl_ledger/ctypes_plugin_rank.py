"""One rank that reaches HCCL the way MindSpore's HCCL adapter does, for hccl_ledger_tests:
it opens its plugin (as libhccl_plugin.so: hccl_framework, linked with -lhccl) with
RTLD_DEEPBIND | RTLD_NOW | RTLD_LOCAL and looks HcclAllReduce up on the plugin's handle. The
plugin's own calls by name bind to libhccl before the global scope (RTLD_DEEPBIND).

  LD_PRELOAD=libatrace_hccl.so [LD_AUDIT=libatrace_hccl_audit.so] python3 ctypes_plugin_rank.py PLUGIN

A one-rank world communicator made by the plugin; then AllReduce count 201 through the plugin's
handle, 202 called by name inside the plugin, 203 through the plugin's handle again, and 204
through the process's global scope (ctypes.CDLL(None)). Prints "plugin R R R" and "global R"
(each call's HcclResult); exit 0 once all returned 0.
"""
import ctypes
import os
import sys

plugin = ctypes.CDLL(sys.argv[1], mode=os.RTLD_DEEPBIND | os.RTLD_LOCAL)  # ctypes adds RTLD_NOW
world = ctypes.CDLL(None)
p = ctypes.c_void_p
all_reduce = [p, p, ctypes.c_uint64, ctypes.c_int, ctypes.c_int, p, p]
plugin.FrameworkWorld.argtypes = [ctypes.POINTER(p)]
plugin.FrameworkAllReduce.argtypes = [p, ctypes.c_uint64]
plugin.HcclAllReduce.argtypes = all_reduce
world.HcclAllReduce.argtypes = all_reduce
for fn in (plugin.FrameworkWorld, plugin.FrameworkAllReduce, plugin.HcclAllReduce, world.HcclAllReduce):
    fn.restype = ctypes.c_int

comm = p()
if plugin.FrameworkWorld(ctypes.byref(comm)) != 0:
    sys.exit(4)
stream = 0x5151
through_plugin = [
    plugin.HcclAllReduce(None, None, 201, 3, 0, comm, stream),
    plugin.FrameworkAllReduce(comm, 202),
    plugin.HcclAllReduce(None, None, 203, 3, 0, comm, stream),
]
print("plugin", *through_plugin, flush=True)
through_world = world.HcclAllReduce(None, None, 204, 3, 0, comm, stream)
print("global", through_world, flush=True)
sys.exit(0 if not any(through_plugin) and through_world == 0 else 6)
