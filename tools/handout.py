"""Keep the handout's numbers equal to the config and the models they come from.

`assignment/README.md` holds blocks between `<!-- BEGIN generated:NAME -->` and
`<!-- END generated:NAME -->`; this script writes them from assignment/config.toml,
grader/ai_model.py and grader/roofline.py, so the configs, rubric, deadline, AI table
and ridge points are quoted, never retyped.

    python tools/handout.py            # rewrite the blocks in place
    python tools/handout.py --check    # exit 1 if a block is stale (tests/test_handout.py)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader import ai_model, config, roofline  # noqa: E402
from grader.diagnose import EXP_OVERFLOW  # noqa: E402

HANDOUT = REPO / "assignment" / "README.md"
BLOCK = re.compile(r"(<!-- BEGIN generated:(\w+) -->\n)(.*?)(<!-- END generated:\2 -->)", re.S)


def _shape(s: config.Shape) -> str:
    return f"{s}" + (f", q and k × {s.qk_std:g}" if s.qk_std != 1 else "")


def _configs(cfg: config.Config) -> str:
    rows = ["| config | B | H | S | D | q, k scaled by |", "|---|---|---|---|---|---|"]
    rows += [f"| {i + 1} | {s.B} | {s.H} | {s.S} | {s.D} | {s.qk_std:g} |" for i, s in enumerate(cfg.configs)]
    text = "\n".join(rows) + (f"\n\nA config passes when max |out − truth| < **{cfg.tolerance:g}**, truth computed "
                              f"in float64 from fresh inputs (standard normal, public seed {cfg.seed}; the "
                              "instructor may use hidden configs and a secret seed).\n")
    for i, s in enumerate(cfg.configs):
        if s.qk_std != 1:
            text += (f"\nConfig {i + 1} tests numerical stability: q and k are multiplied by {s.qk_std:g}, so "
                     f"the scores q·k/√D have a standard deviation of {s.qk_std ** 2:g} and reach the hundreds; "
                     f"`exp` overflows float32 above {EXP_OVERFLOW:.1f}, so a softmax that does not subtract each row's maximum "
                     "returns inf/inf = NaN there. v stays standard normal, so the output and the tolerance mean "
                     "what they mean on the other configs.\n")
    return text


def _benchmark(cfg: config.Config) -> str:
    from grader import gpu
    b = cfg.bench_shapes[0]
    sizes = ", ".join(str(s.S) for s in cfg.bench_shapes)
    return (f"Shapes: B = {b.B}, H = {b.H}, D = {b.D}, S = {sizes}; float32.\n\n"
            f"- **CUDA**: `triton.testing.do_bench` (CUDA events, L2 flushed before every call, warm-up "
            f"excluded), {gpu.ROUNDS - 1} interleaved rounds of {gpu.ROUND_MS} ms per kernel (yours, SDPA, "
            f"the references) over {gpu.INPUT_SETS} input sets; at S ≤ {gpu.GRAPH_MAX_S} "
            "`do_bench_cudagraph` (launch overhead removed) is the headline when every kernel can be "
            "captured. The figure is the median of the round medians.\n"
            f"- **CPU**: `time.perf_counter` around each call, kernels interleaved, {cfg.warmup_reps} "
            f"warm-up calls, then {cfg.min_reps}–{cfg.max_reps} timed calls (about {cfg.rep_ms:g} ms per "
            "kernel); the median.\n\n"
            "Your output of the last timed call is checked again against float64: a kernel must be "
            "right when timed, not only on the check inputs.\n")


def _rubric(path: Path) -> str:
    rubric, _ = config.load_rubric(path)
    cfg = config.load(path)
    rows = ["| item | points |", "|---|---|"]
    for i, (shape, pts) in enumerate(zip(cfg.configs, rubric.config_points)):
        rows.append(f"| correctness, config {i + 1} ({_shape(shape)}) | {pts:g} |")
    if rubric.hidden_points:
        rows.append(f"| correctness, each hidden config (if any) | {rubric.hidden_points:g} |")
    for m, p in rubric.performance:
        rows.append(f"| speed: slowdown vs SDPA at S = {max(s.S for s in cfg.bench_shapes)} ≤ {m:g}x "
                    f"(best tier met) | {p:g} |")
    rows.append(f"| profiler evidence in `profiles/` | {rubric.profile_points:g} |")
    rows.append(f"| profiles before *and* after optimising (two labels) | {rubric.before_after_points:g} |")
    rows.append(f"| each of the four written sections of `report.md` | {rubric.written_points:g} |")
    return "\n".join(rows) + (f"\n\nTotal without hidden configs: **{rubric.max_score(0):g}**. Speed points need "
                              "the verdict `ok`; a `cheat_suspected` verdict scores 0 until reviewed.\n")


def _deadline(path: Path) -> str:
    _, d = config.load_rubric(path)
    if d is None:
        return "No deadline is configured.\n"
    return (f"Due **{d.due.isoformat()}**, with {d.grace_minutes:g} minutes of grace. Each started day late "
            f"costs {d.penalty_per_day:.0%} of the score; later than {d.max_late_days:g} days scores 0.\n")


def _ai(cfg: config.Config) -> str:
    b = cfg.bench_shapes[0]
    rows = ["| S | kernel | GFLOP | MB moved | AI (FLOP/byte) |", "|---|---|---|---|---|"]
    for r in ai_model.table([(b.B, b.H, s.S, b.D) for s in cfg.bench_shapes]):
        rows.append(f"| {r['S']} | {r['kernel']} | {r['flops'] / 1e9:.4f} | {r['bytes'] / 1e6:.2f} | {r['ai']:.2f} |")
    t = ai_model.trend([s.S for s in cfg.bench_shapes], b.B, b.H, b.D)
    return ("\n".join(rows) + f"\n\n(B = {b.B}, H = {b.H}, D = {b.D}, fp32; each tensor moved once per kernel, "
            "caches ignored; a multiply-add is 2 FLOPs; the softmax's max, subtract, exp, sum and divide "
            f"count 1 FLOP each per score.) From S = {t['S'][0]} to {t['S'][1]} the naive total goes from "
            f"{t['naive_ai'][0]:.2f} to {t['naive_ai'][1]:.2f} FLOP/byte (×{t['naive_factor']:.2f}) and the "
            f"fused kernel from {t['fused_ai'][0]:.2f} to {t['fused_ai'][1]:.2f} (×{t['fused_factor']:.2f}).\n")


def _roofline() -> str:
    rows = ["| GPU | FP32 peak | DRAM | ridge (DRAM) | L2 | ridge (L2) |", "|---|---|---|---|---|---|"]
    for c in roofline.GPU_TABLE.values():
        dram, l2 = c.bandwidth_bytes_per_s["DRAM"], c.bandwidth_bytes_per_s["L2"]
        rows.append(f"| {c.device} | {c.peak_flop_per_s / 1e12:.1f} TFLOP/s | {dram / 1e12:.2f} TB/s | "
                    f"{c.ridge('DRAM'):.1f} FLOP/byte | {l2 / 1e12:.1f} TB/s | {c.ridge('L2'):.1f} FLOP/byte |")
    return "\n".join(rows) + ("\n\n(FP32 = SMs × 128 lanes × 2 FLOPs × 1.98 GHz boost clock; DRAM from the datasheet; "
                              "L2 as Nsight Compute measured it on an H200. `make profile` uses the peaks Nsight "
                              "Compute reports for your GPU instead.)\n")


def _ncu() -> str:
    from grader.profile import ncu_commands
    cmds = ncu_commands("python -m grader.profile_driver student_template/attention.py", "before",
                        "student_template/profiles")
    return "```sh\n" + "\n".join(cmds) + "\n```\n"


def blocks(path: Path = config.DEFAULT_CONFIG) -> dict[str, str]:
    cfg = config.load(path)
    return {"configs": _configs(cfg), "benchmark": _benchmark(cfg), "rubric": _rubric(path),
            "deadline": _deadline(path), "ai": _ai(cfg), "roofline": _roofline(), "ncu": _ncu()}


def render(text: str, generated: dict[str, str]) -> str:
    def fill(m: re.Match) -> str:
        if m[2] not in generated:
            raise SystemExit(f"{HANDOUT}: unknown generated block {m[2]!r} (known: {', '.join(generated)})")
        return m[1] + generated[m[2]] + m[4]
    return BLOCK.sub(fill, text)


def main() -> int:
    text = HANDOUT.read_text()
    new = render(text, blocks())
    if "--check" in sys.argv:
        if new != text:
            print(f"{HANDOUT} is stale: run python tools/handout.py", file=sys.stderr)
            return 1
        print("handout up to date")
        return 0
    HANDOUT.write_text(new)
    print(f"{HANDOUT} updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
