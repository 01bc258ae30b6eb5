"""grader/evidence/exports.py: whose kernels a profile is of. `make profile` records, around each
kernel's NVTX range, the digest of the source it was built from; the judge holds it to the
graded submission. The exports here are the real H200 fixtures; where a test needs another
digest, it is written into a copy of the fixture's range column (in place of the digest
range references_h200 records, in front of the student ranges of the exports that predate
it), nothing else changed."""
import csv
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from grader.core import config
from grader.score import gradebook as gb
from grader.evidence.exports import kernel_names, provenance, read_profiles
from grader.build.parse import parse, source_digest
from conftest import REPO

NCU = REPO / "tests" / "fixtures" / "ncu"


def _stage(ref: str, dest: Path) -> Path:
    subprocess.run([sys.executable, str(REPO / "tools" / "demo_submission.py"), str(REPO / "reference" / ref),
                    str(dest)], check=True, capture_output=True)
    return dest


def _with_digest(src: Path, dest: Path, digest: str) -> None:
    """A copy of one fixture export whose student ranges sit inside `src_<digest>` (the
    export's own digest range replaced, or one added where it has none)."""
    rows = list(csv.reader(io.StringIO(src.read_text())))
    col = [i for i, c in enumerate(rows[0]) if c.startswith("thread Domain:Push/Pop_Range")]
    for row in rows[1:]:
        for i in col:
            if i < len(row) and ":student_S" in row[i]:
                if re.search(r":src_[0-9a-f]{12}:", row[i]):
                    row[i] = re.sub(r":src_[0-9a-f]{12}:", f":src_{digest}:", row[i])
                else:
                    row[i] = row[i].replace('"<default domain>:student_S',
                                            f'"<default domain>:src_{digest}:none:none:none:none:none:none"  '
                                            '"<default domain>:student_S')
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL).writerows(rows)
    dest.write_text(buf.getvalue())


def _check(folder: Path) -> tuple[set, list, list]:
    sub = parse(folder)
    records, _ = read_profiles(sub)
    bad, problems = provenance({k: s.text for k, s in sub.sources.items()}, list(records))
    return bad, problems, list(records)


def test_kernel_names_of_the_references():
    assert kernel_names((REPO / "reference" / "naive.cu").read_text()) == {
        "scores_kernel", "softmax_rows_kernel", "weighted_sum_kernel"}
    assert kernel_names((REPO / "reference" / "fused_tc.cu").read_text()) == {"fused_tc_kernel", "merge_splits_kernel"}


def test_the_model_answers_profiles_are_their_own(tmp_path):
    """fused.cu staged with the H200 exports (after: fused.cu as the student; before: the
    naive kernels, standing for an earlier version: the staging drops the digest of
    reference/naive.cu their export records, which would make them the course's) keeps both labels."""
    sub = _stage("fused.cu", tmp_path / "s")
    bad, problems, _ = _check(sub)
    assert bad == set() and problems == []
    for page in ("raw", "details"):          # the export as make profile wrote it: the course's naive.cu
        shutil.copy(NCU / f"naive_h200_{page}.csv", sub / "profiles" / f"before_{page}.csv")
    assert _check(sub)[:2] == ({"before"}, ["profile 'before' is of the course's naive.cu, not of your kernel (its "
                                            "exports record that source): it earns nothing"])


def test_the_references_exports_beside_a_cpu_kernel_earn_nothing(tmp_path):
    """The issue's attack: the course's own Nsight Compute exports handed in beside a CPU
    kernel earned both profiler items (+10) with no flag."""
    sub = _stage("fused.cpp", tmp_path / "s")
    (sub / "profiles").mkdir()
    for label, export in (("before", "naive_h200"), ("after", "references_h200")):
        for page in ("raw", "details"):
            shutil.copy(NCU / f"{export}_{page}.csv", sub / "profiles" / f"{label}_{page}.csv")
    bad, problems, _ = _check(sub)
    assert bad == {"before", "after"}
    # each export records the digest of the reference it profiled (naive.cu, fused.cu)
    assert sorted(problems) == [f"profile '{label}' is of the course's {ref}, not of your kernel (its exports record "
                                "that source): it earns nothing" for label, ref in (("after", "fused.cu"), ("before", "naive.cu"))]
    # an export without a digest (as before make profile recorded one) of kernels the submission lacks
    sys.path.insert(0, str(REPO / "tools"))
    from demo_submission import copy_without_student_digest
    for page in ("raw", "details"):
        copy_without_student_digest(NCU / f"naive_h200_{page}.csv", sub / "profiles" / f"before_{page}.csv")
    bad, problems, _ = _check(sub)
    assert bad == {"before", "after"}
    assert "profile 'after' is of the course's fused.cu" in problems[0]
    assert "no profile in profiles/ is of this submission's kernels (before:" in problems[1]
    rubric, _ = config.load_rubric()
    doc = json.loads((REPO / "tests" / "fixtures" / "results" / "cpu_fused.json").read_text())
    records, _ = read_profiles(parse(sub))
    doc = {**doc, "profiles": [dict(r) for r in records], "sources": {"cpp": (REPO / "reference" / "fused.cpp").read_text()}}
    items = {i.key: i for i in gb.score_items(doc, rubric)}
    assert items["profile"].score == 0 and items["before_after"].score == 0
    assert "not of this submission's kernels" in items["profile"].output


