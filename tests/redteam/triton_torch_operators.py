"""Attack: (Triton) torch's compute with no name the allowlist could refuse: attention()
works on whole tensors with Python's operators (broadcast `*`, `+`, `**`, `/`) and launches
no Triton kernel at all, so the source holds no torch function, no method, no `@`.
Defence: the operation audit records every ATen operation a checked call dispatches; in a
Triton submission, whose torch is for allocation and shapes only, any computing operation
is strict (grader/judge/integrity.py audit_flags, every_op_strict), a `*` on the host too.
Expect: status=cheat_suspected; flags=strict:dispatched_compute; message=aten.mul
"""

_TRITON_SRC = r"""
import math

import torch
import triton
import triton.language as tl


def attention(q, k, v):
    B, H, S, D = q.shape
    prod = q[:, :, :, None, :] * k[:, :, None, :, :] * (1.0 / math.sqrt(D))
    scores = prod[..., 0]
    for d in range(1, D):
        scores = scores + prod[..., d]
    weights = math.e ** (scores - scores[:, :, :, :1])
    total = weights[..., 0:1]
    out = weights[..., 0:1] * v[:, :, 0:1, :]
    for j in range(1, S):
        total = total + weights[..., j:j + 1]
        out = out + weights[..., j:j + 1] * v[:, :, j:j + 1, :]
    return out / total
"""
