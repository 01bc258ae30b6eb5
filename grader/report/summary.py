"""The terminal summary of a grade: compile line, correctness table, benchmark table, verdict."""
from __future__ import annotations

from ..core.result import GradeResult

# what the optimised fused reference is on each backend (grader/judge/worker.py REFERENCES)
FUSED_OPT = {"cuda": "fused-opt (tensor cores, 3xTF32)", "cpu": "fused-opt (register-blocked micro-kernels, OpenMP)"}

VERDICT_HELP = {
    "ok": "correct on every config",
    "not_implemented": "the kernel says it is not implemented yet: write it in the template",
    "compile_error": "fix the compiler errors above (line numbers are lines of your .py file)",
    "wrong_answer": "the output is wrong: see the table above (the messages name the mistake the error matches)",
    "runtime_error": "the kernel raised an error or crashed",
    "timeout": "a stage ran past its time limit (an infinite loop, or far too slow)",
    "invalid_submission": "the file is not a valid submission",
    "cheat_suspected": "the kernel did something a submission must not do",
    "grader_error": "the grader itself failed on this submission (not the kernel's fault): please report it",
}


def _ms(x: float | None) -> str:
    return "-" if x is None else (f"{x:.3f}" if x < 10 else f"{x:.1f}")


def _err(x: float | None) -> str:
    return "-" if x is None else f"{x:.2e}"


def ran_on_gpu(backend: str, system: dict | None) -> bool:
    """Whether the kernel ran on a GPU (a Triton kernel runs on either: the system says)."""
    return backend == "cuda" or bool((system or {}).get("gpu"))


def adjusted(judge_clock: dict | None, on_gpu: bool) -> str:
    """Why a row's slowdown is not the yours / SDPA of its columns (the judge's clock adjusted
    it, grader/judge/judge.py `cap_baseline` and `_clean_sdpa`), or "" when it is. `on_gpu`: the
    kernel ran on a GPU (a Triton kernel may run on the CPU, in the interpreter)."""
    clock = judge_clock or {}
    parts = []
    if clock.get("sdpa_capped_ms"):
        cap = "1.10x the SDPA timed in a clean process" if on_gpu else "1.25x the grader's own SDPA"
        parts.append(f"SDPA ran slower beside your kernel: taken against {clock['sdpa_capped_ms']:.4g} ms ({cap}), "
                     "not the SDPA column")
    if clock.get("charged_ms"):
        parts.append(f"the grader's own clock saw rounds take longer than the calls reported: +{clock['charged_ms']:.3g} "
                     "ms a call charged to your kernel")
    return "; ".join(parts)


def _quality_lines(quality: dict) -> list[str]:
    """The timing-quality verdict under the benchmark table: silent when clean."""
    if not quality or quality.get("status") != "noisy":
        return []
    lines = ["  TIMINGS NOISY: the machine was busy, the timings spread widely or too few CPU samples showed where "
             "the calls ran (timed again, still so):"]
    lines += [f"    {reason}" for reason in quality.get("reasons", [])[:6]]
    lines.append("    close other programs and grade again before you trust or quote these figures")
    return lines
def numerics_line(numerics: dict | None) -> str:
    """The precision the kernel most likely computed in, and what that means (grader/analysis/numerics.py)."""
    if not numerics or numerics.get("precision") is None:
        return ""
    what = numerics.get("precision") + (" or better" if numerics.get("better") else "")
    head = f"likely computed in {what}" if numerics.get("precision") else numerics.get("evidence", "")
    return "; ".join(x for x in (head, numerics.get("lesson", ""),
                                 numerics.get("evidence", "") if numerics.get("precision") else "") if x)


def _diagnosis(r: GradeResult) -> str | None:
    """The pattern over the whole grade's configs (grader/analysis/diagnose.py), if one fits."""
    from dataclasses import asdict

    from ..analysis.diagnose import across_configs
    return across_configs([asdict(c) for c in r.checks], numerics=r.numerics, probes=list(r.probes))


