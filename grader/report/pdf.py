"""Report stage: results JSON -> PDF (Jinja2 templates rendering Typst, compiled by `typst`).

Numbers are computed and formatted here; `report_template/report.typ.j2` holds layout
only. Everything that came from a student or a tool (answers, kernel names, compiler
output, file names) is escaped so that it prints literally: Jinja's `finalize` escapes
every `{{ }}` (trusted Typst is wrapped in `T`), Markdown goes through a small converter
with raw HTML and images off, and Typst's `root` is the build folder, so nothing outside
it can be read. See shared/notes/REPORT_TOOLCHAIN.md for why Typst and the traps.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import threading
from datetime import date
from pathlib import Path

from ..core.safetext import clipped
from ..core.answers import PROMPTS_FILE, SECTION_KEYS, SECTIONS, split_answers  # noqa: F401 - their old home
from ..analysis.confidence import LEVEL, describe
from ..core.config import REPO_ROOT
from ..core.typsttext import T, breakable, esc, lit  # noqa: F401 - their old home
from .inputs import IMAGES, ImageError, check_image, check_images, refreshed, reread_note, source_lines

TEMPLATES = REPO_ROOT / "report_template"

class ReportError(Exception):
    """The report could not be built; the message says why."""


# ---- the student's answers -----------------------------------------------------------

def _answer(key: str, text: str):
    """One answer as Typst: the template's question, where the student kept it above their
    answer, set apart (grey, italic, "Question:"), then the answer as they wrote it."""
    from ..core.answers import prompt_and_answer
    prompt, own = prompt_and_answer(key, text)
    if not prompt:
        return markdown_to_typst(text)
    return T(f"#block(text(fill: luma(110), style: \"italic\")[Question: {markdown_to_typst(prompt)}])\n\n"
             f"{markdown_to_typst(own)}")


def markdown_to_typst(md: str) -> T:
    """The student's Markdown as Typst markup (grader/report/markdown.py)."""
    from .markdown import markdown_to_typst as convert
    return convert(md)


# ---- numbers ----------------------------------------------------------------------------

def format_ms(x):
    return "-" if x is None else (f"{x * 1e3:.1f} µs" if x < 1 else f"{x:.3f} ms" if x < 100 else f"{x:.1f} ms")


def _perf_chart(bench: list, path: Path, backend: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for key, label, style in (("student_ms", "yours", "o-"), ("sdpa_ms", "SDPA", "s--"),
                              ("naive_ms", "reference naive", "^-"), ("fused_ms", "reference fused", "v-"),
                              ("fused_opt_ms", "reference fused (optimised)", "d-")):
        pts = [(b["S"], b[key]) for b in bench if b.get(key)]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label, lw=1.2, ms=4)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length S")
    ax.set_ylabel("time [ms] (log)")
    ax.set_title(f"time vs S ({backend})", fontsize=9)
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, format="svg")
    plt.close(fig)


