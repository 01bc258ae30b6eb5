"""grader/report/pdf.py: canned results (real grades) -> PDF; the PDF's text is checked with pypdf."""
import json
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("typst")
pypdf = pytest.importorskip("pypdf")

from grader.report.pdf import ReportError, esc, markdown_to_typst, render, split_answers  # noqa: E402

from conftest import REPO, TESTS  # noqa: E402

RESULTS = TESTS / "fixtures" / "results"
HOSTILE = "\n".join([
    '#read("/etc/passwd") and #image("/etc/passwd")', "{{ jinja }} {% raw %}", "$x^2$ @ref <label> ] // /* c */",
    "= not a heading", "<script>alert(1)</script>", "![x](file:///etc/passwd) [js](javascript:alert(1))",
    "ünïcödé ✓ \\u{1F600} trailing backslash \\", "A" * 300,
])


def _text(pdf) -> str:
    return "\n".join(page.extract_text() for page in pypdf.PdfReader(str(pdf)).pages)


def _squash(s: str) -> str:
    return "".join(s.replace("\u200b", "").split())


def test_cpu_report_has_every_section_and_the_numbers(tmp_path):
    pdf = render(RESULTS / "cpu_fused.json", tmp_path / "r.pdf")
    text = _text(pdf)
    for heading in ("Checklist", "Correctness", "Performance", "Arithmetic intensity", "Profiler evidence",
                    "Written answers", "Appendix"):
        assert heading in text
    doc = json.loads((RESULTS / "cpu_fused.json").read_text())
    assert f"{doc['checks'][0]['max_err']:.2e}" in text
    assert f"{doc['bench'][2]['slowdown']:.2f}x" in text
    assert "73.40" in text and "69.21" in text and "256.00" in text   # AI model at S = 1024: naive reads, writes; fused AI
    assert "from 10.67 at" in text                          # the naive total's AI, S/e convention (4·B·H·S²·D)
    assert doc.get("report_md") is None and _squash("No report.md was read: this grade was of a bare .py file") in _squash(text)
    assert "Missing: this section" not in text               # not four times "not found": it was never read


def test_gpu_report_uses_tflops(tmp_path):
    text = _text(render(RESULTS / "gpu_fused_h200.json", tmp_path / "g.pdf"))
    assert "TFLOP/s" in text and "NVIDIA H200" in text and "1.10x" in text


def test_hostile_answers_and_source_print_literally(tmp_path):
    doc = json.loads((RESULTS / "cpu_fused.json").read_text())
    doc["report_md"] = ("---\nstudent: Robert'); #read(\"/etc/passwd\")\n---\n# Performance gap\n" + HOSTILE
                        + "\n```\n#read(\"/etc/passwd\")\n```\n")
    doc["sources"] = {"cpp": '// """ #read("/etc/passwd") {{ x }} \\\n' + HOSTILE}
    doc["message"] = "config 1: {{ boom }} #read(\"/etc/passwd\")"
    src = tmp_path / "hostile.json"
    src.write_text(json.dumps(doc))
    text = _squash(_text(render(src, tmp_path / "h.pdf")))
    for literal in ('#read("/etc/passwd")', "{{jinja}}", "$x^2$", "=notaheading", "<script>alert(1)</script>",
                    "ünïcödé✓", "{{boom}}", "Robert');"):
        assert _squash(literal) in text, literal
    assert "root:x:0" not in text                            # nothing was read from the file system
    assert text.count("Missing:thissectionwasnotfound") == 3  # one answer given, three missing


def test_escape_and_markdown_helpers():
    assert esc("#a $b$ {c}") == "\\#a \\$b\\$ \\{c\\}"
    assert "#raw(" in markdown_to_typst("use `x[i]` here")
    assert "#link(" not in markdown_to_typst("[js](javascript:alert(1))")
    front, answers = split_answers("---\nstudent: Ada\n---\n# Impact of kernel fusion\nFaster.\n")
    assert front == {"student": "Ada"} and answers == {"fusion": "Faster."}


