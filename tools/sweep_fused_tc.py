"""Variants of reference/fused_tc.cu (warps per block) timed side by side: which to ship.

Each variant is the file with one constant replaced, built through the grader's path,
checked against float64 and timed with the grader's interleaved do_bench.
"""
import sys
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader import compile as build  # noqa: E402
from grader.bench import flops, sdpa  # noqa: E402
from grader.check import make_inputs, truth  # noqa: E402
from grader.config import Shape, load  # noqa: E402
from grader.gpu import time_events_interleaved  # noqa: E402
from grader.parse import parse  # noqa: E402

SHAPES = [Shape(1, 8, 128, 64), Shape(1, 8, 512, 64), Shape(1, 8, 1024, 64), Shape(4, 16, 4096, 64),
          Shape(1, 8, 1024, 128), Shape(4, 16, 4096, 128)]
cfg = load()
src = parse(REPO / "reference" / "fused_tc.cu").sources["cuda"]
variants = {}
for warps in (2, 4, 8):
    text = src.text.replace("constexpr int kWarps = 4;", f"constexpr int kWarps = {warps};")
    result, kernel = build.compile_source(replace(src, text=text), cfg)
    if not result.ok:
        print(f"kWarps={warps}: compile failed\n{result.log}")
        continue
    variants[f"warps{warps}"] = kernel
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
    t = time_events_interleaved(fns, [(q, k, v)])
    line = "  ".join(f"{n} {t[n].median_ms * 1e3:8.1f}us ({t['sdpa'].median_ms / t[n].median_ms:4.2f}x, "
                     f"{flops(shape) / t[n].median_ms / 1e9:5.1f} TF, err {errs.get(n, 0):.1e})" for n in fns)
    print(f"{str(shape):<24} {line}", flush=True)
