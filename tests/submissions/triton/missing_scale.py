"""Triton, the scale bug: the scores are not divided by sqrt(D) (the log2(e) factor of
exp2 is kept): softmax(q kᵀ) v, wrong on every config."""

_TRITON_SRC = r"""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _attention(q, k, v, out, S, D: tl.constexpr, qk_scale, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    i, bh = tl.program_id(0), tl.program_id(1)
    head = bh.to(tl.int64) * S * D
    rows = i * BLOCK_M + tl.arange(0, BLOCK_M)
    d = tl.arange(0, D)
    qt = tl.load(q + head + rows[:, None] * D + d[None, :], mask=rows[:, None] < S, other=0.0) * qk_scale
    m = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for start in range(0, S, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        kt = tl.load(k + head + keys[:, None] * D + d[None, :], mask=keys[:, None] < S, other=0.0)
        vt = tl.load(v + head + keys[:, None] * D + d[None, :], mask=keys[:, None] < S, other=0.0)
        s = tl.dot(qt, tl.trans(kt), input_precision="ieee")
        s = tl.where(keys[None, :] < S, s, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, vt, input_precision="ieee")
        m = m_new
    tl.store(out + head + rows[:, None] * D + d[None, :], acc / l[:, None], mask=rows[:, None] < S)


def attention(q, k, v):
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    _attention[(triton.cdiv(S, 64), B * H)](q, k, v, out, S, D, 1.4426950408889634,
                                            BLOCK_M=64, BLOCK_N=64)
    return out
"""
