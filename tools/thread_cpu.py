"""Which threads of the machine burn CPU, every INTERVAL seconds for SECONDS (a diagnostic for
a grade slower than it should be: a thread spinning beside the judge shows at the top).

    python tools/thread_cpu.py [INTERVAL] [SECONDS]

Each line: the time, then the busiest threads as `ticks:pid/tid:name` (ticks of user and
system time in that interval, 100 a second a core); each process's command line once.
"""
from __future__ import annotations

import os
import sys
import time


def snapshot() -> dict:
    threads = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            threads[(pid, tid)] = (stat[stat.index("(") + 1:stat.rindex(")")], int(fields[11]) + int(fields[12]))
    return threads


def command(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:120]
    except OSError:
        return "?"


def main() -> None:
    interval = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    end = time.time() + (float(sys.argv[2]) if len(sys.argv) > 2 else 60.0)
    named: set = set()
    before = snapshot()
    while time.time() < end:
        time.sleep(interval)
        now = snapshot()
        busy = sorted(((ticks - before.get(key, (name, ticks))[1], key, name)
                       for key, (name, ticks) in now.items()), reverse=True)[:8]
        for ticks, (pid, _), _ in busy:
            if ticks > 0 and pid not in named:
                named.add(pid)
                print(f"  pid {pid}: {command(pid)}")
        print(time.strftime("%T"), "  ".join(f"{t}:{pid}/{tid}:{name}" for t, (pid, tid), name in busy if t > 0),
              flush=True)
        before = now


if __name__ == "__main__":
    main()
