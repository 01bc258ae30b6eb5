"""Third-party style: a hobbyist's first Triton attention, as posted in a blog's "attention
in 30 lines of Triton": one program per 16 query rows holding every key at once (keys
padded to a power of two with zeros, float32 tl.dot), and the softmax over the whole padded
row: the zero keys' scores (0) stay in it (see MANIFEST.toml).
Written here for the grader's tests; licence: the project's."""

_TRITON_SRC = r"""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def attn_rows(Q, K, V, O, seq_len, scale, D: tl.constexpr, N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    head = tl.program_id(1)
    d = tl.arange(0, D)
    n = tl.arange(0, N)
    base = head * seq_len * D
    q = tl.load(Q + base + rows[:, None] * D + d[None, :], mask=rows[:, None] < seq_len, other=0.0)
    k = tl.load(K + base + n[:, None] * D + d[None, :], mask=n[:, None] < seq_len, other=0.0)
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
    s = s - tl.max(s, axis=1)[:, None]
    p = tl.exp(s)
    p = p / tl.sum(p, axis=1)[:, None]
    v = tl.load(V + base + n[:, None] * D + d[None, :], mask=n[:, None] < seq_len, other=0.0)
    o = tl.dot(p, v, input_precision="ieee")
    tl.store(O + base + rows[:, None] * D + d[None, :], o, mask=rows[:, None] < seq_len)


def attention(q, k, v):
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    ROWS = 16
    attn_rows[(triton.cdiv(S, ROWS), B * H)](q, k, v, o, S, 1.0 / math.sqrt(D), D=D, N=triton.next_power_of_2(S),
                                            ROWS=ROWS)
    return o
"""
