#!/usr/bin/python3
"""libatrace_client from Python, loaded with ctypes (dlopen, RTLD_LOCAL), for client_dlopen_tests.

  python3 ctypes_client.py LIBRARY SOCKET

An emit; an event step by step, half of it through the passed descriptor; 8 threads whose first
calls race (each a handle of its own, then one shared); then multiprocessing's fork while a
thread is inside the library: the child uses the handle it inherited and exits, the parent's
connection goes on.
Prints one fact a line ("emit PATH", ...); exit 0 once every call succeeded.
"""
import ctypes
import multiprocessing
import os
import sys
import threading

lib = ctypes.CDLL(sys.argv[1])
SOCKET = sys.argv[2].encode()
PATH_MAX = 4096


class Options(ctypes.Structure):
    _fields_ = [("socket_path", ctypes.c_char_p), ("connect_timeout_ms", ctypes.c_int),
                ("io_timeout_ms", ctypes.c_int), ("max_in_flight", ctypes.c_uint), ("flags", ctypes.c_uint)]


class EventSpec(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("side", ctypes.c_int), ("device_id", ctypes.c_uint32),
                ("time", ctypes.c_char_p)]


class FileSpec(ctypes.Structure):
    _fields_ = [("form", ctypes.c_int), ("name", ctypes.c_char_p), ("binary", ctypes.c_int),
                ("device_id", ctypes.c_uint32), ("signo", ctypes.c_int), ("tid", ctypes.c_int),
                ("time", ctypes.c_char_p)]


class Stats(ctypes.Structure):
    _fields_ = [("connects", ctypes.c_uint64), ("round_trips", ctypes.c_uint64), ("async_ok", ctypes.c_uint64),
                ("async_failed", ctypes.c_uint64), ("in_flight", ctypes.c_uint32)]


p = ctypes.c_void_p
lib.atrace_client_options_init.argtypes = [ctypes.POINTER(Options)]
lib.atrace_client_options_init.restype = None
lib.atrace_client_open.argtypes = [ctypes.POINTER(Options), ctypes.POINTER(p)]
lib.atrace_client_close.argtypes = [p]
lib.atrace_client_close.restype = None
lib.atrace_client_strerror.argtypes = [ctypes.c_int]
lib.atrace_client_strerror.restype = ctypes.c_char_p
lib.atrace_client_get_stats.argtypes = [p, ctypes.POINTER(Stats)]
lib.atrace_client_status.argtypes = [p, ctypes.c_char_p]
lib.atrace_emit.argtypes = [p, ctypes.POINTER(EventSpec), ctypes.POINTER(FileSpec), ctypes.c_char_p, ctypes.c_size_t,
                            ctypes.c_uint, ctypes.c_char_p, ctypes.c_size_t]
lib.atrace_event_begin.argtypes = [p, ctypes.POINTER(EventSpec), ctypes.POINTER(p)]
lib.atrace_event_end.argtypes = [p, ctypes.POINTER(ctypes.c_uint64)]
lib.atrace_file_open.argtypes = [p, ctypes.POINTER(FileSpec), ctypes.POINTER(p)]
lib.atrace_file_write.argtypes = [p, ctypes.c_char_p, ctypes.c_size_t]
lib.atrace_file_get_fd.argtypes = [p, ctypes.POINTER(ctypes.c_int)]
lib.atrace_file_close.argtypes = [p, ctypes.POINTER(ctypes.c_uint64)]
lib.atrace_file_path.argtypes = [p]
lib.atrace_file_path.restype = ctypes.c_char_p


def check(rc, what):
    if rc != 0:
        raise RuntimeError("%s: %s" % (what, lib.atrace_client_strerror(rc).decode()))


def open_client():
    options = Options()
    lib.atrace_client_options_init(ctypes.byref(options))
    options.socket_path = SOCKET
    options.connect_timeout_ms = options.io_timeout_ms = 20000  # a busy CI machine: bounds only
    client = p()
    check(lib.atrace_client_open(ctypes.byref(options), ctypes.byref(client)), "open")
    return client


def emit(client, name, text):
    """One schedule event holding one object file; returns the file's path."""
    path = ctypes.create_string_buffer(PATH_MAX)
    data = text.encode()
    check(lib.atrace_emit(client, ctypes.byref(EventSpec(kind=1, side=0)), ctypes.byref(FileSpec(form=1, name=name.encode())),
                          data, len(data), 0, path, PATH_MAX), "emit " + name)
    return path.value.decode()


def connects(client):
    stats = Stats()
    check(lib.atrace_client_get_stats(client, ctypes.byref(stats)), "stats")
    return stats.connects


client = open_client()
print("emit", emit(client, "py_emit", "emitted from ctypes\n"), flush=True)

event, file, fd = p(), p(), ctypes.c_int(-1)
check(lib.atrace_event_begin(client, ctypes.byref(EventSpec(kind=1)), ctypes.byref(event)), "begin")
check(lib.atrace_file_open(event, ctypes.byref(FileSpec(form=1, name=b"py_steps")), ctypes.byref(file)), "open file")
check(lib.atrace_file_write(file, b"by request\n", 11), "write")
check(lib.atrace_file_get_fd(file, ctypes.byref(fd)), "get fd")
os.write(fd.value, b"by descriptor\n")  # the library's descriptor: it closes it, not us
steps = lib.atrace_file_path(file).decode()
check(lib.atrace_file_close(file, None), "close file")
check(lib.atrace_event_end(event, None), "end")
print("steps", steps, flush=True)

# Threads whose first calls race each other's.
start = threading.Barrier(9)
paths, failures = [], []


def racer(i):
    start.wait()
    try:
        own = open_client()
        paths.append(emit(own, "py_own_%d" % i, "thread %d, own handle\n" % i))
        lib.atrace_client_close(own)
        paths.append(emit(client, "py_shared_%d" % i, "thread %d, shared handle\n" % i))
    except RuntimeError as e:
        failures.append(str(e))


racers = [threading.Thread(target=racer, args=(i,)) for i in range(8)]
for t in racers:
    t.start()
start.wait()
for t in racers:
    t.join()
for path in sorted(paths):
    print("thread", path, flush=True)

# multiprocessing's fork while another thread is inside the library on a handle of its own:
# STATUS round trips, which make no directory (a stream of events would age this test's out).
worker_client = open_client()
stop = threading.Event()
worker_done = []


def worker():
    status = ctypes.create_string_buffer(8192)  # atrace_status up to root: what status fills
    while not stop.is_set():
        try:
            check(lib.atrace_client_status(worker_client, status), "status")
        except RuntimeError as e:
            failures.append(str(e))
            return
        worker_done.append(1)


def child():
    print("child inherited", emit(client, "py_child", "child, inherited handle\n"), flush=True)
    print("child connects", connects(client), flush=True)
    lib.atrace_client_close(client)  # the child's copy of the socket only
    sys.exit(0)


busy = threading.Thread(target=worker)
busy.start()
while not worker_done and not failures:
    stop.wait(0.001)
process = multiprocessing.get_context("fork").Process(target=child)
process.start()
process.join()
print("child exit", process.exitcode, flush=True)
print("parent after", emit(client, "py_parent_after", "parent after the child\n"), flush=True)
print("parent connects", connects(client), flush=True)
stop.set()
busy.join()
print("worker connects", connects(worker_client), flush=True)
lib.atrace_client_close(worker_client)
lib.atrace_client_close(client)
print("failures", len(failures), *failures, flush=True)
sys.exit(1 if failures else 0)