def context(doc: dict, build: Path, profile_dir: Path | None = None, before: dict | None = None) -> dict:
    """Everything the template shows, computed and formatted here."""
    from ..analysis.diagnose import across_configs
    from .summary import adjusted, numerics_line, ran_on_gpu
    front, answers = split_answers(doc.get("report_md"))
    sub = doc["submission"]
    checks = doc.get("checks", [])
    bench = doc.get("bench", [])
    tol = doc["config"]["tolerance"]
    on_gpu = ran_on_gpu(doc["backend"], doc.get("system"))
    unit, scale = ("TFLOP/s", 1e12) if on_gpu else ("GFLOP/s", 1e9)
    perf_rows = []
    for b in bench:
        gf = (lambda ms: "-" if not ms else f"{b['flops'] / (ms * 1e-3) / scale:.2f}")
        note = adjusted(b.get("judge_clock"), on_gpu)     # the slowdown is not yours / SDPA: why
        perf_rows.append({"S": b["S"], "shape": f"{b['B']},{b['H']},{b['S']},{b['D']}",
                          "student": format_ms(b["student_ms"]), "sdpa": format_ms(b["sdpa_ms"]),
                          "slowdown": "-" if b["slowdown"] is None else f"{b['slowdown']:.2f}x" + ("*" if note else ""),
                          "interval": "; ".join(x for x in (describe(b.get("interval")), note and f"* {note}") if x),
                          "naive": format_ms(b.get("naive_ms")), "fused": format_ms(b.get("fused_ms")),
                          "fused_opt": format_ms(b.get("fused_opt_ms")),
                          "student_perf": gf(b["student_ms"]), "sdpa_perf": gf(b["sdpa_ms"])})
    if bench:
        _perf_chart(bench, build / "perf.svg", doc["backend"])
    shape0 = bench[0] if bench else {"B": 1, "H": 8, "D": 64}
    sizes = [b["S"] for b in bench] or [128, 512, 1024]
    from ..score.gradebook import counted_labels
    from .profiles import ai_context, profiler_context
    shape = (shape0["B"], shape0["H"], shape0["D"])       # the shape `make profile` ran
    profiler = profiler_context(doc, build, shape)        # Nsight Compute exports (CPU records: below)
    cpu_records = [p for p in doc.get("profiles", []) if not p.get("tool_kernel") and p.get("profiler") == "cpu"]
    cpu_roofline = None
    if doc["backend"] == "cpu" and doc.get("ceilings") and bench:
        from ..analysis import roofline
        from .cpu import bench_points
        ceil = roofline.Ceilings(**doc["ceilings"])
        kind = front.get("kernel") if front.get("kernel") in ("naive", "fused") else None
        points, yours = bench_points(bench, kind)
        roofline.chart(ceil, points, build / "cpu_roofline.svg", title=f"CPU roofline: {ceil.device}")
        cpu_roofline = {"svg": lit("cpu_roofline.svg"), "peak": f"{ceil.peak_flop_per_s / 1e9:,.0f}",
                        "bw": f"{ceil.bandwidth_bytes_per_s['DRAM'] / 1e9:,.1f}", "ridge": f"{ceil.ridge('DRAM'):.1f}",
                        "yours": yours}
    from .cpu import cpu_evidence
    cpu_profile = cpu_evidence(cpu_records, front, build)
    if cpu_profile and cpu_profile["svg"]:
        cpu_profile["svg"] = lit(cpu_profile["svg"])
    shots = []
    if profile_dir and profile_dir.is_dir():
        images = sorted(p for p in profile_dir.iterdir() if p.suffix.lower() in IMAGES)
        try:
            check_images(images)
        except ImageError as e:
            raise RenderError(str(e)) from None
        for i, img in enumerate(images):
            try:
                check_image(img)
            except ImageError as e:
                raise RenderError(str(e)) from None
            name = f"shot{i}{img.suffix.lower()}"
            shutil.copy(img, build / name)
            shots.append({"file": lit(name), "caption": img.name, "path": str(img)})
    all_pass = bool(checks) and all(c["passed"] for c in checks)
    checklist = [
        ("Correctness check passes for all configurations (max_err < %g)" % tol, all_pass),
        ("Benchmark table vs F.scaled_dot_product_attention at S = %s" % ", ".join(map(str, sizes)), bool(bench)),
        ("Profiler evidence (before and after optimisation)", len(counted_labels(doc)) >= 2),
        ("Written report covering the four sections", len(answers) == 4),
    ]
    source_kind = {"cuda": "cuda", "triton": "triton"}.get(doc["backend"], "cpp")
    source = (doc.get("sources") or {}).get(source_kind, "")
    system = doc.get("system", {})
    return {
        "student": front.get("student") or front.get("name") or sub["name"],
        "date": date.today().isoformat(), "verdict": doc["verdict"], "message": doc["message"],
        "backend": doc["backend"], "device": system.get("gpu") or system.get("cpu") or "-",
        "software": f"torch {system.get('torch', '?')}" + (f", CUDA {system['cuda']}" if system.get("cuda") else "")
                    + f", Python {system.get('python', '?')}",
        "checklist": checklist, "tolerance": f"{tol:g}",
        "checks": [{"name": c["name"], "shape": "hidden" if c.get("hidden") else
                    "B={B} H={H} S={S} D={D}".format(**c["config"])
                    + (f", q and k × {c['config']['qk_std']:g} (large scores)" if c["config"].get("qk_std") else ""),
                    "max_err": "-" if c["max_err"] is None else f"{c['max_err']:.2e}", "passed": c["passed"],
                    "message": c["message"], "mismatches": [f"at {tuple(m['index'])}: got {m['got']:.6g}, "
                                                            f"expected {m['expected']:.6g}" for m in c.get("mismatches", [])]}
                   for c in checks],
        "diagnosis": across_configs(checks, numerics=doc.get("numerics"), probes=doc.get("probes")) or "",
        "numerics": numerics_line(doc.get("numerics")),
        "perf_rows": perf_rows, "interval_level": f"{LEVEL:.0%}", "perf_unit": unit, "perf_chart": lit("perf.svg") if bench else None,
        **ai_context(shape0, sizes), **profiler, "shots": shots,
        "profile_notes": doc.get("profile_notes", []) + profiler["roofline_notes"],
        "answers": [(title, _answer(key, answers[key]) if key in answers else None)
                    for key, title in zip(SECTION_KEYS, SECTIONS)],
        "no_report": doc.get("report_md") is None,
        "source": lit(source), "source_lang": lit("python" if source_kind == "triton" else "cpp"), "has_source": bool(source),
        "source_lines": T("(" + ", ".join(map(str, source_lines(sub, source_kind, source))) + ",)"),
        "graded_at": doc.get("graded_at", "-"), "reread": doc.get("reread", ""),
        "cpu_profile": cpu_profile,
        "method": str(doc.get("timing", {}).get("description", "-")).rstrip("."),
        "seed": str(doc["config"].get("seed")), "compile_log": (doc.get("compile") or {}).get("log", ""),
        "flags": [{"tier": f["tier"], "detail": f["detail"]} for f in doc.get("flags", [])],
        "run_compare": _run_rows(before), "cpu_roofline": cpu_roofline,
        "verdict_without_flags": doc.get("verdict_without_flags") or "",
        "timing_noisy": _noisy(doc.get("bench_quality")),
        "score_final": _final_rows(doc.get("score_final")),
        "score_preview": None if doc.get("score_final") else score_preview(doc),
    }


