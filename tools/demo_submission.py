"""Stage a reference kernel as a student would hand it in, for `make demo`:

    python tools/demo_submission.py reference/fused.cu DEST

writes DEST/attention.py (the source as `_CUDA_SRC` / `_CPP_SRC`), DEST/report.md (the
course's model answers, reference/report.md) and, for a CUDA kernel, DEST/profiles/ with
Nsight Compute exports measured on an H200 (tests/fixtures/ncu): `before` = the naive
kernels as the student, standing for the student's earlier version, `after` = this kernel as
the student.
"""
from __future__ import annotations

import csv
import io
import re
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# kernel -> the fixture export in which it was the profiled student (references_h200: fused.cu)
PROFILED = {"naive": "naive_h200", "fused": "references_h200", "fused_tc": "fused_tc_h200"}
_STUDENT_DIGEST = re.compile(r'"<default domain>:src_[0-9a-f]{12}(?::none)*"\s*(?="<default domain>:student_S)')


def copy_without_student_digest(src: Path, dest: Path) -> None:
    """A copy of an export whose student ranges no longer sit inside `src_<digest>`. `make profile`
    records the digest of the profiled source (the judge holds it to the graded submission,
    grader/evidence/exports.py); the naive export's is reference/naive.cu's, which the judge
    counts as the course's code, not the student's. The demo's `before` stands for the
    student's own earlier version, so it carries no digest, as exports made before make profile
    recorded one: nothing else changes."""
    rows = list(csv.reader(io.StringIO(src.read_text())))
    for row in rows:
        row[:] = [_STUDENT_DIGEST.sub("", cell) for cell in row]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL).writerows(rows)
    dest.write_text(buf.getvalue())


def stage(kernel: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    var = "_CUDA_SRC" if kernel.suffix == ".cu" else "_CPP_SRC"
    text = kernel.read_text()
    if '"""' in text:
        raise SystemExit(f"{kernel} contains a triple quote: cannot wrap it in a string literal")
    (dest / "attention.py").write_text(f'"""The course reference {kernel.name}, staged as a submission."""\n\n'
                                       f'{var} = r"""\n{text}"""\n')
    shutil.copy(REPO / "reference" / "report.md", dest / "report.md")
    if kernel.suffix == ".cu":
        # `make profile` exports measured on an H200 with this kernel as the student (each
        # holds the references too): the naive kernels as "before", the kernel as "after"
        (dest / "profiles").mkdir()
        labels = {"before": "naive_h200"} if kernel.stem != "naive" else {}
        labels["after"] = PROFILED.get(kernel.stem, "references_h200")
        for label, export in labels.items():
            copy = copy_without_student_digest if label == "before" else shutil.copy
            for page in ("raw", "details"):
                copy(REPO / "tests" / "fixtures" / "ncu" / f"{export}_{page}.csv",
                     dest / "profiles" / f"{label}_{page}.csv")
                warm = REPO / "tests" / "fixtures" / "ncu" / f"{export}_warm_{page}.csv"
                if warm.is_file():      # the warm-pipeline export of the same run, once one is measured
                    copy(warm, dest / "profiles" / f"{label}_warm_{page}.csv")
    return dest


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python tools/demo_submission.py KERNEL.cpp|.cu DEST")
    print(stage(Path(sys.argv[1]), Path(sys.argv[2])))
