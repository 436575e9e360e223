#!/usr/bin/env python3
"""Synthetic bundles of `atracectl export --format tar` for bench/fleet_bench.sh: BUNDLES hosts,
RANKS ranks per host, each rank a process directory with RINGS ring files of RECORDS records
and a dump's stack report of THREADS threads (the main one blocked in wait_allreduce, one rank
in load_next_batch). Written straight as .tar.gz (gzip level 1) with bundle.jsonl first.

usage: fleet_bundles.py OUT_DIR BUNDLES RANKS RINGS RECORDS THREADS
"""
import io
import os
import sys
import tarfile

out_dir, bundles, ranks, rings, records, threads = sys.argv[1], *map(int, sys.argv[2:7])
os.makedirs(out_dir, exist_ok=True)
world = bundles * ranks
stuck = world // 2 + 1


def member(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1796537400
    tar.addfile(info, io.BytesIO(data))


def stack(pid, fn):
    lines = ["atraced: process %d (train) dumped from outside; it runs on" % pid, "", "[process]",
             "crash reason:35", "crash pid:%d" % pid, "crash tid:%d" % pid, "", "[stack]"]
    for t in range(threads):
        tid = pid if t == 0 else pid + t
        lines.append("Thread %d (%d, %s)" % (t + 1, tid, "train" if t == 0 else "worker%d" % t))
        if t == 0:
            frames = ["__futex_abstimed_wait", fn, "step", "main", "__libc_start_main", "_start"]
        else:
            frames = ["epoll_wait", "worker_loop_%d" % (t % 4), "start_thread", "clone3"]
        for i, f in enumerate(frames):
            lines.append("#%d 0x%016x 0x0000000000400000 /opt/job/train %s+0x%x" % (i, 0x401000 + i * 16, f, i))
    lines += ["", "[maps]", ""]
    return ("\n".join(lines) + "\n").encode()


for b in range(bundles):
    host = "node%04d" % b
    meta = ['{"record":"host","format":1,"host":"%s","boot_id":"b%d","exported_unix_us":1796537500000000,'
            '"utc_offset_s":0,"realtime_us":1,"monotonic_us":1,"boottime_us":1,"clock_synchronized":true,'
            '"adjtimex":"TIME_OK"}' % (host, b)]
    files = []
    for k in range(ranks):
        rank = b * ranks + k
        pid = 10000 + k * 100
        proc = "trace_%d_%d_20261206060000000000" % (pid, pid)
        event = "schedule_event_%d_20261206061000000000" % pid
        rel = proc + "/" + event
        meta.append('{"record":"dir","path":"%s","pid":%d,"comm":"train","kind":"schedule","side":"host",'
                    '"device_id":0,"created_unix_us":1796537400000000,"job":"J1","rank":%d,"world_size":%d}'
                    % (rel, pid, rank, world))
        for r in range(rings):
            text = "".join("2026-12-06 06:%02d:%02d.%03d.%03d ring %d record %d of rank %d\n"
                           % (i // 60000 % 60, i // 1000 % 60, i % 1000, rank % 1000, r, i, rank) for i in range(records))
            files.append(("atrace/%s/schedule_tracer_R%d.txt" % (rel, r), text.encode()))
        files.append(("atrace/%s/stackcore_tracer_35_%d_train_20261206061000000000.txt" % (rel, pid),
                      stack(pid, "load_next_batch" if rank == stuck else "wait_allreduce")))
    with tarfile.open(os.path.join(out_dir, host + ".tar.gz"), "w:gz", compresslevel=1) as tar:
        member(tar, "bundle.jsonl", ("\n".join(meta) + "\n").encode())
        for name, data in files:
            member(tar, name, data)
