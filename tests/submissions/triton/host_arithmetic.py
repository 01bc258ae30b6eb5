"""Triton, torch's compute without a name the allowlist refuses: attention() computes with
`*`, `+`, `/` and pow on whole tensors, one head dimension and one key at a time (ATen's
mul, add, pow and div kernels), and launches no Triton kernel. Found by a red-team pass
over the first allowlist. The syntax tree cannot refuse arithmetic; the operation audit
sees it in the checked calls, and in a Triton submission any torch compute is strict.
Expect: cheat_suspected (without the flags: right on configs 1-3, outside the tolerance on config 4)."""

_TRITON_SRC = r"""
import math

import torch
import triton
import triton.language as tl


def attention(q, k, v):
    N, D = q.shape[2], q.shape[3]
    s = q[:, :, :, None, 0] * k[:, :, None, :, 0]
    for i in range(1, D):
        s = s + q[:, :, :, None, i] * k[:, :, None, :, i]
    p = pow(math.e, s * (1.0 / math.sqrt(D)))
    den = p[:, :, :, 0:1]
    o = p[:, :, :, 0:1] * v[:, :, 0:1, :]
    for j in range(1, N):
        den = den + p[:, :, :, j:j + 1]
        o = o + p[:, :, :, j:j + 1] * v[:, :, j:j + 1, :]
    return o / den
"""
