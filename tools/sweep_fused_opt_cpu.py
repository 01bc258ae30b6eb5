"""reference/fused_opt.cpp against an earlier version of itself and SDPA on this CPU, with
the grader's interleaved CPU harness (2 threads), in one process.

    python3 tools/sweep_fused_opt_cpu.py [OLD_SOURCE_FILE]

OLD_SOURCE_FILE is the earlier kernel's C++ source, e.g.
`git show REV:reference/fused_opt.cpp > /tmp/old.cpp`.
"""
import sys
from dataclasses import replace
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import torch
from grader.build import compile as build
from grader.judge.bench import sdpa, time_cpu
from grader.judge.check import truth, make_inputs
from grader.core.config import Shape, load
from grader.build.parse import parse
cfg = load()
torch.set_num_threads(2)
src = parse(Path(__file__).resolve().parent.parent / "reference" / "fused_opt.cpp").sources["cpp"]
variants = {"shipped": src.text}
if len(sys.argv) > 1:
    variants["old"] = Path(sys.argv[1]).read_text()
fns = {"sdpa": sdpa}
for name, text in variants.items():
    res, k = build.compile_source(replace(src, text=text), cfg)
    assert res.ok, res.log
    fns[name] = k
for S in (128, 512, 1024):
    shape = Shape(1, 8, S, 64)
    q, kk, v = make_inputs(shape, 5)
    exp = truth(q, kk, v)
    errs = {n: float((f(q, kk, v).double() - exp).abs().max()) for n, f in fns.items()}
    t = time_cpu(fns, shape, cfg, 7)
    base = t["sdpa"].median_ms
    print(f"S={S:5d} " + "  ".join(f"{n} {t[n].median_ms:7.2f} ms ({t[n].median_ms / base:4.2f}x, err {errs[n]:.0e})" for n in fns), flush=True)