def test_an_export_of_a_reference_is_borrowed_even_under_the_students_kernel_names(tmp_path):
    """A student's own CUDA kernel that copies the reference's kernel names, handed in with
    make profile's export of reference/fused.cu: its digest names the reference."""
    sub = _stage("fused.cu", tmp_path / "s")
    text = (sub / "attention.py").read_text().replace("// ", "// (my own) ", 1)
    (sub / "attention.py").write_text(text)
    for page in ("raw", "details"):
        _with_digest(NCU / f"references_h200_{page}.csv", sub / "profiles" / f"after_{page}.csv",
                     source_digest((REPO / "reference" / "fused.cu").read_text()))
    bad, problems, records = _check(sub)
    assert any(r.get("source") for r in records)
    assert "after" in bad and any("is of the course's fused.cu" in p for p in problems)


def test_the_references_export_records_the_code_it_profiled(tmp_path):
    """make profile's real export of reference/fused.cu (no digest written in) names its source:
    beside a kernel of the student's own code it is borrowed, beside fused.cu's code it counts."""
    from grader.build.parse import code_digest
    from grader.analysis.ncu import read_files
    fused = code_digest((REPO / "reference" / "fused.cu").read_text(), "cuda")
    student = [p for p in read_files([NCU / "references_h200_raw.csv"]) if p.nvtx.startswith("student_S")]
    assert len(student) == 3
    assert {p.source for p in student} == {fused}, "reference/fused.cu's code changed: re-take the H200 exports"
    sub = _stage("fused.cu", tmp_path / "s")
    for page in ("raw", "details"):
        shutil.copy(NCU / f"references_h200_{page}.csv", sub / "profiles" / f"after_{page}.csv")
    assert _check(sub)[:2] == (set(), [])
    _own_code(sub)
    bad, problems, _ = _check(sub)
    assert "after" in bad and any("profile 'after' is of the course's fused.cu" in p for p in problems)


def _own_code(sub: Path) -> None:
    """The staged reference made a kernel of the student's own: a line of code added (a
    comment would leave it the reference's code)."""
    text = (sub / "attention.py").read_text().replace("#include", "static const int kMine = 1;\n#include", 1)
    (sub / "attention.py").write_text(text)


def _profiled_own_kernel(dest):
    """A kernel of the student's own, with exports of it (after: its digest) and of an earlier
    version (before: another digest), as make profile leaves them."""
    sub = _stage("fused.cu", dest)
    _own_code(sub)
    mine = parse(sub).sources["cuda"].digest
    for page in ("raw", "details"):
        _with_digest(NCU / f"references_h200_{page}.csv", sub / "profiles" / f"after_{page}.csv", mine)
        _with_digest(NCU / f"naive_h200_{page}.csv", sub / "profiles" / f"before_{page}.csv", "0123456789ab")
    return sub


def test_an_export_of_this_submission_counts_and_so_does_an_earlier_version(tmp_path):
    sub = _profiled_own_kernel(tmp_path / "s")
    bad, problems, _ = _check(sub)
    assert bad == set() and problems == []


def test_a_comment_after_make_profile_leaves_the_exports_this_kernels(tmp_path):
    """A student who profiled, then added a comment, lost both profiler items (10 points) with
    no reason given (a fresh walkthrough, 2026-11-27). make profile records the digest of the
    source's code, comments and layout apart; a change of the code still makes the exports
    another source's, and the message says to profile again."""
    sub = _profiled_own_kernel(tmp_path / "s")
    text = (sub / "attention.py").read_text()
    (sub / "attention.py").write_text(text.replace("static const int kMine = 1;", "static const int kMine = 1;  // tuned\n\n"))
    assert _check(sub)[:2] == (set(), [])
    (sub / "attention.py").write_text(text.replace("kMine = 1;", "kMine = 2;"))
    bad, problems, _ = _check(sub)
    assert bad == {"before", "after"} and "make profile again" in problems[0], problems