def format_result(r: GradeResult) -> str:
    out = [f"submission: {r.submission['path']}",
           f"backend:    {r.backend} ({r.backend_reason})"]
    if r.system:
        dev = r.system.get("gpu") or r.system.get("cpu")
        out.append(f"device:     {dev}; torch {r.system.get('torch')}; {r.system.get('threads')} threads")
    if r.compile is not None:
        c = r.compile
        how = "reused an identical earlier build, nothing compiled" if c.cached else f"{c.seconds:.1f} s"
        if c.tier == "triton":
            how = "parsed and audited; Triton compiles each kernel when it is first launched"
        elif c.ok and c.headers:
            how += f", {c.headers} headers"
        out.append(f"compile:    {'ok' if c.ok else 'FAILED'} ({how})")
        if c.fallback and not c.cached:
            out += [f"            fallback: {line}" for line in c.fallback.splitlines()]
        if c.log:
            out += ["", *("  " + ln for ln in c.log.splitlines()), ""]
    if r.checks:
        out += ["", f"correctness (pass iff max_err < {r.config['tolerance']:g}, truth in float64):",
                f"  {'config':<10} {'B':>3} {'H':>3} {'S':>5} {'D':>4}  {'max_err':>9}  result"]
        for c in r.checks:
            shape = c.config or {}
            dims = " ".join(f"{shape.get(k, '?'):>{w}}" for k, w in (("B", 3), ("H", 3), ("S", 5), ("D", 4)))
            large = f"  (q, k x {shape['qk_std']:g}: large scores)" if shape.get("qk_std") else ""
            out.append(f"  {c.name:<10} {dims}  {_err(c.max_err):>9}  {'pass' if c.passed else 'FAIL'}{large}")
            if c.message:
                out.append(f"      {c.message}")
            for m in c.mismatches:
                out.append(f"      at {m.index}: got {m.got:.6g}, expected {m.expected:.6g}")
        pattern = _diagnosis(r)
        if pattern:
            out.append(f"  diagnosis: {pattern}")
        line = numerics_line(r.numerics)
        if line:
            out.append(f"  numerics: {line}")
    if r.bench:
        method = r.timing.get("method", "?")
        opt = any(b.fused_opt_ms is not None for b in r.bench)
        out += ["", f"benchmark (median ms, {method}; slowdown = yours / SDPA):",
                f"  {'B':>2} {'H':>3} {'S':>5} {'D':>4}  {'yours':>9} {'SDPA':>9} {'slowdown':>9} "
                f"{'naive':>9} {'fused':>9}{' fused-opt' if opt else ''} {'yours GFLOP/s':>14}"]
        on_gpu = ran_on_gpu(r.backend, r.system)
        for b in r.bench:
            slow = "-" if b.slowdown is None else f"{b.slowdown:.2f}x" + ("*" if adjusted(b.judge_clock, on_gpu) else "")
            gf = "-" if b.student_gflops is None else f"{b.student_gflops:.1f}"
            out.append(f"  {b.B:>2} {b.H:>3} {b.S:>5} {b.D:>4}  {_ms(b.student_ms):>9} {_ms(b.sdpa_ms):>9} "
                       f"{slow:>9} {_ms(b.naive_ms):>9} {_ms(b.fused_ms):>9}"
                       + (f" {_ms(b.fused_opt_ms):>9}" if opt else "") + f" {gf:>14}")
        out.append("  naive / fused" + (f" / {FUSED_OPT.get(r.backend, 'fused-opt')}" if opt else "")
                   + ": the course's reference kernels, timed in the same run")
        from ..analysis.confidence import describe
        spans = [(b, describe(b.interval)) for b in r.bench]
        spans = [(b, text) for b, text in spans if text]
        if spans:
            out.append(f"  slowdown, 95% interval (timed until ±{spans[0][0].interval.get('target', 0):.0%} and "
                       "clear of the tier boundaries, or a cap):")
            out += [f"    S={b.S:<5} {text}" for b, text in spans]
        # * a slowdown the judge's clock adjusted: what it was taken against, or what was charged
        out += [f"  * S={b.S}: {adjusted(b.judge_clock, on_gpu)}" for b in r.bench if adjusted(b.judge_clock, on_gpu)]
        out += _quality_lines(r.bench_quality)
    if r.profiles or r.profile_notes:
        cpu = any(p.get("profiler") == "cpu" for p in r.profiles)
        out += ["", f"profiler evidence ({len(r.profiles)} kernels from profiles/; "
                    + ("the CPU profiler's runs: one row per label and size" if cpu else
                       "python -m grader ncu profiles/*.csv for the full table") + "):"]
        for p in r.profiles:
            name = p["kernel"].split("(")[0].replace("void ", "")[:40]
            ai = "-" if p["ai_dram"] is None else f"{p['ai_dram']:.1f}"
            out.append(f"  {p['profile']:<16} {p['nvtx'] or '':<16} {name:<40} {p['bound'] or '-':<14} AI(DRAM) {ai}")
        out += [f"  note: {n}" for n in r.profile_notes]
        # exports that earn nothing (grader/evidence/exports.py provenance): said here, not only as a flag
        out += [f"  NOT COUNTED: {f['detail']}" for f in r.flags if f.get("code") == "profile_provenance"]
    # the integrity flags the report lists, here too (a fresh walkthrough found them in the PDF only)
    flags = [f for f in r.flags if isinstance(f, dict) and f.get("tier") in ("strict", "review")
             and f.get("code") != "profile_provenance"]
    if flags:
        out += ["", "flags (in the report too; review: for the course to look at, strict: it decides the verdict):"]
        out += [f"  {f['tier']}:{f.get('code')}: {f.get('detail', '')}" for f in flags]
    out += ["", f"verdict: {r.verdict}" + (f" - {r.message}" if r.message else ""),
            f"         {VERDICT_HELP[r.verdict]}" if r.verdict != "ok" else ""]
    return "\n".join(out).rstrip() + "\n"


# ---- score preview: the public rubric's points (grader/score/gradebook.py scores them) -----------

def format_score_preview(preview) -> str:
    """The preview block of `make grade`; `preview` from gradebook.preview (None: no rubric)."""
    if preview is None:
        return ""
    out = ["", f"score preview (public rubric): {preview.score:g} / {preview.max_score:g}"]
    for i in preview.items:
        out.append(f"  {i.score:>5g} / {i.max_score:<4g} {i.name}")
    out.append("  a preview, not your grade: " + "; ".join(preview.may_change) + ".")
    return "\n".join(out) + "\n"