def _noisy(quality: dict | None) -> list | None:
    """The reasons the timings are noisy (the terminal's TIMINGS NOISY lines), or None."""
    if not quality or quality.get("status") != "noisy":
        return None
    return [str(r) for r in quality.get("reasons", [])[:6]] or ["the machine was busy or the timings spread"]


def _final_rows(score: dict | None) -> dict | None:
    """The course's score (gradebook.final_score), formatted like the preview."""
    if not score:
        return None
    return {"score": f"{score['score']:g}", "max": f"{score['max']:g}", "late": score.get("late", ""),
            "rows": [{"name": r["name"], "score": f"{r['score']:g}", "max": f"{r['max']:g}", "output": r["output"]}
                     for r in score.get("rows", [])]}


# ---- score preview: the public rubric's points (grader/score/gradebook.py scores them) -----------

def score_preview(doc: dict) -> dict | None:
    """The preview section: the rubric of the config the results were graded with (else
    the course's), scored by gradebook.preview; None without a [rubric]."""
    from ..core.config import DEFAULT_CONFIG, ConfigError, load_rubric
    from ..score.gradebook import preview
    source = Path(str(doc.get("config", {}).get("source") or DEFAULT_CONFIG))
    try:
        rubric, deadline = load_rubric(source if source.is_file() else DEFAULT_CONFIG)
    except ConfigError:
        return None
    p = preview(doc, rubric, deadline)
    if p is None:
        return None
    return {"score": f"{p.score:g}", "max": f"{p.max_score:g}", "notes": list(p.may_change),
            "rows": [{"name": i.name, "score": f"{i.score:g}", "max": f"{i.max_score:g}", "output": clipped(i.output)}
                      for i in p.items]}


