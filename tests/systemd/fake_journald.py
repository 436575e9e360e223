#!/usr/bin/env python3
"""A stand-in for journald, for the fleet journal test: it binds journald's native socket
(in a private mount namespace, where /run/systemd is a tmpfs of the test's own), takes the
datagrams sd_journal_sendv sends (KEY=value lines, or KEY, a little-endian u64 length and the
bytes), and writes them in the Journal Export Format with the trusted fields journald adds
(__REALTIME_TIMESTAMP, __MONOTONIC_TIMESTAMP, _BOOT_ID, _HOSTNAME), until the stop file appears.

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
            data = s.recv(1 << 20)
        except socket.timeout:
            continue
        now = time.time_ns() // 1000
        mono = time.monotonic_ns() // 1000
        entry = [b"__REALTIME_TIMESTAMP=%d" % now, b"__MONOTONIC_TIMESTAMP=%d" % mono,
                 b"_BOOT_ID=" + boot_id.encode(), b"_HOSTNAME=" + hostname.encode()]
        entry += fields(data)
        # Export format: a field with a newline in it would need the binary form; ours have none.
        out.write(b"\n".join(f for f in entry if b"\n" not in f) + b"\n\n")
        out.flush()
