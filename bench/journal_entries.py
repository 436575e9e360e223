#!/usr/bin/env python3
"""Hang entries of a hung job as atraced writes them, for bench/journal_bench.sh: HOSTS hosts of
RANKS ranks each (job J1, world size HOSTS*RANKS), every rank blocked in wait_allreduce_done
but the last rank, in load_next_batch, each entry with 8 frames and 8 last records and the
trusted fields of atraced.service on its host, plus a start entry per rank and one forged
hang entry per host (_UID=1000). Written in the Journal Export Format, one file per host.

usage: journal_entries.py DIR HOSTS RANKS
"""
import os
import sys


def main():
    out, hosts, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    world = hosts * ranks
    t = 1_700_000_000_000_000
    for h in range(hosts):
        host = f"node{h:04d}"
        lines = []
        for k in range(ranks):
            rank = h * ranks + k
            pid = 10_000 + k
            trusted = (f"_BOOT_ID={h:032x}\n_UID=0\n_GID=0\n_COMM=atraced\n_SYSTEMD_UNIT=atraced.service\n"
                       f"_HOSTNAME={host}\nSYSLOG_IDENTIFIER=atraced\n")
            labels = f"ATRACE_PID={pid}\nATRACE_UID=1000\nATRACE_COMM=python3\nATRACE_JOB=J1\nATRACE_RANK={rank}\nATRACE_WORLD_SIZE={world}\n"
            t += 1
            lines.append(f"__REALTIME_TIMESTAMP={t}\n__MONOTONIC_TIMESTAMP={t % 10**9}\n{trusted}"
                         f"MESSAGE=start: pid {pid}\nATRACE_EVENT=start\n{labels}\n")
            odd = rank == world - 1
            frames = ["#0 0x7f0000001010 0x7f0000000000 /lib/x86_64-linux-gnu/libc.so.6 __futex_abstimed_wait+0x10"]
            frames.append("#1 0x401022 0x400000 /opt/job/train load_next_batch+0x22 at loader.c:88" if odd
                          else "#1 0x401122 0x400000 /opt/job/train wait_allreduce_done+0x22 at collective.c:41")
            for f in range(2, 8):
                frames.append(f"#{f} 0x40{f}230 0x400000 /opt/job/train layer_{f}_forward+0x30 at model.c:{100 + f}")
            t += 1
            entry = (f"__REALTIME_TIMESTAMP={t}\n__MONOTONIC_TIMESTAMP={t % 10**9}\n{trusted}"
                     f"MESSAGE=hang: pid {pid}\nATRACE_EVENT=hang\n{labels}ATRACE_STALL_S=300\nATRACE_STATE=blocked\n"
                     f"ATRACE_STALLED_PID={pid}\nATRACE_PATH=trace_{pid}_{pid}_20261206000000000000/schedule_event\n")
            entry += "".join(f"ATRACE_FRAME_{i}={fr}\n" for i, fr in enumerate(frames))
            entry += "".join(f"ATRACE_LAST_RECORD_{i}=tracer{i}: step 4711 of rank {rank}, stream {i}\n" for i in range(8))
            lines.append(entry + "\n")
        t += 1
        lines.append(f"__REALTIME_TIMESTAMP={t}\n__MONOTONIC_TIMESTAMP={t % 10**9}\n_BOOT_ID={h:032x}\n_UID=1000\n"
                     f"_COMM=python3\n_HOSTNAME={host}\nATRACE_EVENT=hang\nATRACE_JOB=J1\nATRACE_RANK=0\n"
                     f"ATRACE_WORLD_SIZE=16777216\nATRACE_PID=666\n\n")
        with open(os.path.join(out, f"{host}.export"), "w") as f:
            f.write("".join(lines))


if __name__ == "__main__":
    main()
