"""Stage a reference kernel as a student would hand it in, for `make demo`:

    python tools/demo_submission.py reference/fused.cu DEST

writes DEST/attention.py (the source as `_CUDA_SRC` / `_CPP_SRC`), DEST/report.md (the
course's model answers, reference/report.md) and, for a CUDA kernel, DEST/profiles/ with
the Nsight Compute exports of the references measured on an H200 (tests/fixtures/ncu).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


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
        (dest / "profiles").mkdir()
        for page in ("raw", "details"):
            shutil.copy(REPO / "tests" / "fixtures" / "ncu" / f"references_h200_{page}.csv",
                        dest / "profiles" / f"references_h200_{page}.csv")
    return dest


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python tools/demo_submission.py KERNEL.cpp|.cu DEST")
    print(stage(Path(sys.argv[1]), Path(sys.argv[2])))
