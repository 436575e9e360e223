#!/usr/bin/env python3
"""A stand-in for journald, for the fleet journal test: it binds journald's native socket
(in a private mount namespace, where /run/systemd is a tmpfs of the test's own), takes the
datagrams sd_journal_sendv sends (KEY=value lines, or KEY, a little-endian u64 length and the
bytes), and writes them in the Journal Export Format with the trusted fields journald adds
(__REALTIME_TIMESTAMP, __MONOTONIC_TIMESTAMP, _BOOT_ID, _HOSTNAME, and from the sender's
credentials as the kernel passes them, SCM_CREDENTIALS, _PID, _UID, _GID and _COMM), until the
stop file appears. Fields a sender names with a leading '_' are dropped, as journald drops them.

usage: fake_journald.py SOCKET OUT.export HOSTNAME STOPFILE READYFILE
"""
import os
import socket
import struct
import sys
import time
import uuid

sock_path, out_path, hostname, stop_path, ready_path = sys.argv[1:6]
boot_id = uuid.uuid4().hex
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind(sock_path)
s.settimeout(0.2)
open(ready_path, "w").close()


def fields(data):
    out = []
    i = 0
    while i < len(data):
        nl = data.find(b"\n", i)
        if nl < 0:
            break
        line = data[i:nl]
        if b"=" in line:
            out.append(line)
            i = nl + 1
        else:  # binary-safe form
            (n,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            value = data[nl + 9:nl + 9 + n]
            out.append(line + b"=" + value)
            i = nl + 9 + n + 1
    return out


with open(out_path, "wb") as out:
    while not os.path.exists(stop_path):
        try:
            data, ancillary, _, _ = s.recvmsg(1 << 20, socket.CMSG_SPACE(12))
        except socket.timeout:
            continue
        trusted = []
        for level, kind, cred in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(cred) >= 12:
                pid, uid, gid = struct.unpack("<iII", cred[:12])
                trusted += [b"_PID=%d" % pid, b"_UID=%d" % uid, b"_GID=%d" % gid]
                try:
                    with open("/proc/%d/comm" % pid, "rb") as f:
                        trusted.append(b"_COMM=" + f.read().rstrip(b"\n"))
                except OSError:
                    pass
        now = time.time_ns() // 1000
        mono = time.monotonic_ns() // 1000
        entry = [b"__REALTIME_TIMESTAMP=%d" % now, b"__MONOTONIC_TIMESTAMP=%d" % mono,
                 b"_BOOT_ID=" + boot_id.encode(), b"_HOSTNAME=" + hostname.encode()]
        entry += trusted + [f for f in fields(data) if not f.startswith(b"_")]
        # Export format: a field with a newline in it would need the binary form; ours have none.
        out.write(b"\n".join(f for f in entry if b"\n" not in f) + b"\n\n")
        out.flush()
