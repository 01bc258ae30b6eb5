# Reference NAIVE attention in Triton: the handout's three steps as three launches.
#
#   out = softmax(q kᵀ / √D) v,   q, k, v, out: (batch, heads, seq, head_dim) float32
#
# What this file demonstrates: Triton's programming model on the straightforward
# algorithm. A Triton kernel is written for ONE program (a CUDA block): it works on
# whole tiles (tl.arange, tl.load of a 2-D block of pointers, tl.dot) and Triton's
# compiler decides threads, shared memory and vector widths. Three programs, each
# reading its inputs from global memory and writing its result back, as in naive.cu:
#
#   1. _scores   scores = q kᵀ / √D    reads q, k      writes scores: B·H·S·S floats
#   2. _softmax  p = softmax(scores)   reads scores    writes p (in place of scores)
#   3. _pv       out = p v             reads p, v      writes out:    B·H·S·D floats
#
# Global-memory traffic ~ 4·B·H·S² floats for the S×S matrix (written, read, written,
# read) plus O(S·D) for q, k, v, out: the traffic the fused kernel removes.
#
# Precision: tl.dot(..., input_precision="ieee") multiplies in plain float32 (CUDA-core
# FMAs). Triton's default on an H100 is "tf32": one TF32 product on the tensor cores, each
# float32 operand truncated to TF32 (its bits go to the tensor cores as they are, which drop
# the low 13), not rounded. That misses the tolerance on every config (measured on an H100:
# reference/NOTES.md; the handout's "tf32 (truncated)" row). Triton's interpreter multiplies
# in float32 whatever input_precision says: only a GPU shows it.
#
# Partial tiles: every load and store is masked, so any S works; D must be a power of
# two (tl.arange needs one) and at most 128: the course's D = 64 and 128.
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _scores(q, k, scores, S, D: tl.constexpr, scale, BLOCK: tl.constexpr):
    # program (i, j, bh): the BLOCK×BLOCK tile of scores at rows i·BLOCK, columns j·BLOCK
    i, j, bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    rows = i * BLOCK + tl.arange(0, BLOCK)
    cols = j * BLOCK + tl.arange(0, BLOCK)
    d = tl.arange(0, D)
    head = bh.to(tl.int64) * S * D
    qt = tl.load(q + head + rows[:, None] * D + d[None, :], mask=rows[:, None] < S, other=0.0)
    kt = tl.load(k + head + cols[:, None] * D + d[None, :], mask=cols[:, None] < S, other=0.0)
    s = tl.dot(qt, tl.trans(kt), input_precision="ieee") * scale
    out = scores + bh.to(tl.int64) * S * S + rows[:, None] * S + cols[None, :]
    tl.store(out, s, mask=(rows[:, None] < S) & (cols[None, :] < S))


@triton.jit
def _softmax(scores, n_rows, S, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    # program (i): ROWS whole rows of scores at once (BLOCK >= S columns, the rest masked):
    # the row max, exp of the shifted scores, their sum, and the division, as in the
    # handout's step 2
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    live = rows[:, None] < n_rows
    # rows past the end repeat the last row (never stored): no -inf - -inf = NaN anywhere
    ptrs = scores + tl.minimum(rows, n_rows - 1).to(tl.int64)[:, None] * S + cols[None, :]
    x = tl.load(ptrs, mask=cols[None, :] < S, other=-float("inf"))
    p = tl.exp(x - tl.max(x, axis=1)[:, None])          # minus the max: exp never overflows
    tl.store(ptrs, p / tl.sum(p, axis=1)[:, None], mask=live & (cols[None, :] < S))


@triton.jit
def _pv(p, v, out, S, D: tl.constexpr, BLOCK: tl.constexpr):
    # program (i, bh): BLOCK rows of out = Σ over key tiles of p[rows, keys] · v[keys, :]
    i, bh = tl.program_id(0), tl.program_id(1)
    rows = i * BLOCK + tl.arange(0, BLOCK)
    d = tl.arange(0, D)
    p_head = p + bh.to(tl.int64) * S * S
    v_head = v + bh.to(tl.int64) * S * D
    acc = tl.zeros((BLOCK, D), dtype=tl.float32)
    for c in range(0, S, BLOCK):
        keys = c + tl.arange(0, BLOCK)
        pt = tl.load(p_head + rows[:, None] * S + keys[None, :],
                     mask=(rows[:, None] < S) & (keys[None, :] < S), other=0.0)
        vt = tl.load(v_head + keys[:, None] * D + d[None, :], mask=keys[:, None] < S, other=0.0)
        acc += tl.dot(pt, vt, input_precision="ieee")
    tl.store(out + bh.to(tl.int64) * S * D + rows[:, None] * D + d[None, :], acc, mask=rows[:, None] < S)


def attention(q, k, v):
    B, H, S, D = q.shape
    BLOCK = 64
    scores = torch.empty((B * H, S, S), device=q.device, dtype=torch.float32)
    out = torch.empty_like(q)
    tiles = triton.cdiv(S, BLOCK)
    _scores[(tiles, tiles, B * H)](q, k, scores, S, D, 1.0 / math.sqrt(D), BLOCK=BLOCK)
    row = triton.next_power_of_2(S)          # a whole row in one tile: S up to a few thousand
    rows = max(1, 4096 // row)               # and as many rows as make about 4096 elements
    _softmax[(triton.cdiv(B * H * S, rows),)](scores, B * H * S, S, ROWS=rows, BLOCK=row)
    _pv[(tiles, B * H)](scores, v, out, S, D, BLOCK=BLOCK)
    return out
