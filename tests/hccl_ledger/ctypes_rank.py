"""One rank loaded the way Python loads CANN: ctypes opens libatrace_hccl.so (RTLD_GLOBAL) and the
libhccl double (RTLD_LOCAL, ctypes' default), for hccl_ledger_tests.

  python3 ctypes_rank.py LIBATRACE_HCCL LIBHCCL

A one-rank world communicator; four threads make 25 AllReduces each through the interposer's
handle (counts 1000 * thread + i); 5 more through the double's own handle (count 777: a lookup
on libhccl's handle reaches HCCL directly, unrecorded); then a forked child makes 10 (counts
5000 + i) and exits normally, printing "child PID" first. Exit 0 once all returned 0.
"""
import ctypes
import os
import sys
import threading

interposer = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
hccl = ctypes.CDLL(sys.argv[2])
args = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
for lib in (interposer, hccl):
    lib.HcclAllReduce.argtypes = args
    lib.HcclAllReduce.restype = ctypes.c_int

info = ctypes.create_string_buffer(4108)
comm = ctypes.c_void_p()
if hccl.HcclGetRootInfo(info) != 0 or interposer.HcclCommInitRootInfo(1, info, 0, ctypes.byref(comm)) != 0:
    sys.exit(4)
failures = []


def all_reduce(lib, count):
    if lib.HcclAllReduce(None, None, count, 3, 0, comm, 0x5151) != 0:
        failures.append(count)


def worker(t):
    for i in range(1, 26):
        all_reduce(interposer, 1000 * t + i)


threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for _ in range(5):
    all_reduce(hccl, 777)

pid = os.fork()
if pid == 0:
    print("child", os.getpid(), flush=True)
    for i in range(1, 11):
        all_reduce(interposer, 5000 + i)
    sys.exit(5 if failures else 0)
_, status = os.waitpid(pid, 0)
print("parent done", flush=True)
sys.exit(0 if not failures and status == 0 else 6)