def report_score(results_json: Path, reread: bool) -> str:
    """The points `render` shows for these results, in one line ("" when there is no rubric):
    make report prints it, since report.md and profiles/ read again can change them."""
    doc = _results(Path(results_json))
    if reread:
        doc = refreshed(doc, _profiles_of(doc))
    p = score_preview(doc)
    return f"score (preview, as in the PDF): {p['score']} of {p['max']}" if p else ""


def _run_rows(before: dict | None) -> dict | None:
    """The current run vs an earlier one (grader/report/history.py compare_runs), formatted."""
    if not before:
        return None
    fmt = lambda x: "-" if x is None else f"{x:.2f}x"  # noqa: E731
    return {**before, "rows": [{"S": r["S"], "before": format_ms(r["before"]), "now": format_ms(r["now"]),
                                "speedup": f"{r['speedup']:.2f}x", "before_slowdown": fmt(r["before_slowdown"]),
                                "now_slowdown": fmt(r["now_slowdown"])} for r in before["rows"]]}


EXIT_REPORT = 3     # `grade --report` / `report`: the grade is fine, its report could not be written


def _results(results_json: Path) -> dict:
    """The results document, or ReportError saying why it is not one."""
    try:
        doc = json.loads(results_json.read_text())
    except (OSError, ValueError) as e:
        raise ReportError(f"{results_json}: not a readable results JSON ({e}); "
                          "make one with: python -m grader grade SUBMISSION --json results.json") from None
    if not isinstance(doc, dict) or "verdict" not in doc or "submission" not in doc:
        raise ReportError(f"{results_json} is not a grader results document (no verdict/submission)")
    return doc


def _profiles_of(doc: dict) -> Path | None:
    """The profiles/ folder of the submission the results are of (None without its path)."""
    if not doc["submission"].get("path"):
        return None
    from ..build.parse import profiles_dir
    return profiles_dir(Path(doc["submission"]["path"]))


class RenderError(ReportError):
    """The PDF could not be made from a valid results document (Typst failed, an image
    handed in is broken): report.FAILED.txt says so beside where the PDF belongs."""


