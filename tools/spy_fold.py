"""Fold py-spy's raw (collapsed) stacks into where the seconds went under one function.

    python tools/spy_fold.py SPY.txt 'FUNCTION|DEPTH|PROCESS' [...]

For each 'FUNCTION|DEPTH|PROCESS' (PROCESS: a substring of the process's line, e.g. worker;
empty for every process) it prints the samples under FUNCTION, grouped by the DEPTH frames
below it, in seconds at py-spy's default rate of 200 a second (tools/gpu_session.sh, phase spy).
"""
from __future__ import annotations

import collections
import re
import sys

RATE = 200


def stacks(path: str) -> list[tuple[list[str], int]]:
    out = []
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("process") and re.search(r" \d+$", line):
            stack, n = line.rsplit(" ", 1)
            out.append(([re.sub(r" \(.*\)$", "", f) for f in stack.split(";")], int(n)))
    return out


def under(rows, target: str, depth: int, process: str) -> tuple[int, collections.Counter]:
    agg: collections.Counter = collections.Counter()
    total = 0
    for frames, n in rows:
        if process and not any(process in x for x in frames[:3]):
            continue
        if target in frames:
            i = frames.index(target)
            total += n
            agg[" > ".join(frames[i + 1:i + 1 + depth]) or "(self)"] += n
    return total, agg


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    rows = stacks(argv[0])
    for spec in argv[1:]:
        target, depth, process = (spec.split("|") + ["1", ""])[:3]
        total, agg = under(rows, target, int(depth or 1), process)
        print(f"== {target}: {total / RATE:.1f} s")
        for key, n in agg.most_common(25):
            print(f"  {n / RATE:7.2f} s  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
