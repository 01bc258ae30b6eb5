"""Kernel similarity: names, comments and layout do not hide a copy; the template matches nobody."""
import re
from pathlib import Path

from grader.course import similarity as sim
from conftest import REPO

FUSED = (REPO / "reference" / "fused.cpp").read_text()
NAIVE = (REPO / "reference" / "naive.cpp").read_text()
TEMPLATE = REPO / "grader" / "pristine" / "attention.py"      # as shipped (tests/conftest.py TEMPLATE_DIR)


def _disguise(src: str) -> str:
    """What a copier does: rename every local name, drop the comments, re-indent."""
    names = sorted(set(re.findall(r"\b(?:acc|row|col|i|j|k|m|l|out|scale|score)\b", src)))
    for n, name in enumerate(names):
        src = re.sub(rf"\b{name}\b", f"v{n}_", src)
    src = re.sub(r"//[^\n]*", "", src)
    return "\n".join("\t" + line.strip() for line in src.splitlines())


def test_normalised_tokens_ignore_names_comments_and_layout():
    a = [t for t, _ in sim.tokens("int acc = 0; // sum\nacc += x[3];", "cpp")]
    b = [t for t, _ in sim.tokens("int   total=1;\n\n  total += y[7]; /* other */", "cpp")]
    assert a == b == ["int", "N", "=", "#", ";", "N", "+", "=", "N", "[", "#", "]", ";"]


def test_a_disguised_copy_is_found_and_unrelated_kernels_rank_below_it():
    template = sim.template_hashes(TEMPLATE)
    pairs = sim.compare({"orig": {"cpp": FUSED}, "copy": {"cpp": _disguise(FUSED)}, "other": {"cpp": NAIVE}}, template)
    top = pairs[0]
    print(sim.format_table(pairs))
    assert {top.a, top.b} == {"copy", "orig"} and top.score >= 0.9
    assert all(p.score < top.score for p in pairs[1:])
    assert top.lines_a and top.lines_b


def test_the_template_alone_matches_nobody():
    from grader.build.parse import parse
    template_src = parse(TEMPLATE).sources["cpp"].text
    pairs = sim.compare({"a": {"cpp": template_src}, "b": {"cpp": template_src}}, sim.template_hashes(TEMPLATE))
    assert pairs == []
    # without removing the template the two would be identical
    assert sim.compare({"a": {"cpp": FUSED}, "b": {"cpp": FUSED}})[0].score == 1.0


def test_winnowing_guarantee_a_shared_run_of_w_plus_k_minus_1_tokens_is_found():
    shared = " ".join(f"x{i} = y{i} * {i};" for i in range(5))      # 25 tokens
    a = "int f() { return 1 + 2 - 3; } " + shared
    b = shared + " float g(float q) { while (q < 9) q = q * q; return q; }"
    fa, fb = (set(sim.winnow(sim.tokens(s, "cpp"))) for s in (a, b))
    assert fa & fb


def test_csv_ranks_pairs_and_neutralises_names():
    pairs = [sim.Pair("=evil()", "b", "cpp", 0.9, 10, 12, 11, "1-3", "2-4")]
    text = sim.to_csv(pairs)
    assert text.splitlines()[0].startswith("rank,a,b,kernel,similarity")
    assert "'=evil()" in text


def test_the_similarity_command_writes_the_table_and_the_summary_section(tmp_path):
    import json
    import subprocess
    import sys

    from grader.core import config
    from grader.course.batch import write_gradebook
    doc = json.loads((REPO / "tests" / "fixtures" / "results" / "cpu_fused.json").read_text())
    out = tmp_path / "out"
    kernels = {"orig": FUSED, "copy": _disguise(FUSED), "other": NAIVE}
    for sid, src in kernels.items():
        folder = out / "students" / sid
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps({**doc, "submission": {**doc["submission"], "name": sid},
                                                         "sources": {"cpp": src}}))
        (folder / "batch.json").write_text(json.dumps({"submission": sid, "key": "k", "finished_at": "x"}))
    cfg = config.load(REPO / "tests" / "fast_config.toml")
    write_gradebook(out, sorted(kernels), cfg, *config.load_rubric(REPO / "tests" / "fast_config.toml"), {},
                    render_pdf=False)
    proc = subprocess.run([sys.executable, "-m", "grader", "similarity", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    first = (out / "similarity.csv").read_text().splitlines()[1].split(",")
    assert first[:4] == ["1", "copy", "orig", "cpp"] and float(first[4]) >= 0.9
    assert "summary.pdf rebuilt" in proc.stdout
    from pypdf import PdfReader
    text = "".join(p.extract_text() for p in PdfReader(out / "summary.pdf").pages)
    assert "Similar kernels" in text and "copy" in text
    bad = subprocess.run([sys.executable, "-m", "grader", "similarity", str(tmp_path / "nope")], cwd=REPO,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