def render(results_json: Path | str, out_pdf: Path | str, profile_dir: Path | None = None,
           before_label: str | None = None, reread: bool = False, score: dict | None = None) -> Path:
    """Render the PDF for one results document; `before_label`: compare with the newest
    saved run of that label (grader/report/history.py); `reread`: take report.md and profiles/
    from the submission as they are now (make report), not as they were when graded;
    `score`: the course's score (gradebook.final_score, what a batch's gradebook gives
    this student), shown instead of the public rubric's preview.

    The PDF is replaced only when Typst succeeds. On a failure an existing PDF is moved
    to `<name>.STALE.pdf` and `<name>.FAILED.txt` says why, so that no PDF that looks
    current is left from an older grade; a success removes both."""
    results_json, out_pdf = Path(results_json), Path(out_pdf)
    doc = _results(results_json)
    if profile_dir is None:
        profile_dir = _profiles_of(doc)
    before = None
    if before_label:
        from .history import HistoryError, compare_runs, find
        try:
            before = compare_runs(find(results_json, before_label), doc, before_label)
        except HistoryError as e:
            raise ReportError(str(e)) from None
    from datetime import datetime, timezone
    graded = datetime.fromtimestamp(results_json.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    doc = {**doc, "graded_at": graded, "reread": reread_note(doc) if reread else "", "score_final": score}
    if reread:
        doc = refreshed(doc, profile_dir)
    try:
        render_template("report.typ.j2", lambda build: context(doc, build, profile_dir, before), out_pdf)
    except Exception as e:
        _mark_failed(out_pdf, e, doc["submission"])
        raise
    for leftover in (out_pdf.with_name(f"{out_pdf.stem}.FAILED.txt"), out_pdf.with_name(f"{out_pdf.stem}.STALE.pdf")):
        leftover.unlink(missing_ok=True)
    return out_pdf


def _mark_failed(out_pdf: Path, error: Exception, submission: dict) -> None:
    """No PDF that looks current after a failed render: the old one becomes .STALE.pdf,
    and .FAILED.txt beside it says what failed and what to do."""
    stale = out_pdf.with_name(f"{out_pdf.stem}.STALE.pdf")
    note = ""
    if out_pdf.exists():
        out_pdf.replace(stale)
        note = (f"The PDF of an earlier grade was moved to {stale.name}: it does not show this grade "
                "(nor your latest report.md and profiles/); do not hand it in.\n")
    out_pdf.parent.mkdir(parents=True, exist_ok=True)
    out_pdf.with_name(f"{out_pdf.stem}.FAILED.txt").write_text(
        f"{out_pdf.name} was NOT written for {submission.get('path') or submission.get('name')}:\n{error}\n\n{note}"
        "Fix what the message names, then run `make report` (re-renders without re-grading).\n")


_RENDER_LOCK = threading.Lock()   # matplotlib's pyplot is not thread-safe (batch renders in threads)


def render_template(template: str, make_context, out_pdf: Path | str) -> Path:
    """Render `report_template/<template>` with the context `make_context(build_folder)`
    returns (it may write charts into the folder), compile it with Typst, write the PDF
    atomically. One render at a time per process."""
    with _RENDER_LOCK:
        return _render_template(template, make_context, out_pdf)


RENDER_TIMEOUT_S = 120
RENDER_MEMORY_BYTES = 4 << 30
_TYPST = ("import sys, typst\n"
          "try:\n"
          "    pdf = typst.compile(sys.argv[1], root=sys.argv[2])\n"
          "except Exception as e:\n"
          "    sys.stderr.write(str(getattr(e, 'diagnostic', '') or e))\n"
          "    sys.exit(3)\n"
          "sys.stdout.buffer.write(pdf)\n")


def compile_typst(main: Path, root: Path) -> bytes:
    """The PDF of `main` (Typst, files under `root` only), compiled in a child process of its
    own with a time limit and an address-space limit: a hostile input (an image that expands
    without end) costs that child, never the grader, its batch or its render lock."""
    import resource
    import subprocess

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (RENDER_MEMORY_BYTES, RENDER_MEMORY_BYTES))
    try:
        proc = subprocess.run([sys.executable, "-c", _TYPST, str(main), str(root)], capture_output=True,
                              timeout=RENDER_TIMEOUT_S, preexec_fn=limit, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise RenderError(f"typst did not finish in {RENDER_TIMEOUT_S} s (an image in profiles/ too large to "
                          "draw?); the report was not made") from None
    if proc.returncode != 0 or not proc.stdout.startswith(b"%PDF"):
        said = proc.stderr.decode("utf-8", "replace").strip()
        if proc.returncode == 3:
            raise RenderError(f"typst failed: {said[-500:]}")
        raise RenderError(f"typst stopped (exit {proc.returncode}; out of its {RENDER_MEMORY_BYTES >> 30} GiB "
                          f"of memory?): {said[-300:]}")
    return proc.stdout


def _render_template(template: str, make_context, out_pdf: Path | str) -> Path:
    import jinja2
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                             finalize=esc, autoescape=False, keep_trailing_newline=True)
    env.filters["b"] = lambda x: T("true" if x else "false")
    env.filters["brk"] = breakable
    out_pdf = Path(out_pdf)
    with tempfile.TemporaryDirectory(prefix="report-") as tmp:
        build = Path(tmp)
        ctx = make_context(build)
        source = env.get_template(template).render(**ctx)
        (build / "main.typ").write_text(source)
        try:
            pdf = compile_typst(build / "main.typ", build)
        except RenderError as e:
            diag = str(e).replace(str(build) + "/", "")
            for shot in ctx.get("shots", ()):        # name the student's file, not our copy of it
                diag = diag.replace(shot["file"].strip('"'), shot["path"])
            raise RenderError(diag[:600]) from None
    out_pdf.parent.mkdir(parents=True, exist_ok=True)
    tmp_pdf = out_pdf.with_name(f".{out_pdf.name}.tmp")
    tmp_pdf.write_bytes(pdf)
    tmp_pdf.replace(out_pdf)
    return out_pdf
