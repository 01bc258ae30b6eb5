"""Keep the documents' numbers equal to the config, the models and the fixtures.

Three documents hold generated blocks: the handout (assignment/README.md) and NOTES
(reference/NOTES.md) between `<!-- BEGIN generated:NAME -->` and `<!-- END generated:NAME -->`,
the model answers (reference/report.md) between `[//]: # (BEGIN generated:NAME)` and
`[//]: # (END generated:NAME)` (Markdown comments: invisible in the report PDF, whose
Markdown reader drops HTML comments' protection). This script writes the blocks from
assignment/config.toml, grader/analysis/ai_model.py, grader/analysis/roofline.py and the figures of
tools/figures.py (the fixtures); tests/test_figures.py checks that no figure outside a
block is typed by hand.

    python tools/handout.py            # rewrite the blocks in place
    python tools/handout.py --check    # exit 1 if a block is stale (tests/test_handout.py)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

import figures as fig  # noqa: E402
from grader.analysis import ai_model, roofline
from grader.core import config  # noqa: E402
from grader.analysis.diagnose import EXP_OVERFLOW  # noqa: E402

HANDOUT = REPO / "assignment" / "README.md"
ANSWERS = REPO / "reference" / "report.md"
NOTES = REPO / "reference" / "NOTES.md"
BLOCKS = {   # marker style -> regex: (start marker, name, body, end marker)
    "html": re.compile(r"(<!-- BEGIN generated:(\w+) -->\n)(.*?)(<!-- END generated:\2 -->)", re.S),
    "md": re.compile(r"(\[//\]: # \(BEGIN generated:(\w+)\)\n)(.*?)(\[//\]: # \(END generated:\2\))", re.S),
}
DOCS = {HANDOUT: "html", ANSWERS: "md", NOTES: "html"}


def _mib(x: float) -> str:
    return f"{x / 2**20:.0f} MiB"


def _at_most(x: float) -> str:
    """The largest of some byte counts: "nothing" when it is 0, else "at most N B"."""
    return "nothing" if x == 0 else f"at most {x:,.0f} B"


def _short(kernel: str) -> str:
    """`void <unnamed>::merge_splits_kernel<64>(const float *, ...)` -> `merge_splits_kernel`."""
    return re.split(r"[<(]", kernel.replace("void ", "").replace("<unnamed>::", ""), maxsplit=1)[0].split("::")[-1]


def _mb(x: float, digits: int = 2) -> str:
    return f"{x / 1e6:.{digits}f} MB"


# ---- the handout -----------------------------------------------------------------------------

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
                     "returns inf/inf = NaN there. v stays standard normal, but the output does not keep the "
                     "other configs' scale: " + _output_scale(cfg, i) + "\n")
    return text


def _numbers(indices: list[int]) -> str:
    """[0, 1, 2] -> "configs 1-3"; [3] -> "config 4"; [0, 2] -> "configs 1, 3"."""
    n = [i + 1 for i in indices]
    if len(n) == 1:
        return f"config {n[0]}"
    if n == list(range(n[0], n[-1] + 1)):
        return f"configs {n[0]}-{n[-1]}"
    return "configs " + ", ".join(map(str, n))


def precision_verdict(per_config: list[tuple[float, float]], cfg: config.Config) -> str:
    """Whether an arithmetic passes, said per config where configs differ: each config's
    errors over the simulated seeds all below the tolerance, all above it, or both."""
    tol = cfg.tolerance
    lo, hi = min(a for a, _ in per_config), max(b for _, b in per_config)
    if hi < tol / 2:
        return "yes"
    if hi < tol:
        return f"yes here, by {tol / hi:.1f}x: a hidden config or seed may not"
    if lo >= tol:
        return "no"
    passing = [i for i, (_, b) in enumerate(per_config) if b < tol]
    failing = [i for i, (a, _) in enumerate(per_config) if a >= tol]
    mixed = [i for i in range(len(per_config)) if i not in passing and i not in failing]
    parts = []
    if passing:
        parts.append(f"{_numbers(passing)} on every seed (worst {max(per_config[i][1] for i in passing):.1e})")
    if failing:
        scaled = [i for i in failing if cfg.configs[i].qk_std != 1]
        why = (f": q, k × {cfg.configs[scaled[0]].qk_std:g} make the scores large, and the operands' rounding "
               "error grows with them" if scaled else "")
        parts.append(f"never {_numbers(failing)} ({min(per_config[i][0] for i in failing):.1e} to "
                     f"{max(per_config[i][1] for i in failing):.1e}{why})")
    if mixed:
        parts.append(f"{_numbers(mixed)} on some seeds only")
    return "passes " + "; ".join(parts)


def _output_scale(cfg: config.Config, scaled: int) -> str:
    """One sentence: the output's spread on the scaled config against the others', and what
    the absolute tolerance is as a share of each (tools/figures.py output_stds)."""
    stds = fig.output_stds()
    others = [stds[j] for j in range(len(stds)) if cfg.configs[j].qk_std == 1]
    lo, hi = min(a for a, _ in others), max(b for _, b in others)
    s_lo, s_hi = stds[scaled]
    tol = cfg.tolerance
    return (f"with scores that large each row's softmax puts its weight on a few keys, so an output entry is "
            f"close to one v entry, standard deviation {s_lo:.2f} to {s_hi:.2f} over the seeds, where the other "
            f"configs average many v rows down to {lo:.2f} to {hi:.2f}. The tolerance {tol:g} is "
            f"{_span(tol / hi, tol / lo, '.1%')} of the output's scale on the others and "
            f"{_span(tol / s_hi, tol / s_lo, '.1%')} here: a tighter bar, relatively.")


def _span(a: float, b: float, spec: str) -> str:
    """"a to b", or one figure where both print alike."""
    x, y = format(a, spec), format(b, spec)
    return x if x == y else f"{x} to {y}"


def _precision(path: Path) -> str:
    cfg, policy = config.load(path), config.load_precision(path)
    m = fig.TF32_MANTISSA_BITS
    names = {"fp32": "FP32 FMA on the CUDA cores", "3xtf32": "3xTF32 on the tensor cores",
             "tf32": "TF32 on the tensor cores"}
    rows = ["| arithmetic of the two products | max error over the configs and seeds | within the tolerance? |",
            "|---|---|---|"]
    per_config = fig.precision_errors_by_config()
    for name, (lo, hi) in fig.precision_errors().items():
        rows.append(f"| {name} | {lo:.1e} to {hi:.1e} | {precision_verdict(per_config[name], cfg)} |")
    truncated = precision_verdict(per_config["tf32 (truncated)"], cfg)
    truncated = "it misses the tolerance on every config" if truncated == "no" else f"it {truncated}"
    return (f"Your kernel returns float32 (section 2), and one rule holds for every submission, enforced the "
            f"same way: max |out − truth| < {cfg.tolerance:g} on every config, the hidden ones and their secret "
            "seed included. The grader does not inspect how you computed. Allowed inside the kernel: "
            f"{'; '.join(names[a] for a in policy.allowed)}. What each costs in accuracy, simulated "
            f"(`tools/figures.py`: the products' operands rounded, fp32 products added in index order, an fp32 "
            "softmax, float64 truth, the "
            f"public configs with seeds {min(fig.SEEDS)} to {max(fig.SEEDS)}):\n\n" + "\n".join(rows) +
            f"\n\nTF32 keeps {m} explicit mantissa bits: rounding to nearest is off by at most 2^-{m + 1} ≈ "
            f"{2.0 ** -(m + 1):.1e} of the value, truncation by 2^-{m} ≈ {2.0 ** -m:.1e}. CUDA's `cvt.rna.tf32.f32` "
            "rounds to nearest; Triton's `tl.dot` on an H100, by default and with `input_precision=\"tf32\"`, "
            f"truncates (measured: `reference/NOTES.md`), and {truncated}. 3xTF32 splits each operand into two "
            "TF32 parts and adds three of their products: fp32-like accuracy at a third of the TF32 rate. The "
            "review flag `beyond_roofline` fires only above the peak of the fastest allowed arithmetic on the "
            "grading GPU (section 5), so a tensor-core kernel is not flagged for beating the FP32 FMA peak.\n")


def _benchmark(cfg: config.Config) -> str:
    from grader.analysis import confidence
    from grader.judge import gpu
    from grader.judge.bench import ROWS_PER_HEAD
    from grader.judge.gpu import CANARIES, detection
    from grader.judge.baseline import GPU_SDPA_CAP
    from grader.judge.judge import SDPA_CAP
    b = cfg.bench_shapes[0]
    sizes = ", ".join(str(s.S) for s in cfg.bench_shapes)
    return (f"Shapes: B = {b.B}, H = {b.H}, D = {b.D}, S = {sizes}; float32.\n\n"
            f"- **CUDA**: CUDA events around each call, the L2 cache flushed ({gpu.L2_FLUSH_BYTES >> 20} MiB "
            f"zeroed) before every event-timed call; {gpu.ROUNDS - 1} interleaved rounds (after a warm-up round) of "
            f"{gpu.CALLS} calls per kernel (yours, SDPA, the references); at S ≤ {gpu.GRAPH_MAX_S} a CUDA graph of "
            f"{gpu.GRAPH_CALLS} calls replayed {gpu.REPLAYS - 1} times (launch overhead removed) is the headline "
            "when every kernel can be captured, and there the L2 is not flushed: the calls of a graph run back to "
            "back, on inputs written just before each replay; at least " + str(confidence.MIN_REQUESTS) + " such sets of rounds, each with "
            "an input pool of its own (fewer only when the cap below comes first). The figure is the median of "
            "the round medians. At each size one round, chosen at random, runs your calls under torch's profiler: "
            "the kernels they launch must be your own (a library's attention kernel there is a cheat, as in "
            "your checked calls), as many as your untimed calls launch; that round is not counted.\n"
            f"- **CPU**: `time.perf_counter` around each call, kernels interleaved, {cfg.warmup_reps} "
            f"warm-up calls, then at least {cfg.min_reps} timed calls and about {cfg.rep_ms:g} ms per "
            "kernel; the median.\n\n"
            f"Then more rounds while the slowdown's {confidence.LEVEL:.0%} interval (a bootstrap over the "
            "paired rounds; on CUDA it also holds what varies between one grade and the next and no round can "
            f"show, a standard deviation of {confidence.RUN_TO_RUN['cuda']:.2%} of the slowdown measured over five "
            f"grades on the H200) is wider than ±{cfg.precision:.0%} of it or straddles a tier boundary, up to "
            f"{cfg.precision_cap_s or confidence.CAP_S['cuda']:g} s of timing per size on CUDA and "
            f"{cfg.precision_cap_s or confidence.CAP_S['cpu']:g} s on the CPU (at most {cfg.max_reps} rounds; a "
            "size timed on a busy machine is timed again, each time with this cap); the results give the "
            "interval and say when the cap came first. An interval still across a tier boundary then is scored "
            f"in your favour, by one tier at most, if it is narrow (within ±{confidence.FAVOUR_WIDTH * cfg.precision:.0%} "
            "and the median that close to the boundary), and marked for the course; a wider one counts for "
            "nothing, the median decides.\n\n"
            "Every timed call gets inputs no call has seen before, so a kernel gains nothing from "
            "remembering answers. On the CPU the grader makes each round's inputs itself and sends them "
            f"just before the round, and checks {ROWS_PER_HEAD} random rows of every head of **every** "
            "output your kernel returns while timed against float64 (taken the moment the call "
            "returns); on CUDA every timed call's inputs are ones the grader can make again, every output is "
            "copied the moment its call ends and committed to (a digest of each sent to the grader), and only "
            f"then does the grader draw {CANARIES} of your timed calls per timing method in every request (at least "
            f"{CANARIES * confidence.MIN_REQUESTS} at each size), uniformly over the timed calls, whose outputs are "
            "checked the same way, so no call can know whether it is checked: "
            f"a kernel wrong on 5% of its timed calls is caught with probability "
            f"{detection(CANARIES * confidence.MIN_REQUESTS):.1%}. A kernel must be right when "
            "timed, not only on the check inputs. The tier is decided by the ratio of the **medians**: "
            "no single fast call moves it. On the CPU the grader also times SDPA in its own process, "
            f"and your slowdown is taken against at most {SDPA_CAP:g}x that (SDPA beside your kernel can "
            "run slower: your OpenMP threads still spinning, say); on CUDA it times SDPA again after the "
            "benchmark, with the same harness, in a clean process on the same GPU, and takes your slowdown "
            f"against at most {GPU_SDPA_CAP:g}x that. On the CPU every call is a request of its own, and "
            "time your call took on the grader's own clock beyond what it reported is charged to your kernel, and where the CPU time of "
            "your timed calls goes is sampled from outside your process: it must be your own code's. If the machine was "
            "busy or the timings spread widely, the summary and the report say so (`bench_quality`).\n")


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


def _ncu() -> str:
    from grader.evidence.profile import ncu_commands
    driver = "python -m grader.evidence.profile_driver student_template/attention.py"
    cold = ncu_commands(driver, "before", "student_template/profiles")
    warm = ncu_commands(driver, "before", "student_template/profiles", warm=True)
    return ("```sh\n# cold: ncu's default flushes every cache before each kernel\n" + "\n".join(cold) +
            "\n# warm: caches kept, the kernels back to back (the whole program is replayed per metric pass)\n"
            + "\n".join(warm) + "\n```\n")


def _flops() -> str:
    B, H, D, _ = fig.bench_shape()
    return ("**One FLOP convention** for the whole course: FLOPs are the two matrix products, a multiply-add "
            "counting 2. Per head Q Kᵀ is 2·S²·D and P V is 2·S²·D, so 4·B·H·S²·D in all: the benchmark's "
            "TFLOP/s, the AI model, the roofline and the review flags all count this. The softmax's operations "
            "(the scale, in the scores kernel, then max, subtract, exp, sum and divide, the softmax kernel's "
            "five) are counted apart as *other operations*, never as FLOPs: at D = "
            f"{D} they would add 6/(4·D) = {600 / (4 * D):.1f}%. A profiler counts something else again "
            "(below: Nsight Compute counts FP32 instructions).\n")


def _ai(cfg: config.Config) -> str:
    b = cfg.bench_shapes[0]
    rows = ["| S | kernel | GFLOP | other Gops | MB read | MB written | AI (FLOP/byte) |", "|---|---|---|---|---|---|---|"]
    for r in ai_model.table([(b.B, b.H, s.S, b.D) for s in cfg.bench_shapes]):
        rows.append(f"| {r['S']} | {r['kernel']} | {r['flops'] / 1e9:.4f} | {r['other_ops'] / 1e9:.4f} | "
                    f"{r['reads'] / 1e6:.2f} | {r['writes'] / 1e6:.2f} | {r['ai']:.2f} |")
    t = ai_model.trend([s.S for s in cfg.bench_shapes], b.B, b.H, b.D)
    lim = ai_model.limits(b.D)
    rows_q = fig.reference_block_rows()
    tiled = ai_model.fused_tiled(b.B, b.H, 1 << 20, b.D, rows_q).ai
    return ("\n".join(rows) + f"\n\n(B = {b.B}, H = {b.H}, D = {b.D}, fp32; each tensor read and written once per "
            "kernel, caches ignored.) From S = "
            f"{t['S'][0]} to {t['S'][1]} the naive total goes from {t['naive_ai'][0]:.2f} to {t['naive_ai'][1]:.2f} "
            f"FLOP/byte (×{t['naive_factor']:.2f}), on its way to D/e = {lim['naive']:g}; its scores and P V kernels "
            f"tend to 2·D/e = {lim['scores']:g} each, and its softmax kernel has no FLOPs at any S "
            f"({lim['softmax_ops_per_byte']:.3f} other operations per byte). The fused kernel goes from "
            f"{t['fused_ai'][0]:.2f} to {t['fused_ai'][1]:.2f} (×{t['fused_factor']:.2f}): S/e, but only while its "
            "re-reads of K and V hit in cache. A tiled kernel reads K and V once per block of query rows; if "
            f"every such re-read came from DRAM, the {rows_q}-row blocks of `reference/fused.cu` would level off "
            f"at 2·{rows_q}/e = {tiled:.0f} FLOP/byte (FlashAttention's Θ(S²·D²/M) traffic for M elements of "
            "on-chip memory). On the GPU those re-reads come from L2, and the profiler's L2→SM count shows "
            "them (Reading Nsight Compute, the L2 level).\n")


def _roofline(path: Path) -> str:
    rows = ["| GPU | FP32 peak | DRAM | ridge (DRAM) | L2 out | ridge (L2 out) |", "|---|---|---|---|---|---|"]
    for c in roofline.GPU_TABLE.values():
        dram, l2 = c.bandwidth_bytes_per_s["DRAM"], c.bandwidth_bytes_per_s[roofline.L2_OUT]
        rows.append(f"| {c.device} | {c.peak_flop_per_s / 1e12:.1f} TFLOP/s | {dram / 1e12:.2f} TB/s | "
                    f"{c.ridge('DRAM'):.1f} FLOP/byte | {l2 / 1e12:.1f} TB/s | {c.ridge(roofline.L2_OUT):.1f} FLOP/byte |")
    sms, hz = roofline.HOPPER_SMS, roofline.HOPPER_BOOST_HZ
    peaks = roofline.precision_ceilings(sms, hz, "9.0")
    allowed = config.load_precision(path).allowed
    ceil = " · ".join(f"{name} {peaks[key] / 1e12:.1f} TFLOP/s" for key, name in
                      (("fp32", "FP32 FMA"), ("3xtf32", "3xTF32"), ("tf32", "TF32")))
    return ("\n".join(rows) + "\n\n(FP32 = SMs × 128 lanes × 2 FLOPs × 1.98 GHz boost clock; DRAM from the "
            "datasheet; L2 out is Nsight Compute's theoretical peak of L2's output, read from an H200 and an H100 export "
            "(the H100's 50 MiB L2 has fewer slices). It bounds what L2 sends out; a line many SMs read at once is sent "
            "once and delivered to each, so the bytes the SMs receive can exceed it (below: the L2 level). "
            f"L2 capacity: {roofline.L2_MIB['H200']} MiB on the H200, "
            f"{roofline.L2_MIB['H100']} MiB on the H100. `make profile` uses the peaks Nsight Compute reports for "
            f"your GPU instead.) Tensor cores have their own roofs: on either GPU ({sms} SMs, {hz / 1e9:.2f} GHz) "
            f"{ceil} (dense TF32: {roofline.FLOP_PER_SM_CLOCK['9.0']['tf32']:,} FLOPs per SM per clock; 3xTF32 "
            "a third of it). The review flag uses the roof of the fastest allowed "
            f"arithmetic ({', '.join(allowed)}).\n")


def _villain() -> str:
    B, H, D, sizes = fig.bench_shape()
    S = max(sizes)
    scores, softmax, weighted = fig.model_naive(S)
    ss_traffic = scores.bytes_written["scores"] + softmax.bytes_moved + weighted.bytes_read["p"]
    total = ai_model.total("naive", [scores, softmax, weighted]).bytes_moved
    return (f"**Why the S × S matrix is the villain.** At S = {S} and {H} heads one S × S tensor is "
            f"{_mib(scores.bytes_written['scores'])}, and the naive version writes and reads two of them (scores, "
            f"then P): {_mb(ss_traffic, 1)} of its {_mb(total, 1)} of traffic. The softmax kernel does no FLOPs, "
            f"{ai_model.limits(D)['softmax_ops_per_byte']:.3f} other operations per byte whatever S is: by the model it "
            "sits far left of any ridge (the profiler shows it does not even reach the memory roof: below). "
            "Fusion removes that traffic, which is why the fused kernel's AI grows with S.\n")


MEMORY_BREAKDOWN = ("L1's data pipe and banks, L2's tags and sectors, the links between L1, L2 and DRAM, "
                    "DRAM's active cycles")


def _memory_pct_figures(S: int) -> dict:
    """What the Memory % definition quotes (grader/analysis/ncu.py BOUND_RULE): the scores
    kernel's L1 data pipe and data banks, the softmax and merge kernels' L2 line above their Memory %."""
    metric = lambda k, m: fig.kernel_metric(f"naive_S{S}", k, f"l1tex__{m}.avg.pct_of_peak_sustained_elapsed")  # noqa: E731
    return {"sc": fig.kernel(f"naive_S{S}", "scores_kernel"), "sm": fig.kernel(f"naive_S{S}", "softmax_rows_kernel"),
            "merge": fig.kernel(f"fused_opt_S{S}", "merge_splits_kernel"),
            "pipe": metric("scores_kernel", "data_pipe_lsu_wavefronts"), "banks": metric("scores_kernel", "data_bank_reads")}


def _simplifies() -> str:
    """Where the original assignment text (../shared/seeds) says it more simply than is true,
    with the model's and the fixtures' figures (issue 28)."""
    import json
    from grader.analysis.ncu import LATENCY_PCT, LIMITER_PCT
    B, H, D, sizes = fig.bench_shape()
    S_lo, S_hi = min(sizes), max(sizes)
    per_head = S_lo * S_lo * 4
    one = H * S_hi * S_hi * 4
    naive = {S: ai_model.total("naive", ai_model.naive(B, H, S, D)) for S in (S_lo, S_hi)}
    limit = ai_model.limits(D)["naive"]
    rows = int(re.search(r"constexpr int kRows = (\d+);", (REPO / "reference" / "fused.cu").read_text()).group(1))
    fu = fig.kernel(f"fused_S{S_hi}", "fused_attention_kernel")
    sc = fig.kernel(f"naive_S{S_hi}", "scores_kernel")
    merge = fig.kernel(f"fused_opt_S{S_hi}", "merge_splits_kernel")
    heavy = fig.kernel(f"naive_S{S_hi}", "_scores", export="triton_h100")
    heavy_rule = fig.ncu_rule(f"naive_S{S_hi}", "_scores", "triton_h100")
    mem = _memory_pct_figures(S_hi)
    opt_rate = ai_model.fused(B, H, S_hi, D).flops / (fig.range_us(f"fused_opt_S{S_hi}") * 1e-6)
    opt_tc = fig.kernel(f"fused_opt_S{S_hi}", "fused_tc_kernel")
    x3_peak = roofline.precision_ceilings(roofline.HOPPER_SMS, roofline.HOPPER_BOOST_HZ, "9.0")["3xtf32"]
    grade = json.loads((fig.RESULTS / "gpu_fused_h200.json").read_text())
    backends = sorted(set(grade["timing"]["sdpa_backend_by_S"].values()))
    items = [
        f"Its size table's \"S×S matrix per head\" is in KiB ({S_lo}² × 4 B = {per_head:,} B = "
        f"{per_head // 1024} KiB), its \"Total\" in MiB, and that total is one S × S tensor: the naive "
        f"kernels write and read two (scores, then P), four passes of {_mib(one)} at S = {S_hi}.",
        "It says the naive kernels' arithmetic intensity *decreases* as S grows. By the model it rises, "
        f"{naive[S_lo].ai:.1f} FLOP/byte at S = {S_lo} and {naive[S_hi].ai:.1f} at S = {S_hi}, towards "
        f"{limit:g} (D/4): FLOPs and S × S bytes both grow as S². That limit is near the DRAM ridge ("
        + ", ".join(f"{c.device} {c.ridge('DRAM'):.1f}" for c in roofline.GPU_TABLE.values())
        + " FLOP/byte), and the softmax kernel in the middle does no FLOPs at all. What gets worse with S is "
        f"the bytes: {_mb(naive[S_hi].bytes_moved, 1)} of traffic at S = {S_hi}, and S × S tensors "
        f"({_mib(2 * one)} together) that no longer fit in L2 ({fig.l2_mib():.0f} MiB on the H200).",
        "\"The current PyTorch Attention Kernel implements the Flash Attention paper\": not for fp32 on the "
        f"GPU. There SDPA runs CUTLASS's memory-efficient attention ({', '.join(backends)} at every benchmark "
        f"size of the course's {grade['system']['gpu']} grade, `tests/fixtures/results`): PyTorch's "
        "FlashAttention kernels take fp16 and bf16 only. Tiled and fused like FlashAttention, but another "
        "kernel. On the CPU, fp32 SDPA is a flash-style kernel of PyTorch's own.",
        "\"HBM traffic drops from O(S²) to O(S)\": fusion removes the S × S tensors, but a tiled kernel "
        f"still reads K and V once per block of rows: S²·D/{rows // 2} floats a head with {rows}-row blocks, "
        "quadratic in S. Only the traffic from DRAM is O(S·D), and only while a head's K and V stay in L2.",
        "\"The kernel crosses from memory-bound to compute-bound\": the course's simple fused kernel, "
        f"profiled at S = {S_hi}, is {fu.bound} (Memory {fu.memory_pct:.1f}%, SM {fu.compute_pct:.1f}%): "
        "neither roof. Fusion moves it right on the roofline, but no course kernel reaches a compute roof: the "
        f"optimised reference, on tensor cores, runs at {opt_rate / 1e12:.1f} TFLOP/s of model FLOPs in the "
        f"profile ({opt_rate / x3_peak:.0%} of its 3xTF32 roof, {x3_peak / 1e12:.1f} TFLOP/s), {opt_tc.bound} as well.",
        "\"Memory Throughput %: percentage of peak HBM bandwidth used\": it is the highest entry of Nsight "
        f"Compute's memory breakdown, each a share of its own peak: {MEMORY_BREAKDOWN}. The naive scores kernel's "
        f"Memory {sc.memory_pct:.1f}% is its L1's LSU data pipe (the wavefronts of its shared-memory and global "
        f"accesses), while its L1 data banks "
        f"read at {mem['banks']:.1f}% of their peak; its DRAM Throughput is {sc.dram_pct:.2f}%.",
        "\"Compute (SM) Throughput %: percentage of peak FLOP rate used\": it is the busiest SM unit's share, "
        f"the issue slots or one pipe. The same kernel's SM {sc.compute_pct:.1f}% is its {sc.sm_unit}, while "
        f"its FP32 rate is {sc.flop_per_s / fig.fp32_peak():.1%} of the peak.",
        "\"Memory% >> Compute% is memory-bound\": Nsight Compute's rule calls a side the limiter only at "
        f"{LIMITER_PCT:g}% or more (memory- or compute-bound here), and both below {LATENCY_PCT:g}% latency-bound, "
        "however far apart: the optimised reference's merge kernel (Memory "
        f"{merge.memory_pct:.1f}%, SM {merge.compute_pct:.1f}%) is {merge.bound}. In between, the busier side is "
        f"where it sends you: the Triton reference's naive scores kernel on an H100 (Memory {heavy.memory_pct:.1f}%, "
        f"SM {heavy.compute_pct:.1f}%) is {heavy.bound}, and ncu says \"{heavy.ncu_verdict}\" and sends you "
        f"\"{_bottleneck(heavy_rule)}\", its Memory % being its {heavy.memory_unit}, though neither side is at "
        f"{LIMITER_PCT:g}% (Reading Nsight Compute, below).",
    ]
    return (f"**What the assignment text simplifies.** The original assignment text is right about the "
            f"villain, and simpler than the truth in {len(items)} places:\n\n" + "".join(f"- {i}\n" for i in items))


def _bottleneck(rule: str) -> str:
    """From an SOLBottleneck rule text, the clause naming the bottleneck: "to identify the L1 bottleneck"."""
    m = re.search(r"to identify the \w+ bottleneck", rule)
    if not m:
        raise LookupError(f"no bottleneck named in ncu's rule text: {rule[:120]!r}")
    return m[0]


def _sol() -> str:
    sc = fig.kernel("naive_S1024", "scores_kernel")
    pv = fig.kernel("naive_S1024", "weighted_sum_kernel")
    sm = fig.kernel("naive_S1024", "softmax_rows_kernel")
    opt = [p for p in fig.range_kernels("fused_opt_S1024")]
    fu = fig.kernel("fused_S1024", "fused_attention_kernel")
    from grader.analysis.ncu import BALANCED_GAP, LATENCY_PCT, LIMITER_PCT, l2_level
    heavy = fig.kernel("naive_S1024", "_scores", export="triton_h100")    # Triton's naive scores, H100
    heavy_rule = fig.ncu_rule("naive_S1024", "_scores", "triton_h100")
    tsm = fig.kernel("naive_S1024", "_softmax", export="triton_h100")
    tsm_rule = fig.ncu_rule("naive_S1024", "_softmax", "triton_h100")
    fma = fig.kernel_metric("naive_S1024", "scores_kernel", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed")
    peak = fig.fp32_peak()
    policy_fp32 = roofline.precision_ceilings(roofline.HOPPER_SMS, roofline.HOPPER_BOOST_HZ, "9.0")["fp32"]
    S = 1024
    _, H, D, _ = fig.bench_shape()
    ops = {k: v / (H * S * S) for k, v in fig.fp32_instructions(f"naive_S{S}", "softmax_rows_kernel").items()}
    model_opt = ai_model.fused(1, H, S, D).flops
    counted_opt = sum(p.flop for p in opt)
    l2_name, _, sm_l2_ai, _ = l2_level(sm)
    mem = _memory_pct_figures(S)
    return (
        "Speed of Light shows two percentages, each the highest entry of its side's breakdown, a unit's (or a "
        "link's) share of its own peak (`python -m grader ncu profiles/*.csv` names the unit that sets it). The examples are the references at S = 1024 "
        "(`tests/fixtures/ncu/references_h200_*.csv`, an H200, the cold export):\n\n"
        "- **SM % (Compute (SM) Throughput)**: the busiest of the SM's units, the instruction issue slots or one "
        "pipe (FMA, ALU, LSU, tensor, …). It is not the FLOP rate. The naive scores kernel shows SM "
        f"{sc.compute_pct:.1f}%: its {sc.sm_unit} are busy {sc.compute_pct:.1f}% of the time (five shared-memory "
        f"loads for every four FMAs), its FMA pipe {fma:.1f}%, and its FP32 rate is {sc.flop_per_s / peak:.1%} of "
        f"the peak ({sc.flop_per_s / 1e12:.1f} of {peak / 1e12:.1f} TFLOP/s: Nsight Compute's FP32 peak in the "
        f"export, at the {fig.fp32_peak_clock_hz() / 1e9:.3f} GHz SM clock it measured; the course's own peaks take "
        f"{roofline.HOPPER_BOOST_HZ / 1e9:.2f} GHz, {policy_fp32 / 1e12:.1f} TFLOP/s).\n"
        f"- **Memory %** (Memory Throughput): the highest entry of the memory breakdown: {MEMORY_BREAKDOWN}. The "
        f"same kernel's {sc.memory_pct:.1f}% is its L1's LSU data pipe (`l1tex__data_pipe_lsu_wavefronts`, "
        f"{mem['pipe']:.1f}%: the wavefronts of its shared-memory and global accesses), while the L1 data banks read at {mem['banks']:.1f}% of their "
        f"peak; its DRAM Throughput is {sc.dram_pct:.2f}%. The P V kernel's {pv.memory_pct:.1f}% is its "
        f"{pv.memory_unit} data pipe too, with DRAM at {pv.dram_pct:.2f}%. Memory % is not the highest of the "
        "L1/TEX, L2 and DRAM lines the section also prints: L2 Cache Throughput is L2's own maximum over more of its "
        f"activity than the breakdown takes. The softmax kernel shows L2 {mem['sm'].l2_pct:.1f}% beside Memory "
        f"{mem['sm'].memory_pct:.1f}%, which is its {mem['sm'].memory_unit}; the optimised reference's merge kernel "
        f"L2 {mem['merge'].l2_pct:.1f}% beside Memory {mem['merge'].memory_pct:.1f}% ({mem['merge'].memory_unit}).\n"
        f"- **Bound**, Nsight Compute's own rule (its SOLBottleneck rule; the details export prints its verdict): a "
        f"side at {LIMITER_PCT:g}% or more limits (compute- or memory-bound: look at that unit); both below "
        f"{LATENCY_PCT:g}% is latency-bound (nothing is busy: too little parallel work, or too few warps to hide "
        "the waits; \"grid too small\" when the grid fills less than one wave of the SMs); in between, balanced "
        f"while the two are within {BALANCED_GAP:g} points, else memory-heavy or compute-heavy (ncu's \"more "
        "heavily utilized\": its rule text sends you to that side's bottleneck, though neither side is at "
        f"{LIMITER_PCT:g}%). "
        f"The scores kernel ({sc.memory_pct:.1f}% and {sc.compute_pct:.1f}%) is {sc.bound}: ncu says \"{sc.ncu_verdict}\", "
        f"not compute-bound on a {abs(sc.compute_pct - sc.memory_pct):.1f}-point lead. The Triton reference's "
        f"naive scores kernel on an H100 (`triton_h100_*.csv`: Memory {heavy.memory_pct:.1f}%, SM "
        f"{heavy.compute_pct:.1f}%) is {heavy.bound}: ncu says \"{heavy.ncu_verdict}\" and sends you "
        f"\"{_bottleneck(heavy_rule)}\" (its Memory % is its {heavy.memory_unit}); the Triton softmax kernel beside it "
        f"(Memory {tsm.memory_pct:.1f}%, SM {tsm.compute_pct:.1f}%) \"{_bottleneck(tsm_rule)}\". Not "
        f"memory-bound (neither side at {LIMITER_PCT:g}%), not balanced. The simple fused kernel "
        f"({fu.memory_pct:.1f}% / {fu.compute_pct:.1f}%) is {fu.bound}: its grid fills {fu.waves_per_sm:.2f} of a "
        "wave.\n"
        "- **The profiler's FLOPs are not the model's.** Nsight Compute counts FP32 instructions, an FFMA as two "
        f"FLOPs (2·FFMA + FADD + FMUL). The softmax kernel executes {sum(ops.values()):.1f} of them per score "
        f"({ops['ffma']:.2f} FFMA, {ops['fadd']:.2f} FADD, {ops['fmul']:.2f} FMUL), "
        f"{sm.flop / (H * S * S):.1f} FLOPs by that count, where the model counts no FLOPs and "
        "five other operations: it evaluates `expf` twice per score, and each `expf` is a handful of FFMA/FADD "
        "instructions around one MUFU.EX2 (which these counters do not see). So its profiler AI "
        f"({sm.ai_dram:.1f} FLOP/byte at DRAM, {sm_l2_ai:.2f} at {l2_name}) has nothing to do with the model's. "
        f"Tensor-core products count nothing: the fused_opt reference's counters see {counted_opt / model_opt:.1%} "
        "of the model's FLOPs (the report then plots it with the model's FLOPs).\n")


def _l2_level() -> str:
    """The two L2 counts, why they differ, and how far fusion moves the kernel at each level
    (issue 28, item 1: the L2 column the course first taught was L2's output)."""
    B, H, D, sizes = fig.bench_shape()
    S = max(sizes)
    rows = fig.reference_block_rows()
    fu = fig.kernel(f"fused_S{S}", "fused_attention_kernel")
    naive = [fig.kernel(f"naive_S{S}", k) for k in ("scores_kernel", "softmax_rows_kernel", "weighted_sum_kernel")]
    assert fu.l2_delivered_bytes == ai_model.fused_tiled(B, H, S, D, rows).reads, \
        "the fixture's L2→SM bytes are no longer the tiled model's reads: reword the paragraph"
    limit = ai_model.fused_tiled(B, H, 1 << 20, D, rows).ai
    smaller = ", ".join(f"{fig.kernel(f'fused_S{s}', 'fused_attention_kernel').ai_l2_delivered:.1f} at S = {s}"
                        for s in sizes[:-1])
    at_l2, at_dram = fig.range_ai(f"naive_S{S}", "l2_delivered_bytes"), fig.range_ai(f"naive_S{S}", "dram_bytes")
    share = max(p.l2_delivered_bytes / p.l2_bytes for p in naive)
    each = ", ".join(f"{p.ai_l2_delivered:.2f} ({n})" for p, n in zip(naive, ("scores", "softmax", "P V")))
    dram_each = f"{min(p.ai_dram for p in naive):.1f} to {max(p.ai_dram for p in naive):.1f}"
    c = roofline.gpu_ceilings(list(fig.fixture()))
    out_peak = fig.l2_out_peak()
    fastest, cold = fig.fastest_l2_delivery(), fig.fastest_l2_delivery((fig.EXPORT,))
    fastest_label = f"{roofline.kernel_label(fastest[2])}, {'warm' if fastest[2].cache == 'warm' else 'cold'}"
    return (
        "**The L2 level: two counts.** Nsight Compute's L2 roofline counts what L2 sends out, 32 B a cycle of "
        "`lts__lts2xbar_cycles_active` (\"L2 out\"); `make profile` also records what the SMs receive from L2, "
        "32 B a sector of `l1tex__m_xbar2l1tex_read_sectors` (\"L2→SM\"), and `python -m grader ncu "
        "profiles/*.csv` and the report show both. They differ where many SMs read the same line at once: L2 "
        "multicasts it, one transfer in L2 out, a copy delivered to each SM in L2→SM. AI at the L2 level is FLOPs "
        "over the bytes the SMs received: the L2→SM count. The simple fused kernel is that case, the "
        f"{S // rows} blocks of a head reading the same K and V. At S = {S} its SMs received "
        f"{fu.l2_delivered_bytes:,.0f} B, exactly the tiled model's reads (Q once, K and V once per {rows}-row "
        f"block), while L2 sent out {_mb(fu.l2_bytes)}. Its AI at L2 is {fu.ai_l2_delivered:.1f} FLOP/byte, "
        f"levelling off at the tiled limit above, 2·{rows}/e = {limit:.0f} ({smaller}), not the {fu.ai_l2:.1f} of "
        f"L2 out. The naive kernels share less (their two counts within {share:.1f}x): {each} FLOP/byte at "
        f"L2→SM, {at_l2:.2f} for the three together. So fusion moves the kernel right "
        f"{fu.ai_l2_delivered / at_l2:.1f}x at the L2 level, where the tiled kernel still re-reads K and V, and "
        f"{fu.ai_dram / at_dram:.1f}x at DRAM, where those re-reads hit in L2 (the naive kernels' {at_dram:.1f} "
        f"together, {dram_each} each, to {fu.ai_dram:.1f}). Where the exports have the count, the report's "
        f"roofline draws two L2 roofs over the L2→SM points. L2 out's ({out_peak / 1e12:.1f} TB/s in the export, "
        f"ridge {c.peak_flop_per_s / out_peak:.1f} FLOP/byte) is what L2 can send: it bounds the L2→SM bytes of "
        "every line one SM reads alone, each byte delivered a byte sent. The L2→SM port roof "
        f"({c.bandwidth_bytes_per_s[roofline.L2_IN] / 1e12:.1f} TB/s, ridge {c.ridge(roofline.L2_IN):.1f}), every "
        f"SM's L1 input port summed, {c.bandwidth_bytes_per_s[roofline.L2_IN] / out_peak:.1f}x L2 out, is not a "
        "bandwidth L2 can supply: only lines L2 multicasts to many SMs at once can arrive faster than L2 out. "
        f"What the course measured is far below both: the fastest delivery in its H200 exports is "
        f"{fastest[0] / 1e12:.1f} TB/s ({fastest_label}), {cold[0] / 1e12:.1f} TB/s in the references' cold export "
        f"({roofline.kernel_label(cold[2])}); the fused kernel at S = {S} received "
        f"{fu.l2_delivered_bytes / (fu.total_duration_us * 1e-6) / 1e12:.2f} TB/s.\n")


def _l2() -> str:
    B, H, D, sizes = fig.bench_shape()
    lines = []
    for S in sizes[-2:]:
        sm, pv = fig.kernel(f"naive_S{S}", "softmax_rows_kernel"), fig.kernel(f"naive_S{S}", "weighted_sum_kernel")
        model = fig.model_naive(S)
        lines.append((S, sm.dram_bytes_read, model[1].reads, pv.dram_bytes_read, model[2].reads))
    (s1, sm1, m1, _, _), (s2, sm2, m2, pv2, mpv2) = lines
    naive = fig.range_kernels(f"naive_S{s2}")
    written = sum(p.dram_bytes_write for p in naive)
    model_w = ai_model.total("n", fig.model_naive(s2)).writes
    l2 = fig.l2_mib()
    two = [2 * fig.model_naive(S)[0].bytes_written["scores"] for S in (s1, s2)]
    warm = {(S, k): fig.warm_reads(k, S) for S in (s1, s2) for k in ("softmax_rows_kernel", "weighted_sum_kernel")}
    small = max(max(v) for (S, _), v in warm.items() if S == s1)
    span = lambda v: _span(min(v) / 1e6, max(v) / 1e6, ".1f")  # noqa: E731
    return (
        "**Cold and warm caches: where the S × S tensors live.** `make profile` records two exports. The cold "
        "one is Nsight Compute's default (`--cache-control all`): every cache is flushed before each kernel, so "
        "each kernel reads its inputs from DRAM, which is exactly what the model counts. In the references' cold "
        f"export the softmax kernel reads {_mb(sm1)} from DRAM at S = {s1} and {_mb(sm2)} at S = {s2}: the scores "
        f"tensor ({_mb(m1)} and {_mb(m2)} in the model); P V reads {_mb(pv2)} at S = {s2} (P and V: {_mb(mpv2)}). "
        "What the cold export shows below the model is writes: a kernel's output can still sit in L2 when the "
        f"kernel ends and reach DRAM later, outside it (the naive kernels at S = {s2} wrote {_mb(written, 1)} of "
        f"the model's {_mb(model_w, 1)}).\n\n"
        "The warm export (`--cache-control none`, the kernels back to back as in a real forward pass) is where L2 "
        "can help: a kernel finds in L2 what the previous one wrote, if it is still there. The naive reference "
        f"allocates scores and P separately: {_mib(two[0])} of S × S tensors at S = {s1}, {_mib(two[1])} at "
        f"S = {s2}, against the H200's {l2:.0f} MiB of L2 ({roofline.L2_MIB['H100']} MiB on an H100). What the "
        f"course's warm exports measured (the naive reference, {len(warm[s2, 'softmax_rows_kernel'])} runs in "
        f"{len(fig.WARM_H200)} H200 exports): at S = {s1} its softmax and P V kernels read {_at_most(small)} "
        f"from DRAM, all of their input from L2; at S = {s2} softmax read "
        f"{span(warm[s2, 'softmax_rows_kernel'])} of its {_mb(m2)} from DRAM and P V "
        f"{span(warm[s2, 'weighted_sum_kernel'])} of {_mb(mpv2)}: about half, although P was written just "
        "before P V reads it. Neither all from L2 nor all from DRAM: measure it, no capacity rule predicts it. "
        "The fused kernel never writes an S × S tensor and needs "
        "neither. Check it on your own exports: `python -m "
        "grader ai --compare profiles/*.csv` and the report put the model's reads and writes beside both "
        "exports' DRAM bytes (and the L2→SM reads, which count reads only).\n")


# ---- the model answers (reference/report.md) ------------------------------------------------

def _answer_bound() -> str:
    B, H, D, sizes = fig.bench_shape()
    lo, hi = min(sizes), max(sizes)
    c = roofline.gpu_ceilings(list(fig.fixture()))
    sc, pv, sm = (fig.kernel(f"naive_S{hi}", k) for k in ("scores_kernel", "weighted_sum_kernel", "softmax_rows_kernel"))
    fu = fig.kernel(f"fused_S{hi}", "fused_attention_kernel")
    tc = fig.kernel(f"fused_opt_S{hi}", "fused_tc_kernel")
    opt_us = fig.range_us(f"fused_opt_S{hi}")
    fastest = fig.fastest_l2_delivery((fig.EXPORT,))[0]
    ops = fig.fp32_instructions(f"naive_S{hi}", "softmax_rows_kernel")
    warps = int(fig.kernel_metric(f"fused_S{hi}", "fused_attention_kernel", "launch__block_size")) // 32
    model = ai_model.fused(B, H, hi, D)
    t = ai_model.table([(B, H, s, D) for s in (lo, hi)])
    ai = {(r["S"], r["kernel"]): r["ai"] for r in t}
    return (
        "The answer differs per kernel, and the arithmetic-intensity table says which before the profiler does. "
        f"On the H200's roofline (Nsight Compute's peaks in the export) the DRAM ridge is "
        f"{c.ridge('DRAM'):.1f} FLOP/byte ({c.peak_flop_per_s / 1e12:.1f} TFLOP/s, at the "
        f"{fig.fp32_peak_clock_hz() / 1e9:.3f} GHz SM clock Nsight Compute measured, ÷ "
        f"{c.bandwidth_bytes_per_s['DRAM'] / 1e12:.2f} TB/s). At L2 the points count what the SMs receive (L2→SM) "
        f"and two roofs stand over them: L2 out's ({c.bandwidth_bytes_per_s[roofline.L2_OUT] / 1e12:.1f} TB/s, ridge "
        f"{c.ridge(roofline.L2_OUT):.1f}), what L2 can send, which bounds lines one SM reads alone, and the L2→SM port "
        f"roof ({c.bandwidth_bytes_per_s[roofline.L2_IN] / 1e12:.1f} TB/s, ridge {c.ridge(roofline.L2_IN):.1f}), every "
        "SM's L1 input at once, which only lines L2 multicasts to many SMs can approach; no kernel of that export received "
        f"more than {fastest / 1e12:.1f} TB/s. Profiler figures "
        f"below are the references' cold export at S = {hi} (tests/fixtures/ncu, reference/NOTES.md §5).\n\n"
        f"- *Scores* (q kᵀ/√D) and *p v*: {ai[(lo, 'scores = q kᵀ/√D')]:.2f} FLOP/byte at S = {lo} and "
        f"{ai[(hi, 'scores = q kᵀ/√D')]:.2f} at S = {hi} in the model, right of the DRAM ridge: compute-bound if the "
        f"kernels were perfect. They are not: the scores kernel shows SM {sc.compute_pct:.1f}% ({sc.sm_unit}) and "
        f"Memory {sc.memory_pct:.1f}% ({sc.memory_unit}), which Nsight Compute calls {sc.bound}, while its FP32 rate is "
        f"{sc.flop_per_s / c.peak_flop_per_s:.1%} of the peak; p v shows Memory {pv.memory_pct:.1f}% "
        f"({pv.memory_unit}) and SM {pv.compute_pct:.1f}% with DRAM at {pv.dram_pct:.2f}%, "
        f"{pv.bound + ' too' if pv.bound == sc.bound else pv.bound}. Both are limited by how they feed the "
        "FMA units from shared memory, not by DRAM.\n"
        f"- *Softmax*: no FLOPs in the model (five operations per score, {ai_model.limits(D)['softmax_ops_per_byte']:.3f} "
        f"per byte): far left of any ridge. The profiler finds it latency-bound (SM {sm.compute_pct:.1f}%, "
        f"{sm.sm_unit}; Memory {sm.memory_pct:.1f}%, {sm.memory_unit}): each block walks its row three times with "
        f"a block-wide reduction between the passes, and neither side is busy: its DRAM at {sm.dram_pct:.1f}% of its "
        "peak, its issue slots at the SM % above. What its warps wait on (barriers, loads) the exports cannot say: "
        "they hold no warp-state statistics (`make profile` does not ask for that section). Its profiler AI "
        f"({sm.ai_dram:.1f} FLOP/byte at DRAM) counts "
        f"{sm.flop / (H * hi * hi):.1f} FP32 FLOPs in {sum(ops.values()) / (H * hi * hi):.1f} FP32 instructions per "
        "score (two `expf` each; an FFMA counts two FLOPs), not the model's FLOPs.\n"
        f"- *Fused*: {ai[(lo, 'fused')]:.2f} FLOP/byte at S = {lo} and {ai[(hi, 'fused')]:.2f} at S = {hi}: "
        f"compute-bound in the model. The simple fused kernel measures Memory {fu.memory_pct:.1f}% "
        f"({fu.memory_unit}) and SM {fu.compute_pct:.1f}% ({fu.sm_unit}): latency-bound, its "
        f"grid filling {fu.waves_per_sm:.2f} of a "
        f"wave (one {warps}-warp block per SM: too few warps to hide the latency of its loads). The optimised one "
        f"does its products on the {tc.sm_unit} ({tc.compute_pct:.1f}% busy), which the FP32 roofline does "
        f"not show: its two kernels take {opt_us:.1f} µs in the profile, {model.flops / (opt_us * 1e-6) / 1e12:.1f} "
        "TFLOP/s of model FLOPs, still latency-bound (reference/NOTES.md §5).\n\n"
        "On the CPU the same reasoning holds with the CPU's ridge (the report's CPU roofline measures it).\n")


def _answer_gap() -> str:
    import json
    doc = json.loads((fig.RESULTS / "gpu_fused_h200.json").read_text())
    row = max(doc["bench"], key=lambda r: r["S"])
    sdpa = row["flops"] / (row["sdpa_ms"] * 1e-3)
    sysm = doc["system"]
    peaks = roofline.precision_ceilings(int(sysm["sm_count"]), float(sysm["clock_sm_max_mhz"]) * 1e6, sysm["capability"])
    return (
        "The slowdown factors are in the performance table (yours ÷ SDPA per S). The naive version pays for the "
        "S × S traffic; the simple fused kernel removes it but still does its two products with one multiply-add "
        "per loaded value. What PyTorch's SDPA does in fp32: it picks the memory-efficient attention kernel "
        "(CUTLASS, `fmha_cutlassF_f32…_sm80`), which on sm80 and later does its products on the tensor cores with "
        "the 3xTF32 split (PyTorch's `mem_eff_attention/gemm_kernel_utils.h`: `OpMultiplyAddFastF32` for float), "
        "blocked so that each loaded tile is reused many times, with vectorised loads, conflict-free shared "
        "memory and a fast exp. So its roof is the 3xTF32 one, not the FP32 FMA peak: in the H200 grade in "
        f"tests/fixtures/results (S = {row['S']}) SDPA took {row['sdpa_ms'] * 1e3:.1f} µs, {sdpa / 1e12:.1f} TFLOP/s: "
        f"{sdpa / peaks['fp32']:.0%} of the FP32 FMA peak and {sdpa / peaks['3xtf32']:.0%} of the 3xTF32 one: "
        "at this small size it is far below either roof too. The optimised references do the same things "
        "(register-blocked micro-kernels on the CPU, 3xTF32 tensor cores on the GPU). On the GPU SDPA picks a "
        "kernel per shape (its backend is recorded in the results).\n")


def _answer_length() -> str:
    B, H, D, sizes = fig.bench_shape()
    lo, hi = min(sizes), max(sizes)
    t = ai_model.trend([lo, hi], B, H, D)
    lim = ai_model.limits(D)
    ks = fig.model_naive(hi)
    tot = ai_model.total("n", ks)
    ss_traffic = ks[0].bytes_written["scores"] + ks[1].bytes_moved + ks[2].bytes_read["p"]
    lo_warm = sorted(sizes)[-2]
    small = max(fig.warm_reads("softmax_rows_kernel", lo_warm) + fig.warm_reads("weighted_sum_kernel", lo_warm))
    sm_w, pv_w = fig.warm_reads("softmax_rows_kernel", hi), fig.warm_reads("weighted_sum_kernel", hi)
    big_s, big_h = 32 * 1024, 32
    return (
        f"For the naive implementation AI *rises* with S, it does not fall: S·D / (e·(S + D)) grows from "
        f"{t['naive_ai'][0]:.2f} FLOP/byte at S = {lo} to {t['naive_ai'][1]:.2f} at S = {hi} and approaches D/e = "
        f"{lim['naive']:g} (its scores and p v kernels each approach 2·D/e = {lim['scores']:g}; the softmax kernel "
        "has no FLOPs at any S). What grows badly is the traffic and the memory: 4·e·(S·D + S²) bytes, dominated "
        f"by S² ({_mb(ss_traffic, 1)} of {_mb(tot.bytes_moved, 1)} at S = {hi}, {H} heads). Where those bytes live "
        f"depends on the cache: in a cold profile every kernel reads its input from DRAM; kernels back to back "
        f"can find it in L2. In the course's warm exports (H200) the naive reference's softmax and p v kernels "
        f"read {_at_most(small)} from DRAM at S = {lo_warm} and about half of their input at S = {hi}: softmax "
        f"{_span(min(sm_w) / 1e6, max(sm_w) / 1e6, '.1f')} of {_mb(ks[1].reads)}, p v "
        f"{_span(min(pv_w) / 1e6, max(pv_w) / 1e6, '.1f')} of {_mb(ks[2].reads)}, although p was written just "
        f"before (the two S × S tensors are {_mib(2 * ks[0].bytes_written['scores'])}). At S = "
        f"{2 * hi} one tensor is {_mib(ai_model.naive(B, H, 2 * hi, D)[0].bytes_written['scores'])}, and at long "
        f"context the S² memory itself becomes the limit (S = {big_s // 1024}k, {big_h} heads: "
        f"{ai_model.naive(1, big_h, big_s, D)[0].bytes_written['scores'] / 2**30:.0f} GiB for one layer's scores). "
        "That is why long-context models use fused attention.\n")


def _answer_fusion() -> str:
    import json
    B, H, D, sizes = fig.bench_shape()
    hi = max(sizes)
    rows = fig.reference_block_rows()
    nv, fu = ai_model.total("n", fig.model_naive(hi)), ai_model.fused(B, H, hi, D)
    naive = fig.range_kernels(f"naive_S{hi}")
    fk = fig.kernel(f"fused_S{hi}", "fused_attention_kernel")
    dram, l2 = fig.range_ai(f"naive_S{hi}", "dram_bytes"), fig.range_ai(f"naive_S{hi}", "l2_delivered_bytes")
    opt = sorted(fig.range_kernels(f"fused_opt_S{hi}"), key=lambda p: -p.duration_us)
    cpu = max(json.loads((fig.RESULTS / "cpu_fused.json").read_text())["bench"], key=lambda r: r["S"])
    assert not cpu.get("fused_opt_ms"), "the CPU grade now times fused_opt: quote it instead of NOTES §4"
    speedup, fused_ms, opt_ms = fig.cpu_fused_opt_speedup(cpu["S"])
    span = lambda xs, spec: f"{format(min(xs), spec)} to {format(max(xs), spec)}"  # noqa: E731
    return (
        f"Fusion removes the S × S tensors from memory: the model's bytes at S = {hi} drop from "
        f"{_mb(nv.bytes_moved, 1)} to {_mb(fu.bytes_moved)} ({nv.bytes_moved / fu.bytes_moved:.0f}x), and AI rises "
        f"from {nv.ai:.2f} to {fu.ai:.0f} FLOP/byte, the same factor to the right on the roofline. The references' "
        f"cold profiles (H200, S = {hi}; FP32 instructions over bytes) show a large move at DRAM and a smaller one "
        f"at L2. At DRAM AI goes "
        f"from {dram:.1f} FLOP/byte for the three naive kernels together ({span([p.ai_dram for p in naive], '.1f')} "
        f"each) to {fk.ai_dram:.1f} for the fused one, {fk.ai_dram / dram:.1f}x. At the L2 level, counted as the SMs "
        f"receive the bytes (L2→SM), it goes from {l2:.2f} ({span([p.ai_l2_delivered for p in naive], '.2f')} each) "
        f"to {fk.ai_l2_delivered:.1f}, {fk.ai_l2_delivered / l2:.1f}x: the tiled kernel still reads K and V once per "
        f"{rows}-row block, from L2 ({_mb(fk.l2_delivered_bytes, 1)}, as the tiled model counts: its AI levels off at "
        f"2·{rows}/e = {ai_model.fused_tiled(B, H, 1 << 20, D, rows).ai:.0f}). Nsight Compute's own L2 roofline counts what L2 sends out, where a line many "
        f"SMs read at once is one transfer: its {fk.ai_l2:.1f} FLOP/byte for the fused kernel divides by those "
        f"transfers, not by the bytes its SMs received. The time-weighted DRAM % of the three naive kernels is {fig.time_weighted_dram_pct(f'naive_S{hi}'):.1f}% "
        f"against {fk.dram_pct:.2f}% for the fused one. Execution time in the profile: the naive pipeline's three "
        f"kernels {fig.range_us(f'naive_S{hi}'):.1f} µs together, the simple fused kernel {fk.duration_us:.1f} µs, "
        f"the optimised one {fig.range_us(f'fused_opt_S{hi}'):.1f} µs ({opt[0].duration_us:.1f} µs plus "
        f"{opt[1].duration_us:.1f} µs to merge its key splits). On the CPU (the grade in tests/fixtures/results) "
        f"the fused kernel is {cpu['naive_ms'] / cpu['fused_ms']:.2f}x faster than naive at S = {cpu['S']}. That "
        "grade has no time for the optimised one; the session logs of reference/NOTES.md §4 (2 threads on the course's "
        f"2-core CPU machine) put it at {opt_ms[0]:g}-{opt_ms[1]:g} ms at S = {cpu['S']} against the simple fused kernel's "
        f"{fused_ms[0]:g}-{fused_ms[1]:g} ms, about {speedup:.0f}x faster again.\n")


# ---- NOTES §5 ---------------------------------------------------------------------------------

def _notes_ncu() -> str:
    from grader.analysis.ncu import unit_text
    _, _, _, sizes = fig.bench_shape()
    hi = max(sizes)
    rows = ["| range | kernel | time µs | SOL Mem % | SOL SM % | DRAM % | SOL L2 % | GFLOP/s (FP32 instr.) | AI DRAM | "
            "AI L2→SM | AI L2 out | bound (ncu's rule) | unit setting the % |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in fig.fixture():
        if not p.nvtx.endswith(f"_S{hi}") or p.nvtx.startswith("student"):
            continue
        name = re.sub(r"\(.*", "", p.kernel).replace("void ", "").replace("<unnamed>::", "")
        rows.append(f"| {p.nvtx} | {name} | {p.duration_us:.2f} | {p.memory_pct:.1f} | {p.compute_pct:.1f} | "
                    f"{p.dram_pct:.2f} | {p.l2_pct:.1f} | {p.flop_per_s / 1e9:,.0f} | {p.ai_dram:.1f} | {p.ai_l2_delivered:.2f} | "
                    f"{p.ai_l2:.2f} | {p.bound} | "
                    f"{unit_text(p)} |")
    c = roofline.gpu_ceilings(list(fig.fixture()))
    mem = _memory_pct_figures(hi)
    above = [p for p in (mem["sm"], mem["merge"]) if p.l2_pct > p.memory_pct]
    fp32_note = (f" (at the {fig.fp32_peak_clock_hz() / 1e9:.3f} GHz SM clock Nsight Compute measured; the course's own "
                 f"peaks take {roofline.HOPPER_BOOST_HZ / 1e9:.2f} GHz)")
    return ("\n".join(rows) + "\n\nThe unit is the one that sets the busier side's %. Memory % is the highest entry of "
            f"Nsight Compute's memory breakdown ({MEMORY_BREAKDOWN}), not of the SOL's L1/TEX, L2 and DRAM lines: "
            "L2 Cache Throughput (SOL L2 %) counts more of L2's activity than the breakdown takes, and stands above "
            "Memory % in " + " and ".join(f"{_short(p.kernel)} ({p.l2_pct:.1f}% "
                                          f"against {p.memory_pct:.1f}%, its {p.memory_unit})" for p in above)
            + f".\n\nDevice peaks in the export: FP32 {c.peak_flop_per_s / 1e12:.1f} TFLOP/s{fp32_note}, DRAM "
            f"{c.bandwidth_bytes_per_s['DRAM'] / 1e12:.2f} TB/s (ridge {c.ridge('DRAM'):.1f} FLOP/byte), L2→SM "
            f"{c.bandwidth_bytes_per_s[roofline.L2_IN] / 1e12:.2f} TB/s (ridge {c.ridge(roofline.L2_IN):.1f}: "
            f"{roofline.ROOFS[roofline.L2_IN]}), L2 out {fig.l2_out_peak() / 1e12:.2f} TB/s (ridge "
            f"{c.peak_flop_per_s / fig.l2_out_peak():.1f}: {roofline.ROOFS[roofline.L2_OUT]}); the fastest L2→SM "
            f"delivery in the export {fig.fastest_l2_delivery((fig.EXPORT,))[0] / 1e12:.2f} TB/s; L2 capacity "
            f"{fig.l2_mib():.0f} MiB. AI L2→SM is over the bytes the SMs received from L2, AI L2 out over what L2 sent "
            "(Nsight Compute's L2 roofline), where a line L2 multicasts to many SMs counts once. The fused_opt rows' "
            "FLOP/s count only its CUDA-core work (tensor-core products are not FP32 instructions).\n")


def blocks(path: Path = config.DEFAULT_CONFIG) -> dict[Path, dict[str, str]]:
    cfg = config.load(path)
    return {
        HANDOUT: {"configs": _configs(cfg), "precision": _precision(path), "benchmark": _benchmark(cfg),
                  "rubric": _rubric(path), "deadline": _deadline(path), "ncu": _ncu(), "flops": _flops(),
                  "ai": _ai(cfg), "roofline": _roofline(path), "villain": _villain(), "simplifies": _simplifies(), "sol": _sol(),
                  "l2level": _l2_level(), "l2": _l2()},
        ANSWERS: {"bound": _answer_bound(), "gap": _answer_gap(), "length": _answer_length(),
                  "fusion": _answer_fusion()},
        NOTES: {"ncu": _notes_ncu()},
    }


def render(text: str, generated: dict[str, str], style: str = "html", name: str = "document") -> str:
    def fill(m: re.Match) -> str:
        if m[2] not in generated:
            raise SystemExit(f"{name}: unknown generated block {m[2]!r} (known: {', '.join(generated)})")
        body = generated[m[2]]
        return m[1] + body + ("\n" if style == "md" else "") + m[4]   # md: a blank line ends the paragraph
    return BLOCKS[style].sub(fill, text)


def main() -> int:
    stale = []
    for doc, generated in blocks().items():
        text = doc.read_text()
        new = render(text, generated, DOCS[doc], str(doc))
        if new != text:
            stale.append(doc)
            if "--check" not in sys.argv:
                doc.write_text(new)
    if "--check" in sys.argv:
        for doc in stale:
            print(f"{doc} is stale: run python tools/handout.py", file=sys.stderr)
        if not stale:
            print("documents up to date")
        return 1 if stale else 0
    print("\n".join(f"{doc} updated" for doc in stale) or "documents up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
