"""Build the fixture class: a submissions folder with one known-good or known-bad
submission per student, and the status and flags each must get.

    python tools/fixture_class.py DEST [--gpu]     # writes DEST/ and DEST/expected.json

The submissions come from tests/submissions/ (one file per behaviour, documented at its
top); this script only arranges them the way a class hands work in: folders with
report.md and profiles/, bare .py files, zips, a hostile zip, a timestamps CSV. The
sandbox-escape ones get real targets filled in: another student's file, the output and
submissions folders, and a TCP port the caller listens on (--port).
`tests/course/test_batch.py` grades it and compares; `make batch-demo` grades it for a person.
"""
from __future__ import annotations

import argparse
import json
import shutil
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUBS = REPO / "tests" / "submissions"
NCU = REPO / "tests" / "fixtures" / "ncu"

REPORT_MD = """---
student: Alice Example
---
# Memory-bound or compute-bound?
Memory-bound at S = 128: the scores fit in L2, and the kernel waits on loads.

# Performance gap
About 3x slower than SDPA: no tiling, scalar loads.

# Effect of sequence length
The time grows like S squared, as the FLOP count does.

# Impact of kernel fusion
Fusion removes the S x S scores from DRAM.
"""

# id -> (fixture, expected status, flags that must be present, text the message must contain)
CPU_CLASS = {
    "alice": ("correct/scalar_loop.py", "ok", [], ""),
    "bob": ("wrong/wrong_scaling.py", "wrong_answer", [], "max_err"),
    "carol": ("correct/scalar_loop.py", "ok", [], ""),                 # handed in as a zip
    "dave": ("invalid/compile_error.py", "compile_error", [], ""),
    "erin": ("crash/segfault.py", "runtime_error", [], "SIGSEGV"),
    "frank": ("crash/infinite_loop.py", "timeout", [], "limit"),
    "grace": ("TEMPLATE", "not_implemented", [], "not implemented"),
    "heidi": ("invalid/syntax_error.py", "invalid_submission", [], "syntax"),
    "ivan": ("cheat/aten_matmul.py", "cheat_suspected", ["strict:aten_compute", "strict:dispatched_compute"], ""),
    # judy hides the names from the source scan: the link audit and the operation audit see them
    "judy": ("cheat/hidden_dispatch.py", "cheat_suspected", ["strict:dispatched_compute", "strict:aten_compute"],
             "built library"),
    "kim": ("cheat/reads_clock.py", "ok", ["warning:timing_calls"], ""),
    # a `$` in the name: ninja, which builds it, reads `$` as its escape (it was compile_error)
    "pat$(id)": ("correct/scalar_loop.py", "ok", [], ""),
    "leo": ("cheat/leaks_shape.py", "runtime_error", [], "LEAK"),
    # the escapes: the link audit names what they call (strict), and the sandbox holds (the
    # verdict they would have had, runtime_error, keeps their "sandbox held" message)
    "mallory_read": ("escape/read_other.py", "cheat_suspected", ["strict:file_access"], "opens or inspects files"),
    "mallory_write": ("escape/write_outside.py", "cheat_suspected", ["strict:file_access"], "opens or inspects files"),
    "mallory_net": ("escape/connect.py", "cheat_suspected", ["strict:network"], "network"),
    "nick": ("escape/fork_storm.py", "cheat_suspected", ["strict:process"], "processes"),
    "olga": ("escape/memory_hog.py", "runtime_error", [], "memory"),
    "zed": ("ZIPSLIP", "invalid_submission", [], "unsafe path"),
}
# Without a sandbox the escapes succeed: that is what the sandbox tests compare against.
ESCAPES = ("mallory_read", "mallory_write", "mallory_net")

GPU_CLASS = {
    "gpu_alice": ("gpu/correct_rows.py", "ok", [], ""),
    "gpu_bob": ("gpu/never_writes_tail.py", "wrong_answer", [], "NaN"),
    "gpu_carol": ("gpu/out_of_bounds.py", "runtime_error", [], ""),
    "gpu_dave": ("gpu/hangs.py", "timeout", [], "limit"),
    "gpu_erin": ("REFERENCE_FUSED_CU", "ok", [], ""),
}

TIMESTAMPS = {"alice": "2026-12-11T20:00:00+00:00",        # on time
              "bob": "2026-12-12T09:30:00+00:00",          # 1 started day late
              "carol": "2026-12-30T10:00:00+00:00"}        # past the 5-day limit: 0


def _source(fixture: str) -> str:
    if fixture == "TEMPLATE":
        return (REPO / "grader" / "pristine" / "attention.py").read_text()   # the template as shipped, not as edited
    if fixture == "REFERENCE_FUSED_CU":
        text = (REPO / "reference" / "fused.cu").read_text()
        return f'_CUDA_SRC = r"""\n{text}\n"""\n'
    return (SUBS / fixture).read_text()


def build(dest: Path, out: Path, port: int, gpu: bool = False) -> dict:
    """Write the class into `dest`; `out` is where the batch will write (an escape target)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    entries = dict(CPU_CLASS, **(GPU_CLASS if gpu else {}))
    fill = {"@@TARGET@@": str(dest / "alice" / "attention.py"),
            "@@TARGETS@@": "|".join([str(out / "pwned.txt"), str(dest / "pwned.txt"), str(REPO / "pwned.txt")]),
            "@@PORT@@": str(port)}
    for sid, (fixture, *_rest) in entries.items():
        if fixture == "ZIPSLIP":
            with zipfile.ZipFile(dest / f"{sid}.zip", "w") as z:
                z.writestr("../../escaped.py", _source("correct/scalar_loop.py"))
            continue
        text = _source(fixture)
        for key, value in fill.items():
            text = text.replace(key, value)
        if sid == "alice":
            folder = dest / sid
            (folder / "profiles").mkdir(parents=True)
            (folder / "attention.py").write_text(text)
            (folder / "report.md").write_text(REPORT_MD)
            shutil.copy(NCU / "raw_base.csv", folder / "profiles" / "before_raw.csv")
            shutil.copy(NCU / "raw.csv", folder / "profiles" / "after_raw.csv")
        elif sid == "carol":
            with zipfile.ZipFile(dest / f"{sid}.zip", "w") as z:
                z.writestr("carol/attention.py", text)
        else:
            (dest / f"{sid}.py").write_text(text)
    with open(dest / "timestamps.csv", "w") as f:
        f.write("submission,submitted_at\n")
        for sid, when in TIMESTAMPS.items():
            f.write(f"{sid},{when}\n")
    expected = {sid: {"status": st, "flags": fl, "message": msg} for sid, (_, st, fl, msg) in entries.items()}
    (dest.parent / f"{dest.name}.expected.json").write_text(json.dumps(expected, indent=2))
    return expected


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest")
    ap.add_argument("--out", default="report/batch", help="the batch's output folder (an escape target)")
    ap.add_argument("--port", type=int, default=9, help="TCP port the connect escape tries")
    ap.add_argument("--gpu", action="store_true", help="add the CUDA submissions")
    args = ap.parse_args()
    expected = build(Path(args.dest).resolve(), Path(args.out).resolve(), args.port, args.gpu)
    print(f"{len(expected)} submissions written to {args.dest}; expected results in "
          f"{Path(args.dest).name}.expected.json beside it")


if __name__ == "__main__":
    main()
