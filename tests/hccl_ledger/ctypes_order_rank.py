"""One rank whose framework library reaches HCCL by name (hccl_framework, linked with -lhccl as
libtorch_npu is) and which loads libatrace_hccl itself with ctypes, no LD_PRELOAD, for
hccl_ledger_tests.

  python3 ctypes_order_rank.py ORDER LIBATRACE_HCCL LIBFRAMEWORK

ORDER:
  interposer-global-first  ctypes.CDLL(libatrace_hccl, RTLD_GLOBAL), then the framework (a
                           script that loads the interposer before `import torch_npu`)
  framework-first          the framework, then ctypes.CDLL(libatrace_hccl, RTLD_GLOBAL) (after
                           `import torch_npu`)
  interposer-local-first   ctypes.CDLL(libatrace_hccl) (ctypes' default, RTLD_LOCAL), then the
                           framework

The framework makes a one-rank world and three AllReduces (counts 101, 102, 103); then one
AllReduce (count 900) goes through the interposer's own handle. Prints "framework R R R" and
"interposer R" (each call's HcclResult); exit 0 once all returned 0.
"""
import ctypes
import sys

order, interposer_path, framework_path = sys.argv[1:4]
if order == "interposer-global-first":
    interposer = ctypes.CDLL(interposer_path, mode=ctypes.RTLD_GLOBAL)
    framework = ctypes.CDLL(framework_path)
elif order == "framework-first":
    framework = ctypes.CDLL(framework_path)
    interposer = ctypes.CDLL(interposer_path, mode=ctypes.RTLD_GLOBAL)
elif order == "interposer-local-first":
    interposer = ctypes.CDLL(interposer_path)
    framework = ctypes.CDLL(framework_path)
else:
    sys.exit(2)

p = ctypes.c_void_p
framework.FrameworkWorld.argtypes = [ctypes.POINTER(p)]
framework.FrameworkAllReduce.argtypes = [p, ctypes.c_uint64]
interposer.HcclAllReduce.argtypes = [p, p, ctypes.c_uint64, ctypes.c_int, ctypes.c_int, p, p]
for fn in (framework.FrameworkWorld, framework.FrameworkAllReduce, interposer.HcclAllReduce):
    fn.restype = ctypes.c_int

comm = p()
if framework.FrameworkWorld(ctypes.byref(comm)) != 0:
    sys.exit(4)
through_framework = [framework.FrameworkAllReduce(comm, count) for count in (101, 102, 103)]
print("framework", *through_framework, flush=True)
through_interposer = interposer.HcclAllReduce(None, None, 900, 3, 0, comm, 0x5151)
print("interposer", through_interposer, flush=True)
sys.exit(0 if not any(through_framework) and through_interposer == 0 else 6)
