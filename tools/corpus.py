"""The third-party corpus (tests/third_party/) graded end to end: one row per kernel with its
verdict, the header tier it compiled in, the compile time and, for those that pass, the
slowdown against SDPA at each benchmark size. On a GPU machine the CUDA kernels are graded
on the GPU; anywhere, the C++ ones on the CPU (`--kind`).

    python tools/corpus.py --kind cuda [--json out.json]

A kernel whose verdict differs from the manifest's is marked `UNEXPECTED` and the exit
status is 1. The figures are this run's: nothing here is hard-coded."""
from __future__ import annotations

import argparse
import json
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.core.config import load as load_config  # noqa: E402
from grader.run import grade  # noqa: E402

CORPUS = ROOT / "tests" / "third_party"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=("cuda", "cpp"), default="cuda")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    cfg = load_config()
    cfg = replace(cfg, timeout_compile=max(cfg.timeout_compile, 1800))
    manifest = [e for e in tomllib.loads((CORPUS / "MANIFEST.toml").read_text())["kernel"] if e["kind"] == a.kind]
    backend = "cuda" if a.kind == "cuda" else "cpu"
    expected_key = "gpu_verdict" if a.kind == "cuda" else "cpu_verdict"
    rows, bad = [], 0
    print(f"{'kernel':32} {'verdict':16} {'tier':6} {'compile_s':>9}  slowdown by S / first failure")
    for e in manifest:
        r = grade(CORPUS / e["file"], cfg, backend=backend, bench=not a.no_bench)
        slow = {b.S: b.slowdown for b in r.bench}
        failed = next((c for c in r.checks if not c.passed), None)
        tail = (" ".join(f"S={s}:{v:.2f}x" for s, v in sorted(slow.items())) if slow else
                (f"{failed.name}: {failed.message}" if failed else r.message))
        ok = r.verdict == e[expected_key]
        bad += not ok
        comp = r.compile
        print(f"{e['file']:32} {r.verdict:16} {(comp.tier if comp else '-'):6} "
              f"{(comp.seconds if comp else 0):9.1f}  {tail[:160]}" + ("" if ok else f"  UNEXPECTED (manifest: {e[expected_key]})"))
        rows.append({"file": e["file"], "verdict": r.verdict, "expected": e[expected_key],
                     "tier": comp.tier if comp else "", "compile_seconds": comp.seconds if comp else None,
                     "cached": comp.cached if comp else None, "slowdown_by_S": slow,
                     "first_failure": (failed.name + ": " + failed.message) if failed else "",
                     "message": r.message})
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    print(f"{len(rows) - bad}/{len(rows)} kernels got the manifest's verdict")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
