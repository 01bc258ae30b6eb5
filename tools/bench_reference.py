"""`make bench-reference`: reference naive and fused vs SDPA, with the grader's harness.

On a GPU (the CUDA references, and the Triton ones where Triton is installed):
(B, H, D) = (1, 8, 64) at S = 128/512/1024, (4, 16, 4096, 64), and the D = 128
variants; times (the grader's headline method per size), TFLOP/s, speedup vs SDPA, % of
the GPU's fp32 FMA peak, and each kernel's max error against float64.
On a CPU: the handout sizes with the CPU harness. Prints a table; --json writes it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader.build import compile as build  # noqa: E402
from grader.judge.bench import flops, sdpa, time_cpu  # noqa: E402
from grader.judge.check import make_inputs, truth  # noqa: E402
from grader.core.config import Shape, load  # noqa: E402
from grader.build.parse import parse  # noqa: E402

GPU_SHAPES = [Shape(1, 8, 128, 64), Shape(1, 8, 512, 64), Shape(1, 8, 1024, 64), Shape(4, 16, 4096, 64),
              Shape(1, 8, 128, 128), Shape(1, 8, 512, 128), Shape(1, 8, 1024, 128), Shape(4, 16, 4096, 128)]
CPU_SHAPES = [Shape(1, 8, 128, 64), Shape(1, 8, 512, 64), Shape(1, 8, 1024, 64)]
FP32_LANES_PER_SM = {(8, 0): 64, (8, 6): 128, (8, 9): 128, (9, 0): 128, (10, 0): 128}


def gpu_fp32_peak_tflops() -> float | None:
    """SMs x FP32 lanes x 2 (FMA) x max SM clock: the fp32 FMA limit of this GPU."""
    from grader.core.system import _nvidia_smi
    props = torch.cuda.get_device_properties(0)
    lanes = FP32_LANES_PER_SM.get((props.major, props.minor))
    smi = _nvidia_smi("clocks.max.sm")
    if lanes is None or not smi:
        return None
    return props.multi_processor_count * lanes * 2 * float(smi[0]) * 1e6 / 1e12


def kernels(kind: str, cfg):
    out = {}
    files = {"naive": "naive", "fused": "fused", "fused_opt": "fused_tc" if kind == "cuda" else "fused_opt"}
    for name, stem in files.items():
        src = parse(REPO / "reference" / f"{stem}.{'cu' if kind == 'cuda' else 'cpp'}").sources[kind]
        result, kernel = build.compile_source(src, cfg)
        if not result.ok:
            sys.exit(f"reference {name} did not compile:\n{result.log}")
        print(f"built {name}: {'cached' if result.cached else f'{result.seconds:.1f} s'}", file=sys.stderr)
        out[name] = kernel
    return out


def triton_kernels() -> dict:
    """The Triton references (reference/*.triton.py), if Triton is installed: imported as
    the grader's child imports them (grader/judge/worker.py load_triton)."""
    try:
        import triton  # noqa: F401
    except ImportError:
        print("triton is not installed: the Triton references are left out", file=sys.stderr)
        return {}
    from grader.judge.worker import load_triton
    return {f"triton_{name}": load_triton(str(REPO / "reference" / f"{name}.triton.py")) for name in ("naive", "fused")}


def max_err(fn, q, k, v, expected) -> float:
    return float((fn(q, k, v).double() - expected).abs().max())


def run_gpu(cfg) -> list[dict]:
    """The grader's own GPU harness (grader/judge/gpu.py): fresh inputs per call; CUDA
    graphs at S <= GRAPH_MAX_S when every kernel can be captured (no L2 flush), else CUDA events (L2 flushed
    before each call)."""
    from grader.judge.gpu import GRAPH_MAX_S, sdpa_backend, time_events_interleaved, time_graph_all
    refs = {**kernels("cuda", cfg), **triton_kernels()}
    peak = gpu_fp32_peak_tflops()
    rows = []
    for shape in GPU_SHAPES:
        q, k, v = make_inputs(shape, seed=shape.S + shape.D, device="cuda")
        expected = truth(q, k, v)
        errors = {n: max_err(f, q, k, v, expected) for n, f in refs.items()}
        backend = sdpa_backend(q)
        del q, k, v, expected
        torch.cuda.empty_cache()
        fns = {"sdpa": sdpa, **refs}
        events = {n: t.median_ms for n, t in time_events_interleaved(fns, shape).items()}
        graphs = time_graph_all(fns, shape) if shape.S <= GRAPH_MAX_S else None
        ms = {n: t.median_ms for n, t in graphs.items()} if graphs else events
        rows.append(row(shape, ms, peak, "cudagraph" if graphs else "events", errors, events, backend))
        torch.cuda.empty_cache()
    return rows


def run_cpu(cfg) -> list[dict]:
    refs = kernels("cpp", cfg)
    rows = []
    for shape in CPU_SHAPES:
        fns = {"sdpa": sdpa, **refs}
        timings = time_cpu(fns, shape, cfg, seed=shape.S)
        q, k, v = make_inputs(shape, seed=shape.S)
        expected = truth(q, k, v)
        rows.append(row(shape, {n: t.median_ms for n, t in timings.items()}, None, "cpu-perf_counter",
                        {n: max_err(f, q, k, v, expected) for n, f in refs.items()}, {}, "cpu"))
    return rows


def row(shape, ms, peak, method, errors, events, backend) -> dict:
    """One table row: times, TFLOP/s, speedup vs SDPA and % of peak for every kernel."""
    n = flops(shape)
    r = {"B": shape.B, "H": shape.H, "S": shape.S, "D": shape.D, "method": method,
         "max_err": errors, "do_bench_ms": events, "sdpa_backend": backend}
    for name, t in ms.items():
        tflops = n / (t * 1e-3) / 1e12
        r[f"{name}_ms"] = t
        r[f"{name}_tflops"] = tflops
        r[f"{name}_speedup_vs_sdpa"] = ms["sdpa"] / t
        r[f"{name}_pct_of_fp32_peak"] = (100 * tflops / peak) if peak else None
    return r


def print_table(rows: list[dict], device: str, peak) -> None:
    unit, scale = ("TFLOP/s", 1.0) if device == "cuda" else ("GFLOP/s", 1e3)
    names = [n for n in ("sdpa", "naive", "fused", "fused_opt", "triton_naive", "triton_fused") if f"{n}_ms" in rows[0]]
    where = torch.cuda.get_device_name(0) if device == "cuda" else "CPU"
    print(f"\nreference kernels vs F.scaled_dot_product_attention (fp32) on {where}"
          + (f"; fp32 FMA peak {peak:.1f} TFLOP/s" if peak else ""))
    print("per kernel: time ms | " + unit + " | speedup vs SDPA (> 1: faster than SDPA)"
          + (" | % of fp32 FMA peak" if peak else "") + "; max error vs float64")
    for r in rows:
        print(f"\n  B,H,S,D = {r['B']},{r['H']},{r['S']},{r['D']}  ({r['method']}, SDPA backend {r['sdpa_backend']})")
        for n in names:
            pct = "" if r[f"{n}_pct_of_fp32_peak"] is None else f" {r[f'{n}_pct_of_fp32_peak']:>5.0f}%"
            err = f"  max_err {r['max_err'][n]:.1e}" if n in r["max_err"] else ""
            print(f"    {n:<10} {r[f'{n}_ms']:>10.4f} ms {r[f'{n}_tflops'] * scale:>9.2f} "
                  f"{r[f'{n}_speedup_vs_sdpa']:>7.2f}x{pct}{err}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    device = args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    cfg = load()
    if device == "cpu":
        torch.set_num_threads(cfg.threads or torch.get_num_threads())
    rows = run_gpu(cfg) if device == "cuda" else run_cpu(cfg)
    peak = gpu_fp32_peak_tflops() if device == "cuda" else None
    print_table(rows, device, peak)
    if args.json:
        Path(args.json).write_text(json.dumps({"device": device, "peak_tflops": peak, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
