"""Build the Gradescope autograder zip (CPU path): `make gradescope` -> report/autograder.zip.

    python tools/gradescope/build_zip.py [--out report/autograder.zip] [--config assignment/config.toml]

The zip holds, at its root, `setup.sh` and `run_autograder` (Gradescope requires both
there), and the grader as it is in this checkout: grader/ (sources, headers), the
assignment config, pyproject.toml. No hidden configs: a submission runs unsandboxed in
Gradescope's container and could read them (INSTRUCTORS.md, section on Gradescope).
Entries are sorted and dated 1980-01-01, so the same checkout gives the same zip.
"""
from __future__ import annotations

import argparse
import stat
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SKIP_PARTS = {"__pycache__", ".cache", ".pytest_cache"}
EXECUTABLE = {"setup.sh", "run_autograder"}


def members(config: Path) -> list[tuple[str, Path]]:
    """(name in the zip, file) for everything the autograder needs."""
    files = [("setup.sh", HERE / "setup.sh"), ("run_autograder", HERE / "run_autograder"),
             ("pyproject.toml", REPO / "pyproject.toml"), ("assignment/config.toml", config)]
    for p in sorted((REPO / "grader").rglob("*")):
        rel = p.relative_to(REPO)
        if p.is_file() and not SKIP_PARTS & set(rel.parts) and p.suffix not in (".pyc", ".so", ".o"):
            files.append((rel.as_posix(), p))
    # the course's reference kernels: the grader knows an export of one by its source's digest
    # (grader/evidence/exports.py provenance), and a grade without them failed on every submission
    for p in sorted((REPO / "reference").iterdir()):
        if p.suffix in (".cu", ".cpp") or p.name.endswith(".triton.py"):
            files.append((p.relative_to(REPO).as_posix(), p))
    return files


def build(out: Path, config: Path) -> Path:
    if not config.is_file():
        raise SystemExit(f"error: config {config} does not exist")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, path in sorted(members(config)):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            mode = 0o755 if name in EXECUTABLE else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, path.read_bytes())
    tmp.replace(out)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "report" / "autograder.zip"))
    ap.add_argument("--config", default=str(REPO / "assignment" / "config.toml"),
                    help="the assignment config the autograder grades with")
    args = ap.parse_args()
    out = build(Path(args.out), Path(args.config))
    with zipfile.ZipFile(out) as z:
        n = len(z.namelist())
    print(f"{out}: {n} files; upload it as the assignment's autograder (Ubuntu 24.04 base image) and set the "
          "assignment's memory to 3 GB in its Autograder Settings (Gradescope's default, 768 MB, grades nothing: "
          "INSTRUCTORS.md section 8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
