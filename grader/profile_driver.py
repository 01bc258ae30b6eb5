"""The program `make profile` runs under Nsight Compute (not imported by the grader).

`python -m grader.profile_driver SUBMISSION [CONFIG]`: builds the student's kernel and the
references through the grader's build path, calls each once to warm up (not profiled),
then once per benchmark size inside NVTX ranges `profile` / `<kernel>_S<S>`, so that
`ncu --nvtx --nvtx-include profile/` profiles exactly those calls.
"""
from __future__ import annotations

import sys

import torch

from .check import make_inputs
from .compile import compile_source, prepare
from .config import DEFAULT_CONFIG, REPO_ROOT, load
from .parse import parse, parse_file

REFERENCES = {"naive": "reference/naive.cu", "fused": "reference/fused.cu", "fused_opt": "reference/fused_tc.cu"}


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python -m grader.profile_driver SUBMISSION [CONFIG]")
    cfg = load(sys.argv[2] if len(sys.argv) > 2 else DEFAULT_CONFIG)
    prepare()
    student = parse(sys.argv[1])
    if not student.ok:
        sys.exit(student.error)
    sources = {"student": student.sources.get("cuda")}
    sources.update({name: parse_file(REPO_ROOT / rel, name).sources["cuda"] for name, rel in REFERENCES.items()})
    kernels = {}
    for name, src in sources.items():
        path = student.path if name == "student" else REFERENCES[name]
        if src is None:
            sys.exit(f"{path} has no _CUDA_SRC: only CUDA kernels can be profiled with Nsight Compute")
        result, kernel = compile_source(src, cfg)
        if not result.ok:
            sys.exit(f"{path} did not compile:\n{result.log}")
        kernels[name] = kernel
    for shape in cfg.bench_shapes:
        q, k, v = make_inputs(shape, seed=shape.S, device="cuda")
        for fn in kernels.values():
            fn(q, k, v)                     # warm-up, outside the profiled range
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("profile")
        for name, fn in kernels.items():
            torch.cuda.nvtx.range_push(f"{name}_S{shape.S}")
            fn(q, k, v)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
    print("profile driver: done", flush=True)


if __name__ == "__main__":
    main()