def test_bad_input_is_a_clear_error(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    with pytest.raises(ReportError, match="not a grader results document"):
        render(bad, tmp_path / "x.pdf")
    proc = subprocess.run([sys.executable, "-m", "grader", "report", str(tmp_path / "missing.json")],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2 and "python -m grader grade" in proc.stderr and "Traceback" not in proc.stderr


def test_before_after_and_model_vs_measured_from_profiles(tmp_path):
    """A folder submission with two labelled profiles: naive kernels as 'before' (raw export
    of the ncu probe) and the references' make-profile export as 'after'."""
    import shutil

    from grader.core.config import load
    from grader.run import grade
    ncu = TESTS / "fixtures" / "ncu"
    folder = tmp_path / "ada"
    (folder / "profiles").mkdir(parents=True)
    shutil.copy(TESTS / "submissions" / "invalid" / "compile_error.py", folder / "attention.py")
    shutil.copy(ncu / "raw_base.csv", folder / "profiles" / "before_raw.csv")
    shutil.copy(ncu / "references_h200_raw.csv", folder / "profiles" / "after_raw.csv")
    shutil.copy(ncu / "references_h200_details.csv", folder / "profiles" / "after_details.csv")
    result = grade(folder, load(TESTS / "fast_config.toml"), backend="cpu")
    assert {p["profile"] for p in result.profiles} == {"before", "after"}
    after = [p for p in result.profiles if p["profile"] == "after"]
    assert len(after) == 21                       # details + raw merged: one entry per kernel
    out = tmp_path / "r.json"
    out.write_text(json.dumps(result.to_json()))
    text = _squash(_text(render(out, tmp_path / "r.pdf", profile_dir=folder / "profiles")))
    assert "Beforeandafter(before→after;yourkernels)" in text
    assert "Modelvsmeasured" in text and "naive_S1024" in text and "73.43" in text   # cold DRAM reads
    # both L2 counts, each side against itself: the fused kernel's 31.63 FLOP/byte at the SMs is
    # 105.71 at L2's output (a line multicast to many SMs counted once), so it moves less at L2→SM
    from grader.report.profiles import compare_profiles
    rows = {r["what"].split(" (")[0]: r for r in compare_profiles(list(result.profiles), (1, 8, 64))["rows"]}
    to_sm, out = rows["AI at L2, L2→SM"], rows["AI at L2, L2 out"]
    assert (to_sm["after"], out["after"]) == ("31.63", "105.71")
    assert float(to_sm["change"].rstrip("x")) < float(out["change"].rstrip("x")) / 2
    assert "AIatL2,L2→SM" in text and "AIatL2,L2out" in text


def test_two_make_profile_exports_show_each_reference_once(tmp_path):
    """`make profile LABEL=before` and `LABEL=after` both export the references too: the
    report shows the newest export whole plus the earlier student's kernels (renamed
    before_student_S...), and a tensor-core student's AI uses the model's FLOPs."""
    import shutil

    from grader.core.config import load
    from grader.report.profiles import compare_profiles, shown_profiles
    from grader.run import grade
    ncu = TESTS / "fixtures" / "ncu"
    folder = tmp_path / "ada"
    (folder / "profiles").mkdir(parents=True)
    shutil.copy(TESTS / "submissions" / "invalid" / "compile_error.py", folder / "attention.py")
    for label, export in (("before", "naive_h200"), ("after", "fused_tc_h200")):
        for page in ("raw", "details"):
            shutil.copy(ncu / f"{export}_{page}.csv", folder / "profiles" / f"{label}_{page}.csv")
    result = grade(folder, load(TESTS / "fast_config.toml"), backend="cpu")
    profiles = list(result.profiles)
    assert len(profiles) == 27 + 24             # naive as the student: 3 kernels; fused_tc: 2
    shown = shown_profiles(profiles)
    ranges = [p["nvtx"] for p in shown]
    assert ranges.count("naive_S1024") == 3 and ranges.count("student_S1024") == 2
    assert ranges.count("before_student_S1024") == 3 and len(shown) == 24 + 9
    rows = {r["what"]: r for r in compare_profiles(profiles, (1, 8, 64))["rows"]}
    ai = rows["AI at DRAM (FLOP/byte, the model's FLOPs on both sides: after on tensor cores)"]
    # one FLOP convention: the naive "before" counts the model's FLOPs too (~22.6, not the
    # counters' ~25), so the change is the move on the roofline and nothing else
    assert float(ai["after"]) > 100 and float(ai["before"]) < 30     # ~146 vs ~23: fusion moves right
    from grader.analysis.ai_model import fused
    before_kernels = [p for p in profiles if p.get("profile") == "before" and p.get("nvtx") == "student_S1024"]
    model = fused(1, 8, 1024, 64).flops
    assert float(ai["before"]) == pytest.approx(model / sum(p["dram_bytes"] for p in before_kernels), abs=0.05)
    assert float(rows["time (sum of the kernels, µs)"]["after"]) < 60
    out = tmp_path / "r.json"
    out.write_text(json.dumps(result.to_json()))
    text = _squash(_text(render(out, tmp_path / "r.pdf", profile_dir=folder / "profiles")))
    # 3 kernels in the SOL table, 3 in cold vs warm, 1 model-vs-measured row, 1 in the roofline's note
    # on the two L2 roofs (the fastest L2→SM delivery of the exports: naive_S1024's scores kernel)
    assert text.count("naive_S1024") == 8
    assert "twoL2roofsundertheL2→SMpoints" in text and "(naive_S1024:scores_kernel)" in text
    assert "before_student_S1024" in text and "tensorcores" in text


def test_cpu_report_draws_the_measured_roofline(tmp_path):
    import json as _json
    from pathlib import Path as _Path

    from pypdf import PdfReader

    from grader.report.pdf import render
    doc = _json.loads((TESTS / "fixtures" / "results" / "cpu_fused.json").read_text())
    doc["ceilings"] = {"device": "test CPU (2 threads)", "peak_flop_per_s": 160e9,
                       "bandwidth_bytes_per_s": {"DRAM": 10.5e9}, "source": "measured"}
    (tmp_path / "r.json").write_text(_json.dumps(doc))
    text = "".join(p.extract_text() for p in PdfReader(render(tmp_path / "r.json", tmp_path / "r.pdf")).pages)
    assert "Measured CPU roofline" in text and "160 GFLOP/s" in text and "ridge 15.2" in text


def _folder_with_profiles(tmp_path, warm_synthetic: bool):
    import shutil
    ncu = TESTS / "fixtures" / "ncu"
    folder = tmp_path / "ada"
    (folder / "profiles").mkdir(parents=True)
    shutil.copy(TESTS / "submissions" / "invalid" / "compile_error.py", folder / "attention.py")
    for page in ("raw", "details"):
        shutil.copy(ncu / f"references_h200_{page}.csv", folder / "profiles" / f"after_{page}.csv")
        if warm_synthetic:      # code path only: the cold export relabelled, nothing measured warm
            text = (ncu / f"references_h200_{page}.csv").read_text().replace(":profile:", ":profile_warm:")
            (folder / "profiles" / f"after_warm_{page}.csv").write_text(text)
    return folder


def test_without_a_warm_export_the_report_says_so(tmp_path):
    from grader.core.config import load
    from grader.run import grade
    folder = _folder_with_profiles(tmp_path, warm_synthetic=False)
    result = grade(folder, load(TESTS / "fast_config.toml"), backend="cpu")
    out = tmp_path / "r.json"
    out.write_text(json.dumps(result.to_json()))
    text = _squash(_text(render(out, tmp_path / "r.pdf", profile_dir=folder / "profiles")))
    assert "Coldandwarmcaches" in text and "Nowarm-pipelineexportwashandedin" in text
    assert "bound(NsightCompute'sSOLbottleneckrule)" in text.replace("’", "'")
    assert "balancedissueslots79.7%" in text                  # the scores kernel: ncu's verdict and unit


def test_cold_and_warm_side_by_side_code_path(tmp_path):
    """A synthetic warm export (the cold one with its outer NVTX range renamed) lands in the
    warm columns and the model table, and does not count as a second before/after label."""
    from grader.core.config import load
    from grader.report.profiles import profile_labels, profiler_context
    from grader.run import grade
    folder = _folder_with_profiles(tmp_path, warm_synthetic=True)
    result = grade(folder, load(TESTS / "fast_config.toml"), backend="cpu")
    doc = result.to_json()
    assert {p["profile"] for p in doc["profiles"]} == {"after", "after_warm"}
    assert profile_labels(doc["profiles"]) == ["after"]                 # one label: no before/after
    ctx = profiler_context(doc, tmp_path, (1, 8, 64))
    assert ctx["has_warm"] and ctx["before_after"] is None
    row = next(r for r in ctx["cache_rows"] if r["range"] == "naive_S1024" and r["kernel"].endswith("softmax_rows_kernel"))
    assert row["warm_rd"] == row["cold_rd"] == "33.57"                  # the synthetic copy's own numbers
    assert {r["cache"] for r in ctx["measured_rows"]} == {"cold", "warm"}
    out = tmp_path / "r.json"
    out.write_text(json.dumps(doc))
    text = _squash(_text(render(out, tmp_path / "r.pdf", profile_dir=folder / "profiles")))
    assert "Nowarm-pipelineexport" not in text
    checklist = text.split("Checklist")[1].split("2.Correctness")[0]
    assert "missingProfilerevidence(beforeandafter" in checklist.replace("□", "")
def test_the_score_preview_section_scores_with_the_gradebooks_function(tmp_path):
    """The report's points are gradebook.preview's (one scoring function), marked a preview."""
    from grader.core import config
    from grader.score.gradebook import preview
    doc = json.loads((RESULTS / "cpu_fused.json").read_text())
    doc["config"]["source"] = str(config.DEFAULT_CONFIG)
    (tmp_path / "r.json").write_text(json.dumps(doc))
    text = _text(render(tmp_path / "r.json", tmp_path / "r.pdf"))
    want = preview(doc, *config.load_rubric())
    flat = _squash(text)
    assert _squash(f"{want.score:g} of {want.max_score:g} points") in flat and "Apreview,notthegrade" in flat
    assert "hiddenconfigs" in flat and "performancevsSDPA" in flat
# ---- loud, atomic reports; make report re-reads; Markdown; the appendix's .py lines ----------

def _folder_doc(tmp_path, report_md: str | None = None):
    """A submission folder (the scalar loop, report.md) and a results JSON pointing at it."""
    import shutil
    folder = tmp_path / "ada"
    (folder / "profiles").mkdir(parents=True)
    shutil.copy(TESTS / "submissions" / "correct" / "scalar_loop.py", folder / "attention.py")
    if report_md is not None:
        (folder / "report.md").write_text(report_md)
    doc = json.loads((RESULTS / "cpu_fused.json").read_text())
    doc["submission"] = {"name": "ada", "path": str(folder), "file": "attention.py"}
    doc["report_md"] = report_md
    from grader.build.parse import parse
    doc["sources"] = {"cpp": parse(folder).sources["cpp"].text}
    out = tmp_path / "report"
    out.mkdir()
    (out / "results.json").write_text(json.dumps(doc))
    return folder, out / "results.json", out / "report.pdf"


def test_a_broken_screenshot_fails_loudly_and_leaves_no_stale_pdf(tmp_path):
    from PIL import Image

    from grader.report.pdf import RenderError
    folder, results, pdf = _folder_doc(tmp_path)
    render(results, pdf)
    assert pdf.read_bytes()[:5] == b"%PDF-"
    Image.new("RGB", (40, 30), "red").save(folder / "profiles" / "sol.png", format="JPEG")   # a JPEG named .png
    with pytest.raises(RenderError, match=r"profiles/sol.png: the file is a JPEG image but its name says PNG"):
        render(results, pdf)
    assert not pdf.exists() and pdf.with_name("report.STALE.pdf").read_bytes()[:5] == b"%PDF-"
    failed = pdf.with_name("report.FAILED.txt").read_text()
    assert "sol.png" in failed and "report.STALE.pdf" in failed and "do not hand it in" in failed
    (folder / "profiles" / "sol.png").rename(folder / "profiles" / "sol.jpg")
    good = folder / "profiles" / "roofline.png"
    Image.new("RGB", (40, 30), "blue").save(good, format="PNG")
    good.write_bytes(good.read_bytes()[:60])                  # a PNG signature, then cut off
    with pytest.raises(RenderError, match="roofline.png: not a readable PNG image"):
        render(results, pdf)
    good.unlink()
    text = _text(render(results, pdf))
    assert "sol.jpg" in text
    assert not pdf.with_name("report.FAILED.txt").exists() and not pdf.with_name("report.STALE.pdf").exists()


def _use_bomb(levels: int) -> str:
    """An SVG of `levels` groups, each drawing the one below twice: 2^levels rectangles."""
    lines = ['<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="9" height="9">',
             '<defs><rect id="l0" width="1" height="1"/>']
    lines += [f'<g id="l{i}"><use xlink:href="#l{i - 1}"/><use xlink:href="#l{i - 1}" x="1"/></g>'
              for i in range(1, levels + 1)]
    return "\n".join(lines + ["</defs>", f'<use xlink:href="#l{levels}"/>', "</svg>"])


def test_screenshots_that_expand_without_end_are_refused_before_typst(tmp_path):
    """Thirty small SVGs of nested <use> took 232 s and 4.6 GB of Typst in the batch process,
    holding the render lock (2 000 of them stop the class)."""
    from PIL import Image

    from grader.report.pdf import RenderError
    from grader.report.inputs import MAX_SHOTS
    folder, results, pdf = _folder_doc(tmp_path)
    shots = folder / "profiles"
    (shots / "bomb.svg").write_text(_use_bomb(16))                # 65 536 rectangles, 786 377 elements
    with pytest.raises(RenderError, match=r"bomb.svg: an SVG that draws 786377 elements once its <use>"):
        render(results, pdf)
    (shots / "bomb.svg").write_text(_use_bomb(3).replace('<use xlink:href="#l2"/>', '<use xlink:href="#l3"/>', 1))
    with pytest.raises(RenderError, match="over 10\\^12 elements"):                      # a cycle
        render(results, pdf)
    (shots / "bomb.svg").unlink()
    for i in range(MAX_SHOTS + 1):
        Image.new("RGB", (8, 8), "red").save(shots / f"s{i}.png", format="PNG")
    with pytest.raises(RenderError, match=f"holds {MAX_SHOTS + 1} images; a report shows at most {MAX_SHOTS}"):
        render(results, pdf)
    (shots / f"s{MAX_SHOTS}.png").unlink()
    Image.new("L", (8000, 6000)).save(shots / "s0.png", format="PNG")
    with pytest.raises(RenderError, match="s0.png: 8000 x 6000 pixels"):
        render(results, pdf)


def test_typst_runs_in_a_bounded_child(tmp_path, monkeypatch):
    """Whatever gets past the caps costs Typst's own process its time limit, not the grader."""
    import time

    from grader.report import pdf as report
    for n in range(30):
        (tmp_path / f"b{n}.svg").write_text(_use_bomb(16) + f"<!-- {n} -->")
    (tmp_path / "main.typ").write_text("".join(f'#image("b{n}.svg", width: 2cm)\n' for n in range(30)))
    monkeypatch.setattr(report, "RENDER_TIMEOUT_S", 3)
    t0 = time.monotonic()
    with pytest.raises(report.RenderError, match="typst did not finish in 3 s"):
        report.compile_typst(tmp_path / "main.typ", tmp_path)
    assert time.monotonic() - t0 < 10


def test_make_report_rereads_report_md_and_profiles_without_regrading(tmp_path):
    folder, results, pdf = _folder_doc(tmp_path, "---\nstudent: Ada\n---\n# Performance gap\nFirst draft.\n")
    before = results.read_bytes()
    assert "Firstdraft." in _squash(_text(render(results, pdf, reread=True)))
    (folder / "report.md").write_text("---\nstudent: Ada\n---\n# Performance gap\nFixed the typo.\n")
    from conftest import cpu_profile_row as _row, write_cpu_profile as write_rows
    write_rows(folder / "profiles" / "before_cpu.csv", [_row(S=1024, cores=8)])
    proc = subprocess.run([sys.executable, "-m", "grader", "report", str(results), "--out", str(pdf)],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^score \(preview, as in the PDF\): [\d.]+ of [\d.]+$", proc.stdout, re.M), proc.stdout
    text = _squash(_text(pdf))
    assert "Fixedthetypo." in text and "Firstdraft." not in text and "YourCPUprofiles" in text
    assert "readagainnow" in text and "fromthegradewrittenat" in text
    assert results.read_bytes() == before                     # nothing re-timed, nothing rewritten
    proc = subprocess.run([sys.executable, "-m", "grader", "report", str(results), "--out", str(pdf), "--as-graded"],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0 and "Firstdraft." in _squash(_text(pdf))


def test_make_report_holds_the_rereads_profiles_to_the_submission_again(tmp_path):
    """make report re-reads profiles/ and scores them; the grade's flag that no profile was of
    this submission stayed, so one PDF said "profiler evidence 5/5" and "they earn nothing" (a
    fresh walkthrough, 2026-11-27: make grade, then make profile, then make report). The flag
    is decided again from the profiles re-read: gone when they are the submission's, kept (the
    new one) when they are another source's."""
    from conftest import cpu_profile_row, write_cpu_profile
    from grader.build.parse import parse
    from grader.report.inputs import refreshed
    folder, results, _ = _folder_doc(tmp_path)
    doc = json.loads(results.read_text())
    stale = {"code": "profile_provenance", "tier": "review", "detail": "no profile in profiles/ is of this "
             "submission's kernels (before: ...), so they earn nothing"}
    other = {"code": "forged_timings", "tier": "review", "detail": "S=128: ..."}
    doc["flags"] = [stale, other]
    digest = parse(folder).sources["cpp"].digest
    write_cpu_profile(folder / "profiles" / "after_cpu.csv", [cpu_profile_row(label="after", source=digest)])
    assert refreshed(doc, folder / "profiles")["flags"] == [other]
    write_cpu_profile(folder / "profiles" / "after_cpu.csv", [cpu_profile_row(label="after", source="0" * 16)])
    flags = refreshed(doc, folder / "profiles")["flags"]
    assert flags[0] == other and [f["code"] for f in flags] == ["forged_timings", "profile_provenance"]
    assert "(after:" in flags[1]["detail"] and flags[1] != stale


def test_make_report_says_when_the_kernel_changed_since_the_grade(tmp_path):
    """make report keeps the grade's numbers and sources: after an edit of the kernel's code its
    profiles were held to the old source and the PDF said "profile them with make profile",
    which cannot help (a fresh walkthrough, 2026-11-27); it now says the code changed and to
    make grade. A comment changes nothing."""
    from grader.report.inputs import reread_note
    folder, results, _ = _folder_doc(tmp_path)
    doc = json.loads(results.read_text())
    assert "changed since" not in reread_note(doc)
    text = (folder / "attention.py").read_text()
    (folder / "attention.py").write_text(text.replace("#include", "// a comment\n#include", 1))
    assert "changed since" not in reread_note(doc)
    (folder / "attention.py").write_text(text.replace("#include", "static int edited = 1;\n#include", 1))
    assert "_CPP_SRC) has changed since this grade" in reread_note(doc) and "make grade" in reread_note(doc)


def test_markdown_tables_code_lists_emphasis_and_math():
    typst = markdown_to_typst("| a | b |\n|:--|--:|\n| *x* | `y` |\n\n1. one\n   - inner ~~no~~\n\n"
                              "Inline $\\frac{S D}{e (S + D)}$ and\n\n$$\\sum_{j} e^{s_j - m}$$\n\n"
                              "```cpp\nint x;\n```\n")
    assert "#table(columns: 2, align: (left, right,)" in typst and "table.header([*a*], [*b*])" in typst
    assert "#emph[x]" in typst and '#raw("y")' in typst and "#enum(start: 1, [one" in typst
    assert "#list([inner #strike[no]])" in typst and "$frac(S D, e ( S + D ))$" in typst
    assert "$ sum_(j) e^(s_(j) - m) $" in typst and '#raw(block: true, lang: "cpp", "int x;")' in typst
    # math outside the whitelist is shown as written, never evaluated
    assert markdown_to_typst('$#read("/etc/passwd")$') == '#raw(block: false, "#read(\\"/etc/passwd\\")")'


def test_markdown_renders_and_hostile_math_prints_literally(tmp_path):
    doc = json.loads((RESULTS / "cpu_fused.json").read_text())
    doc["report_md"] = ("# Performance gap\n| kernel | AI |\n|---|---|\n| naive | $S^2$ |\n\n"
                        '$\\text{a"b} \\begin{x}$ and $$#read("/etc/passwd")$$ and $x_{\\text{(}, y}$\n')
    src = tmp_path / "m.json"
    src.write_text(json.dumps(doc))
    text = _squash(_text(render(src, tmp_path / "m.pdf")))
    assert "kernelAI" in text and '#read("/etc/passwd")' in text and "\\begin{x}" in text
    assert "root:x:0" not in text


def test_the_appendix_numbers_source_lines_as_the_py(tmp_path):
    from grader.build.parse import parse
    from grader.report.inputs import source_lines
    folder, results, pdf = _folder_doc(tmp_path)
    src = parse(folder).sources["cpp"]
    lines = source_lines({"path": str(folder)}, "cpp", src.text)
    assert lines == list(src.line_map) and src.line_map[0] > 1
    assert source_lines({"path": str(tmp_path / "gone")}, "cpp", "a\nb") == [1, 2]
    text = _text(render(results, pdf))
    body = [ln for ln in text.splitlines() if "torch::Tensor attention" in ln]
    number = src.line_map[src.text.splitlines().index(next(l for l in src.text.splitlines() if "torch::Tensor attention" in l))]
    assert body and body[0].strip().startswith(str(number))


def test_template_questions_are_not_answers():
    from conftest import TEMPLATE_DIR
    template = (TEMPLATE_DIR / "report.md").read_text()
    assert split_answers(template)[1] == {}
    answered = template.replace("on the roofline, and by how much did the time change?",
                                "on the roofline, and by how much did the time change?\n\nIt moved right.")
    assert set(split_answers(answered)[1]) == {"fusion"}


def _answered_in_place(tree: Path) -> str:
    """The handout's flow: the student answers in student_template/report.md itself."""
    path = tree / "student_template" / "report.md"
    text = path.read_text()
    for prompt in ("(SOL Memory % vs Compute %, DRAM %) and your arithmetic-intensity calculation.",
                   "What does PyTorch do that you don't?", "What does that say about the bottleneck at long context?",
                   "on the roofline, and by how much did the time change?"):
        assert prompt in text, prompt
        text = text.replace(prompt, prompt + "\n\nMy own answer, with numbers.")
    path.write_text(text)
    return text


def test_answers_written_in_the_template_itself_count(tmp_path):
    """Issue 33, item 1: the prompts to discount are the grader's pristine copy, not the file
    the student edits (a copy of the checkout whose student_template/report.md is answered)."""
    files = subprocess.run(["git", "ls-files", "grader", "student_template", "assignment", "pyproject.toml"],
                           cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, tmp_path / f)
    answered = _answered_in_place(tmp_path)
    code = ("import json, sys; from grader.report.pdf import split_answers; "
            "print(json.dumps(sorted(split_answers(sys.stdin.read())[1])))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, input=answered, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)}, check=True).stdout
    assert json.loads(out) == ["bound", "fusion", "gap", "length"]


def test_cpu_profiles_before_after_and_their_conditions(tmp_path):
    from conftest import cpu_profile_row as _row, write_cpu_profile as write_rows

    from grader.evidence.cpu_profile import read_csv
    write_rows(tmp_path / "before_cpu.csv", [_row(label="before", median_ms=400.0, threads=2)])
    write_rows(tmp_path / "after_cpu.csv", [_row(label="after", model="fused", median_ms=100.0, threads=4)])
    doc = json.loads((RESULTS / "cpu_fused.json").read_text())
    doc["profiles"] = read_csv(tmp_path / "before_cpu.csv") + read_csv(tmp_path / "after_cpu.csv")
    doc["report_md"] = "---\nprofile after: naive\n---\n"
    (tmp_path / "r.json").write_text(json.dumps(doc))
    text = _squash(_text(render(tmp_path / "r.json", tmp_path / "r.pdf")))
    assert "Beforeandafter(before→after,S=1024)" in text and "timepercall(ms,median)400.000100.0000.25x" in text
    assert "withdifferentthreadcounts(before:2,after:4)" in text
    assert "after:bytesfromthenaivemodel(declaredinreport.md)" in text
    assert "✓done" not in text and text.count("■done") >= 2         # the CPU exports count as evidence


def test_the_report_names_the_pattern_over_the_configs(tmp_path):
    doc = json.loads((RESULTS / "cpu_fused.json").read_text())
    doc["verdict"], doc["bench"] = "wrong_answer", []
    doc["checks"][1].update(passed=False, max_err=0.9, message="max_err 0.9 >= tolerance 0.001")
    doc["checks"].append({"name": "config 4", "config": {"B": 1, "H": 2, "S": 256, "D": 64, "qk_std": 8.0},
                          "max_err": 1e-5, "passed": True, "message": "", "mismatches": []})
    (tmp_path / "r.json").write_text(json.dumps(doc))
    text = _squash(_text(render(tmp_path / "r.json", tmp_path / "r.pdf")))
    # config 2 differs from the configs that pass in S (333: no tile divides it) and in B and H:
    # the diagnosis names both suspects (grader/analysis/diagnose.py across_configs)
    assert "Diagnosisovertheconfigs:wrongonlyonconfig2,whichdiffersfromeveryconfigthatpassesinS(S=333" in text
    assert "thelastpartialtileskippedorreadpastitsend,orthebatchindexing" in text
    assert "B=1H=2S=256D=64,qandk×8(largescores)" in text


def test_a_kept_question_renders_apart_from_the_answer(tmp_path):
    """The question a student kept above their answer prints as "Question: ..." (grey, italic),
    then their answer: a walkthrough could not tell where the answer began (S3)."""
    from conftest import TEMPLATE_DIR
    doc = json.loads((RESULTS / "cpu_fused.json").read_text())
    doc["report_md"] = (TEMPLATE_DIR / "report.md").read_text().replace(
        "What does PyTorch do that you don't?", "What does PyTorch do that you don't?\n\nIt tiles K and V in SRAM.")
    src = tmp_path / "r.json"
    src.write_text(json.dumps(doc))
    text = _squash(_text(render(src, tmp_path / "r.pdf")))
    assert _squash("Question: How much slower than") in text and _squash("It tiles K and V in SRAM.") in text
    assert text.count(_squash("Question:")) == 1


def test_a_grade_without_a_benchmark_says_so_where_the_method_would_be(tmp_path):
    """A re-walk read "-. Tolerance 0.001 ..." in the appendix of an unimplemented template's PDF."""
    doc = json.loads((RESULTS / "cpu_fused.json").read_text())
    doc["bench"], doc["timing"] = [], {}
    src = tmp_path / "r.json"
    src.write_text(json.dumps(doc))
    text = _squash(_text(render(src, tmp_path / "r.pdf")))
    assert _squash("No benchmark ran in this grade. Tolerance") in text and _squash("-. Tolerance") not in text
