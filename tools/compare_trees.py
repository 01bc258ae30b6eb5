"""Side by side, in one run: is this checkout slower than another one (an older commit's
worktree)? Alternates the two trees, after one warm-up each, and prints the medians and
the ratio (this tree / the other).

    git worktree add /tmp/base <commit>
    python tools/compare_trees.py /tmp/base grade 3     # make grade SUBMISSION=reference/fused.cpp, warm cache
    python tools/compare_trees.py /tmp/base batch 2     # a 4-submission CPU class, every kernel compiled

Run it on a quiet machine: a figure taken beside other work is not a figure."""
from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CLASS = ["reference/fused.cpp", "reference/naive.cpp", "reference/fused.cpp",
         "tests/submissions/correct/scalar_loop.py"]


def make_class(tree: Path, dest: Path) -> None:
    """Four CPU submissions from `tree`, each with a fresh salt (nothing found in a cache)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    salt = uuid.uuid4().hex
    for i, rel in enumerate(CLASS):
        text = (tree / rel).read_text()
        if rel.endswith(".cpp"):
            text = f'_CPP_SRC = r"""\n{text}\n// {salt} {i}\n"""\n'
        else:
            text = text.replace("#include <torch/extension.h>", f"#include <torch/extension.h>\n// {salt} {i}", 1)
        (dest / f"s{i}.py").write_text(text)


def grade(tree: Path, name: str) -> float:
    t = time.perf_counter()
    subprocess.run(["make", "grade", "SUBMISSION=reference/fused.cpp", f"OUT=/tmp/compare_{name}",
                    f"PYTHON={sys.executable}"], cwd=tree, capture_output=True, check=True)
    return time.perf_counter() - t


def batch(tree: Path, name: str) -> float:
    cls, out = Path(f"/tmp/compare_class_{name}"), Path(f"/tmp/compare_out_{name}")
    make_class(tree, cls)
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "batch", str(cls), "--out", str(out)], cwd=tree,
                   capture_output=True, check=True)
    return time.perf_counter() - t


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[2] not in ("grade", "batch"):
        print(__doc__)
        return 2
    trees = {"other": Path(sys.argv[1]).resolve(), "this": HERE}
    run = grade if sys.argv[2] == "grade" else batch
    for name, tree in trees.items():
        print(f"warm-up {name}: {run(tree, name):.2f} s", flush=True)
    times: dict[str, list[float]] = {n: [] for n in trees}
    for r in range(int(sys.argv[3])):
        for name, tree in (list(trees.items()) if r % 2 == 0 else list(reversed(trees.items()))):
            times[name].append(run(tree, name))
            print(f"round {r} {name}: {times[name][-1]:.2f} s", flush=True)
    for name, v in times.items():
        print(f"{name} ({trees[name]}): {[round(x, 2) for x in v]} median {statistics.median(v):.2f} s")
    print(f"this / other: {statistics.median(times['this']) / statistics.median(times['other']):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
