"""`make bench-reference`: reference naive and fused vs SDPA, with the grader's harness.

On a GPU: (B, H, D) = (1, 8, 64) at S = 128/512/1024, (4, 16, 4096, 64), and the D = 128
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

from grader import compile as build  # noqa: E402
from grader.bench import flops, sdpa, time_cpu  # noqa: E402
from grader.check import make_inputs, truth  # noqa: E402
from grader.config import Shape, load  # noqa: E402
from grader.parse import parse  # noqa: E402

GPU_SHAPES = [Shape(1, 8, 128, 64), Shape(1, 8, 512, 64), Shape(1, 8, 1024, 64), Shape(4, 16, 4096, 64),
              Shape(1, 8, 128, 128), Shape(1, 8, 512, 128), Shape(1, 8, 1024, 128), Shape(4, 16, 4096, 128)]
CPU_SHAPES = [Shape(1, 8, 128, 64), Shape(1, 8, 512, 64), Shape(1, 8, 1024, 64)]
FP32_LANES_PER_SM = {(8, 0): 64, (8, 6): 128, (8, 9): 128, (9, 0): 128, (10, 0): 128}


def gpu_fp32_peak_tflops() -> float | None:
    """SMs x FP32 lanes x 2 (FMA) x max SM clock: the fp32 FMA limit of this GPU."""
    from grader.system import _nvidia_smi
    props = torch.cuda.get_device_properties(0)
    lanes = FP32_LANES_PER_SM.get((props.major, props.minor))
    smi = _nvidia_smi("clocks.max.sm")
    if lanes is None or not smi:
        return None
    return props.multi_processor_count * lanes * 2 * float(smi[0]) * 1e6 / 1e12


def kernels(kind: str, cfg):
    out = {}
    for name in ("naive", "fused"):
        src = parse(REPO / "reference" / f"{name}.{'cu' if kind == 'cuda' else 'cpp'}").sources[kind]
        result, kernel = build.compile_source(src, cfg)
        if not result.ok:
            sys.exit(f"reference {name} did not compile:\n{result.log}")
        print(f"built {name}: {'cached' if result.cached else f'{result.seconds:.1f} s'}", file=sys.stderr)
        out[name] = kernel
    return out


def max_err(fn, q, k, v, expected) -> float:
    return float((fn(q, k, v).double() - expected).abs().max())


def run_gpu(cfg) -> list[dict]:
    from grader.gpu import GRAPH_MAX_S, sdpa_backend, time_events, time_graph
    refs = kernels("cuda", cfg)
    peak = gpu_fp32_peak_tflops()
    rows = []
    for shape in GPU_SHAPES:
        q, k, v = make_inputs(shape, seed=shape.S + shape.D, device="cuda")
        expected = truth(q, k, v)
        fns = {"sdpa": lambda: sdpa(q, k, v), **{n: (lambda f=f: f(q, k, v)) for n, f in refs.items()}}
        events = {n: time_events(f).median_ms for n, f in fns.items()}
        graphs = {n: time_graph(f) for n, f in fns.items()} if shape.S <= GRAPH_MAX_S else {}
        use_graph = bool(graphs) and all(t is not None for t in graphs.values())
        ms = {n: t.median_ms for n, t in graphs.items()} if use_graph else events
        rows.append(row(shape, ms, peak, "cudagraph" if use_graph else "do_bench", {
            "naive": max_err(refs["naive"], q, k, v, expected),
            "fused": max_err(refs["fused"], q, k, v, expected)}, events, sdpa_backend(q)))
        del expected
        torch.cuda.empty_cache()
    return rows


def run_cpu(cfg) -> list[dict]:
    refs = kernels("cpp", cfg)
    rows = []
    for shape in CPU_SHAPES:
        fns = {"sdpa": sdpa, **refs}
        timings, _, _ = time_cpu(fns, shape, cfg, seed=shape.S)
        q, k, v = make_inputs(shape, seed=shape.S)
        expected = truth(q, k, v)
        rows.append(row(shape, {n: t.median_ms for n, t in timings.items()}, None, "cpu-perf_counter",
                        {n: max_err(f, q, k, v, expected) for n, f in refs.items()}, {}, "cpu"))
    return rows


def row(shape, ms, peak, method, errors, events, backend) -> dict:
    n = flops(shape)
    fused_tflops = n / (ms["fused"] * 1e-3) / 1e12
    return {"B": shape.B, "H": shape.H, "S": shape.S, "D": shape.D, "method": method,
            "sdpa_ms": ms["sdpa"], "naive_ms": ms["naive"], "fused_ms": ms["fused"],
            "sdpa_tflops": n / (ms["sdpa"] * 1e-3) / 1e12, "fused_tflops": fused_tflops,
            "naive_tflops": n / (ms["naive"] * 1e-3) / 1e12,
            "fused_speedup_vs_sdpa": ms["sdpa"] / ms["fused"],
            "naive_speedup_vs_sdpa": ms["sdpa"] / ms["naive"],
            "fused_pct_of_fp32_peak": (100 * fused_tflops / peak) if peak else None,
            "max_err": errors, "do_bench_ms": events, "sdpa_backend": backend}


def print_table(rows: list[dict], device: str, peak) -> None:
    unit, scale = ("TFLOP/s", 1.0) if device == "cuda" else ("GFLOP/s", 1e3)
    print(f"\nreference kernels vs F.scaled_dot_product_attention (fp32) on {torch.cuda.get_device_name(0) if device == 'cuda' else 'CPU'}"
          + (f"; fp32 FMA peak {peak:.1f} TFLOP/s" if peak else ""))
    head = (f"{'B,H,S,D':<16} {'method':<10} {'SDPA ms':>9} {'naive ms':>9} {'fused ms':>9} "
            f"{'SDPA ' + unit:>14} {'fused ' + unit:>15} {'fused/SDPA':>10} {'naive/SDPA':>10} {'%peak':>6} {'max err (n / f)':>18}")
    print(head)
    print("-" * len(head))
    for r in rows:
        pct = "-" if r["fused_pct_of_fp32_peak"] is None else f"{r['fused_pct_of_fp32_peak']:.0f}%"
        shape = f"{r['B']},{r['H']},{r['S']},{r['D']}"
        print(f"{shape:<16} {r['method']:<10} {r['sdpa_ms']:>9.4f} {r['naive_ms']:>9.4f} {r['fused_ms']:>9.4f} "
              f"{r['sdpa_tflops'] * scale:>14.2f} {r['fused_tflops'] * scale:>15.2f} "
              f"{r['fused_speedup_vs_sdpa']:>9.2f}x {r['naive_speedup_vs_sdpa']:>9.2f}x {pct:>6} "
              f"{r['max_err']['naive']:>8.1e} / {r['max_err']['fused']:.1e}")
    print("speedup = SDPA time / reference time (> 1: the reference is faster)")


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
