"""grader/report/summary.py: the terminal summary names what was measured, on the backend it ran on."""
import json
from dataclasses import replace

from grader.core.result import CompileResult, result_from
from grader.report.summary import format_result

from conftest import TESTS

FIXTURES = TESTS / "fixtures" / "results"


def _with_fused_opt(name: str):
    doc = json.loads((FIXTURES / name).read_text())
    for row in doc["bench"]:
        row["fused_opt_ms"] = 1.25
    return result_from(doc)


def test_the_cpu_legend_names_the_cpu_reference():
    text = format_result(_with_fused_opt("cpu_fused.json"))
    assert "fused-opt (register-blocked micro-kernels, OpenMP)" in text
    assert "tensor cores" not in text and "TF32" not in text


def test_the_cuda_legend_names_the_tensor_core_reference():
    text = format_result(_with_fused_opt("gpu_fused_h200.json"))
    assert "fused-opt (tensor cores, 3xTF32)" in text


def test_a_fallback_is_shown_under_the_compile_line_and_only_when_it_happened():
    base = result_from(json.loads((FIXTURES / "cpu_fused.json").read_text()))
    line = ("attention.py:3: #include <torch/script.h> is not in the lean torch headers; "
            "compiling with the full torch headers (about 41 s here)")
    built = replace(base, compile=CompileResult(ok=True, seconds=43.0, log="", headers="full", tier="full",
                                                fallback=line))
    text = format_result(built)
    assert "compile:    ok (43.0 s, full headers)" in text
    assert f"fallback: {line}" in text
    reused = replace(built, compile=replace(built.compile, cached=True, seconds=0.0))
    assert "fallback:" not in format_result(reused)       # nothing was compiled this time


def test_exports_that_earn_nothing_are_said_where_the_profiles_are():
    """A student whose exports were of another version of the kernel lost 10 points and the
    terminal only listed the kernels it read (a fresh walkthrough, 2026-11-27)."""
    base = result_from(json.loads((FIXTURES / "cpu_fused.json").read_text()))
    why = "no profile in profiles/ is of this submission's kernels (after, before: ...): run make profile again"
    shown = replace(base, profiles=({"profile": "after", "nvtx": "student_S1024", "kernel": "attention (_CPP_SRC)",
                                     "bound": None, "ai_dram": None},),
                    flags=({"code": "profile_provenance", "tier": "review", "detail": why},))
    assert f"NOT COUNTED: {why}" in format_result(shown)
    assert "NOT COUNTED" not in format_result(replace(shown, flags=()))


def test_the_flags_the_report_lists_are_in_the_terminal_too():
    """A fresh walkthrough: review flags (forged_timings, baseline_slowed) were in the PDF
    and results.json but nowhere in `make grade`'s terminal; warnings stay out, and the
    profile provenance flag keeps its own NOT COUNTED line."""
    base = result_from(json.loads((FIXTURES / "cpu_fused.json").read_text()))
    flags = [{"code": "baseline_slowed", "tier": "review", "detail": "S=512: SDPA took 38.684 ms a call beside"},
             {"code": "no_timestamp", "tier": "warning", "detail": "no timestamp"}]
    text = format_result(replace(base, flags=flags))
    assert "review:baseline_slowed: S=512: SDPA took 38.684 ms a call beside" in text
    assert "no_timestamp" not in text
    assert "flags (" not in format_result(replace(base, flags=[]))


def test_a_slowdown_the_judges_clock_adjusted_is_marked_where_its_columns_do_not_divide(tmp_path):
    """A walkthrough read `16.6  14.1  1.62x` and found 16.6 / 14.1 = 1.18: the slowdown had time the
    grader's clock saw charged to it, said lines below and nowhere in the PDF. The row is marked
    (*) in the terminal and in the PDF's table, which says what was charged or capped."""
    from grader.report.pdf import context
    doc = json.loads((FIXTURES / "cpu_fused.json").read_text())
    row = doc["bench"][-1]
    row["judge_clock"] = {**(row.get("judge_clock") or {}), "charged_ms": 6.35}
    row["slowdown"] = (row["student_ms"] + 6.35) / row["sdpa_ms"]
    text = format_result(result_from(doc))
    line = next(x for x in text.splitlines() if f" {row['S']:>5} " in x and "x" in x)
    assert f"{row['slowdown']:.2f}x*" in line, line
    assert f"* S={row['S']}: the grader's own clock saw rounds take longer" in text and "+6.35 ms a call" in text
    perf = {r["S"]: r for r in context(doc, tmp_path)["perf_rows"]}
    assert perf[row["S"]]["slowdown"].endswith("x*") and "+6.35 ms a call" in perf[row["S"]]["interval"]
    assert not any(r["slowdown"].endswith("*") for S, r in perf.items() if S != row["S"])
