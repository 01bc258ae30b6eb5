"""Variants of reference/fused_tc.cu timed side by side: which to ship.

Each variant is the file with constants replaced (or an earlier commit's file), built
through the grader's path, checked against float64 and timed with the grader's
methods (CUDA-graph replays at S <= 256, else interleaved do_bench rounds).

    python3 tools/sweep_fused_tc.py                      # the variants below
    python3 tools/sweep_fused_tc.py --old REV            # ... and REV's fused_tc.cu as "old"
"""
import argparse
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader.build import compile as build  # noqa: E402
from grader.judge.bench import flops, sdpa  # noqa: E402
from grader.judge.check import make_inputs, truth  # noqa: E402
from grader.core.config import Shape, load  # noqa: E402
from grader.judge.gpu import time_events_interleaved, time_graph_all  # noqa: E402
from grader.build.parse import parse  # noqa: E402

SHAPES = [Shape(1, 8, 128, 64), Shape(1, 8, 512, 64), Shape(1, 8, 1024, 64), Shape(4, 16, 4096, 64),
          Shape(1, 8, 128, 128), Shape(1, 8, 512, 128), Shape(1, 8, 1024, 128), Shape(4, 16, 4096, 128)]
# name -> {text to replace: replacement}
VARIANTS = {
    "shipped": {},
    "wide_only": {"if (wide_blocks >= sm_count())": "if (true)"},
    "narrow_only": {"if (wide_blocks >= sm_count())": "if (false)"},
    "nosplit": {"std::min(slots / row_blocks, key_tiles)": "1"},
    # wide blocks: one per SM at D = 64 too (no register cap), or two at D = 128 (32-key tiles)
    "wide1": {"Block<D, 8, 64, D <= 64 ? 2 : 1>": "Block<D, 8, 64>"},
    "wide2_k32": {"Block<D, 8, 64, D <= 64 ? 2 : 1>": "Block<D, 8, D <= 64 ? 64 : 32, 2>"},
}

parser = argparse.ArgumentParser()
parser.add_argument("--old", help="also time this file, or this git revision's reference/fused_tc.cu, as 'old'")
parser.add_argument("--only", nargs="*", help="variant names to run")
args = parser.parse_args()

cfg = load()
src = parse(REPO / "reference" / "fused_tc.cu").sources["cuda"]
texts = {}
for name, edits in VARIANTS.items():
    if args.only and name not in args.only:
        continue
    text = src.text
    for old, new in edits.items():
        assert old in text, (name, old)
        text = text.replace(old, new)
    texts[name] = text
if args.old:     # a file, or a git revision's reference/fused_tc.cu
    texts["old"] = (Path(args.old).read_text() if Path(args.old).is_file() else
                    subprocess.run(["git", "show", f"{args.old}:reference/fused_tc.cu"], cwd=REPO,
                                   capture_output=True, text=True, check=True).stdout)
variants = {}
for name, text in texts.items():
    result, kernel = build.compile_source(replace(src, text=text), cfg)
    if not result.ok:
        print(f"{name}: compile failed\n{result.log}")
        continue
    variants[name] = kernel
for shape in SHAPES:
    q, k, v = make_inputs(shape, 1, "cuda")
    expected = truth(q, k, v)
    errs, runnable = {}, {}
    for n, f in variants.items():
        try:   # a variant may not fit (shared memory) at this D
            errs[n] = float((f(q, k, v).double() - expected).abs().max())
            runnable[n] = f
        except RuntimeError as e:
            print(f"{shape}: {n} cannot run: {str(e).splitlines()[0]}")
    fns = {"sdpa": sdpa, **runnable}
    # the grader's own harness (grader/judge/gpu.py): fresh inputs every call, graphs at small S
    t = (time_graph_all(fns, shape) if shape.S <= 256 else None) or time_events_interleaved(fns, shape)
    line = "  ".join(f"{n} {t[n].median_ms * 1e3:7.1f}µs ({t['sdpa'].median_ms / t[n].median_ms:4.2f}x, "
                     f"{flops(shape) / t[n].median_ms / 1e9:5.1f} TF, err {errs.get(n, 0):.0e})" for n in fns)
    print(f"{shape.B},{shape.H},{shape.S},{shape.D:<4} {line}", flush=True)
