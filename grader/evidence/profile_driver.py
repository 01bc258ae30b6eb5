"""The program `make profile` runs under Nsight Compute (not imported by the grader).

`python -m grader.evidence.profile_driver SUBMISSION [CONFIG] [--warm]`: builds the student's kernel
and the references through the grader's build path, calls each once to warm up (not
profiled), then once per benchmark size inside NVTX ranges `profile` / `src_<digest>` /
`<kernel>_S<S>` (the digest: 12 hex digits of the SHA-256 of the kernel's source, so the
judge can tell whose kernels an export is of), so that `ncu --nvtx --nvtx-include profile/`
profiles exactly those calls. With `--warm` the
outer range is `profile_warm` instead: the warm-pipeline export (`--cache-control none`,
grader/evidence/profile.py), which the parser tells apart by that name (grader/analysis/ncu.py).

`python -m grader.evidence.profile_driver SUBMISSION --triton [CONFIG]`: the same with `_TRITON_SRC`
and the Triton references (reference/*.triton.py), imported as the grader's child imports
them; ncu names a Triton kernel after its @triton.jit function.

`python -m grader.evidence.profile_driver SUBMISSION --cpu [CONFIG]`: the same with `_CPP_SRC` and
the C++ references, each called 5 times per size, for a CPU profiler
(Intel Advisor: `advisor --collect=roofline --project-dir=./adv -- python -m
grader.evidence.profile_driver attention.py --cpu`).
"""
from __future__ import annotations

import sys

import torch

from ..judge.check import make_inputs
from ..build.compile import compile_source, prepare
from ..core.config import DEFAULT_CONFIG, REPO_ROOT, load
from ..analysis.ncu import CACHE_RANGES, SOURCE_RANGE
from ..build.parse import VARIABLE, parse, parse_file

REFERENCES = {"naive": "reference/naive.cu", "fused": "reference/fused.cu", "fused_opt": "reference/fused_tc.cu"}
OUTER_RANGE = {cache: name for name, cache in CACHE_RANGES.items()}   # "cold" -> "profile", "warm" -> "profile_warm"
CPU_REFERENCES = {"naive": "reference/naive.cpp", "fused": "reference/fused.cpp",
                  "fused_opt": "reference/fused_opt.cpp"}
TRITON_REFERENCES = {"naive": "reference/naive.triton.py", "fused": "reference/fused.triton.py"}
FLAGS = ("--cpu", "--warm", "--triton")


def main() -> None:
    args = [a for a in sys.argv[1:] if a not in FLAGS]
    cpu, warm, triton = ("--cpu" in sys.argv[1:], "--warm" in sys.argv[1:], "--triton" in sys.argv[1:])
    if not args:
        sys.exit("usage: python -m grader.evidence.profile_driver SUBMISSION [--cpu | --triton] [--warm] [CONFIG]")
    cfg = load(args[1] if len(args) > 1 else DEFAULT_CONFIG)
    prepare()
    student = parse(args[0])
    if not student.ok:
        sys.exit(student.error)
    kind, refs = ("cpp", CPU_REFERENCES) if cpu else ("triton", TRITON_REFERENCES) if triton else ("cuda", REFERENCES)
    sources = {"student": student.sources.get(kind)}
    sources.update({name: parse_file(REPO_ROOT / rel, name).sources[kind] for name, rel in refs.items()})
    kernels = {}
    for name, src in sources.items():
        path = student.path if name == "student" else refs[name]
        if src is None:
            sys.exit(f"{path} has no {VARIABLE[kind]} to profile")
        if kind == "triton":
            kernels[name] = _load_triton(src)
            continue
        result, kernel = compile_source(src, cfg)
        if not result.ok:
            sys.exit(f"{path} did not compile:\n{result.log}")
        kernels[name] = kernel
    if cpu:
        for shape in cfg.bench_shapes:
            q, k, v = make_inputs(shape, seed=shape.S)
            for fn in kernels.values():
                for _ in range(5):
                    fn(q, k, v)
        print("profile driver: done", flush=True)
        return
    for shape in cfg.bench_shapes:
        q, k, v = make_inputs(shape, seed=shape.S, device="cuda")
        for fn in kernels.values():
            fn(q, k, v)                     # warm-up, outside the profiled range
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(OUTER_RANGE["warm" if warm else "cold"])
        for name, fn in kernels.items():
            # whose kernel this is: the source's digest (grader/evidence/exports.py holds it to the grade's)
            torch.cuda.nvtx.range_push(f"{SOURCE_RANGE}{sources[name].digest}")
            torch.cuda.nvtx.range_push(f"{name}_S{shape.S}")
            fn(q, k, v)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
            torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
    print("profile driver: done", flush=True)


def _load_triton(src):
    """A Triton source's attention, from a file whose lines are the submission's (tracebacks
    and ncu's source view point at the student's lines)."""
    import tempfile
    from pathlib import Path

    from ..judge.worker import load_triton
    folder = Path(tempfile.mkdtemp(prefix="profile-triton-"))
    path = folder / src.file.replace(".triton.py", ".py")
    path.write_text(src.file_text())
    return load_triton(str(path))


if __name__ == "__main__":
    main()
