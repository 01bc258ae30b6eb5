"""Where one GPU bench request's seconds go (the child's side of grader/judge/gpu.py), in one
process on the GPU, with SDPA standing in for every kernel (the harness's cost, not a kernel's).

    python tools/request_cost.py [--sizes 128,512,1024] [--repeat 3]

For each size it prints the wall seconds of: the event method with four kernels (student,
SDPA, two references: a `make grade` request) and with two (student and SDPA alone), the same
without the persisting-L2 reset or the L2 flush before each call, the graph method (S <= 256)
with four and with two kernels, one pool refill, one call observed under torch's profiler
(grader/judge/launches.py, twice per request), and the canaries' bytes through a pipe. The
smallest of `--repeat` runs of each. The GPU verification run uses it to decide what a
request may leave out (tools/gpu_session.sh, phase `reqcost`).
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def best(fn, repeat: int) -> float:
    import torch
    out = float("inf")
    for _ in range(repeat):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out = min(out, time.perf_counter() - t0)
    return out


def pipe_seconds(nbytes: int) -> float:
    """nbytes through a pipe the channel's way (grader/isolation/channel.py): widened, written
    in one piece, read straight into one buffer."""
    from grader.isolation.channel import widen
    r, w = os.pipe()
    widen(w)
    data = bytes(nbytes)
    t = threading.Thread(target=_write_all, args=(w, data))
    t0 = time.perf_counter()
    t.start()
    out = bytearray(nbytes)
    view, got = memoryview(out), 0
    while got < nbytes:
        got += os.readv(r, [view[got:]])
    t.join()
    os.close(r)
    os.close(w)
    return time.perf_counter() - t0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="128,512,1024")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from grader.core.config import Shape
    from grader.judge import gpu
    from grader.judge.launches import observed

    sdpa = F.scaled_dot_product_attention
    four = {"student": sdpa, "sdpa": sdpa, "naive": sdpa, "fused": sdpa}
    two = {"student": sdpa, "sdpa": sdpa}
    print(f"{torch.cuda.get_device_name(0)}; torch {torch.__version__}; ROUNDS {gpu.ROUNDS}, CALLS {gpu.CALLS}, "
          f"REPLAYS {gpu.REPLAYS}, CANARIES {gpu.CANARIES}")
    for S in (int(s) for s in args.sizes.split(",")):
        shape = Shape(B=1, H=8, S=S, D=64)
        row = {}
        row["events4"] = best(lambda: gpu.time_events(four, shape, 1, None, {}), args.repeat)
        row["events2"] = best(lambda: gpu.time_events(two, shape, 1, None, {}), args.repeat)
        reset = gpu.L2Persistence.reset
        gpu.L2Persistence.reset = lambda self: True
        row["events2_noreset"] = best(lambda: gpu.time_events(two, shape, 1, None, {}), args.repeat)
        gpu.L2Persistence.reset = reset
        bytes_ = gpu.L2_FLUSH_BYTES
        gpu.L2_FLUSH_BYTES = 1
        row["events2_noflush"] = best(lambda: gpu.time_events(two, shape, 1, None, {}), args.repeat)
        gpu.L2_FLUSH_BYTES = bytes_
        # the student's calls on counter-based inputs, every output kept, then committed (commit-reveal)
        row["events2_kept"] = best(lambda: gpu.time_events(two, shape, 1, 7, {}), args.repeat)
        kept: dict = {}
        gpu.time_events(two, shape, 1, 7, kept)
        row["commit"] = best(lambda: gpu.commit_outputs(kept, shape), args.repeat)
        if S <= gpu.GRAPH_MAX_S:
            row["graphs4"] = best(lambda: gpu.time_graphs(four, shape, 1, None, {}), args.repeat)
            row["graphs2"] = best(lambda: gpu.time_graphs(two, shape, 1, None, {}), args.repeat)
            # the student's calls on counter-based inputs, every output kept (commit-reveal)
            row["graphs2_kept"] = best(lambda: gpu.time_graphs(two, shape, 1, 7, {}), args.repeat)
        pool = gpu.Pool(shape, gpu.CALLS, 1)
        row["refill"] = best(pool.refill, args.repeat)
        q, k, v = pool.sets[0]
        row["observed_call"] = best(lambda: observed(sdpa, q, k, v), args.repeat)
        row["wall_probe"] = best(lambda: gpu.wall_probe(sdpa, shape, 1), args.repeat)
        canaries = gpu.CANARIES * (2 if S <= gpu.GRAPH_MAX_S else 1)
        row["canary_pipe"] = pipe_seconds(canaries * 4 * shape.B * shape.H * S * shape.D)   # the revealed outputs
        kernel_ms = gpu.time_events({"student": sdpa}, shape, 1, None, {})["student"].median_ms
        print(f"S={S}: SDPA {kernel_ms:.4f} ms a call; " +
              ", ".join(f"{k} {v:.3f} s" for k, v in row.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
