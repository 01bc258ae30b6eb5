# Reference FUSED attention in Triton: one kernel, flash-style (Dao et al. 2022).
#
#   out = softmax(q kᵀ / √D) v,   q, k, v, out: (batch, heads, seq, head_dim) float32
#
# What this file demonstrates: the S×S matrix never touches global memory, as in
# fused.cu, in about a third of the lines. One program owns BLOCK_M query rows of one
# (batch, head) and walks the keys in tiles of BLOCK_N:
#
#   1. load its q rows once, pre-scaled by log2(e)/√D (the scores are then in base 2,
#      so the softmax uses exp2: one PTX instruction, ex2.approx.ftz.f32, and no per-score
#      multiply)
#   2. for each tile of BLOCK_N keys:
#        a. s = q kᵀ for the tile (tl.dot: tensor cores, see "Precision")
#        b. online softmax: a new running max m per row; the output accumulated so far
#           and the running denominator l are rescaled by 2^(m_old - m_new)
#        c. acc += p v for the tile
#   3. divide by l and write the rows: the kernel's only global write
#
# Global-memory traffic: q and out once; k and v once per program, S/BLOCK_M times
# per (batch, head), as in fused.cu.
#
# Precision: input_precision="tf32x3" runs tl.dot on the tensor cores with each float32
# operand split into two TF32 parts (rounded to nearest, cvt.rna) and three products:
# float32-like accuracy at far more than the CUDA cores' FP32 rate. Measured on an H100
# (reference/NOTES.md): max_err 3.5e-7 to 1.0e-6 on configs 1-3, 2.5e-5 to 4.2e-5 on
# config 4, whose large scores magnify every rounding. Plain "tf32", Triton's default on
# an H100, is one product with each operand truncated to TF32, not rounded: faster, but it
# misses the tolerance on every config. "ieee" is plain float32 FMAs. Triton's interpreter
# multiplies in float32 whatever input_precision says: only a GPU shows the difference.
#
# Tuning: block sizes, pipeline stages and warps are Triton's knobs (the CUDA kernel
# fixes them by hand). @triton.autotune times each config the first time it meets a new
# (S, D) and keeps the fastest: that first call is slow; the grader's checks and warm-up
# calls pay it, never a timed call.
#
# Partial tiles: rows past S are masked on load and store, keys past S get score -inf
# (weight 0), so any S works. D must be a power of two (tl.arange): the course's 64, 128.
import math

import torch
import triton
import triton.language as tl


def _keep_one_off_the_gpu(configs, named_args, **kwargs):
    # Triton's interpreter (TRITON_INTERPRET=1, CPU tensors: no GPU) cannot time configs
    return configs if named_args["q"].is_cuda else configs[:1]


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_stages=3, num_warps=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 32}, num_stages=4, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_stages=4, num_warps=4),
    ],
    key=["S", "D"],
    prune_configs_by={"early_config_prune": _keep_one_off_the_gpu},
)
@triton.jit
def _attention(q, k, v, out, S, D: tl.constexpr, qk_scale,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    i, bh = tl.program_id(0), tl.program_id(1)
    head = bh.to(tl.int64) * S * D
    rows = i * BLOCK_M + tl.arange(0, BLOCK_M)
    d = tl.arange(0, D)
    # 1. this program's q rows, scaled into base 2
    qt = tl.load(q + head + rows[:, None] * D + d[None, :], mask=rows[:, None] < S, other=0.0)
    qt = qt * qk_scale
    m = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)     # running row max
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)                    # running denominator
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)                # running p·v
    # 2. the keys, one tile at a time
    for start in range(0, S, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        kt = tl.load(k + head + keys[:, None] * D + d[None, :], mask=keys[:, None] < S, other=0.0)
        vt = tl.load(v + head + keys[:, None] * D + d[None, :], mask=keys[:, None] < S, other=0.0)
        s = tl.dot(qt, tl.trans(kt), input_precision="tf32x3")                       # a
        s = tl.where(keys[None, :] < S, s, -float("inf"))     # keys past S weigh nothing
        m_new = tl.maximum(m, tl.max(s, axis=1))                                     # b
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m - m_new)        # 0 on the first tile (m = -inf), 1 if the max held
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, vt, input_precision="tf32x3")         # c
        m = m_new
    # 3. normalise and write
    tl.store(out + head + rows[:, None] * D + d[None, :], acc / l[:, None], mask=rows[:, None] < S)


def attention(q, k, v):
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    grid = lambda meta: (triton.cdiv(S, meta["BLOCK_M"]), B * H)
    _attention[grid](q, k, v, out, S, D, 1.4426950408889634 / math.sqrt(D))   # log2(e)/√D
    return out
