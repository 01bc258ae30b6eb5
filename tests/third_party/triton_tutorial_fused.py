"""Third-party style: the fused-attention tutorial of the Triton repository, forward pass
only, as students paste it: an inner-loop helper `_attn_fwd_inner` over key blocks with the
online softmax in base 2 (`qk_scale = sm_scale * 1.44269504`, `tl.math.exp2`), the
`l_i = 1` start, strides passed for every tensor, an `M` buffer of row log-sum-exps, and
`tl.dot` at Triton's default precision (see MANIFEST.toml). Adapted to float32 and to this
signature; the causal stages, the backward pass and the block pointers (which Triton 3.9's
interpreter no longer has) are dropped: plain masked pointers instead.
Written here for the grader's tests; licence: the project's."""

_TRITON_SRC = r"""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_kn, stride_vk, qk_scale, N_CTX,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, offs_n: tl.constexpr):
    lo, hi = 0, N_CTX
    # loop over k, v and update accumulator
    for start_n in range(lo, hi, BLOCK_N):
        k = tl.load(K_ptrs + start_n * stride_kn, mask=(start_n + offs_n)[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, k)
        qk = tl.where((start_n + offs_n)[None, :] < N_CTX, qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        # -- update m_i and l_i
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        # -- update output accumulator --
        acc = acc * alpha[:, None]
        v = tl.load(V_ptrs + start_n * stride_vk, mask=(start_n + offs_n)[:, None] < N_CTX, other=0.0)
        acc += tl.dot(p, v)
        # update m_i and l_i
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out,
              stride_qz, stride_qh, stride_qm, stride_qk,
              stride_kz, stride_kh, stride_kn, stride_kk,
              stride_vz, stride_vh, stride_vk, stride_vn,
              stride_oz, stride_oh, stride_om, stride_on,
              Z, H, N_CTX,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    qvk_offset = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    # initialize offsets
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    Q_ptrs = Q + qvk_offset + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk
    K_ptrs = K + qvk_offset + offs_n[None, :] * stride_kn + offs_d[:, None] * stride_kk
    V_ptrs = V + qvk_offset + offs_n[:, None] * stride_vk + offs_d[None, :] * stride_vn
    # initialize pointer to m and l
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # load scales
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1/log(2)
    # load q: it will stay in SRAM throughout
    q = tl.load(Q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_ptrs, V_ptrs, stride_kn, stride_vk, qk_scale, N_CTX,
                                    BLOCK_M, BLOCK_N, offs_n)
    # epilogue
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    m_ptrs = M + off_hz * N_CTX + offs_m
    tl.store(m_ptrs, m_i, mask=offs_m < N_CTX)
    O_ptrs = Out + qvk_offset + offs_m[:, None] * stride_om + offs_d[None, :] * stride_on
    tl.store(O_ptrs, acc, mask=offs_m[:, None] < N_CTX)


def attention(q, k, v):
    # shape constraints
    HEAD_DIM_Q, HEAD_DIM_K = q.shape[-1], k.shape[-1]
    HEAD_DIM_V = v.shape[-1]
    assert HEAD_DIM_Q == HEAD_DIM_K and HEAD_DIM_K == HEAD_DIM_V
    assert HEAD_DIM_K in {16, 32, 64, 128, 256}
    o = torch.empty_like(q)
    sm_scale = 1.0 / math.sqrt(HEAD_DIM_K)
    BLOCK_M, BLOCK_N = 64, 32
    grid = (triton.cdiv(q.shape[2], BLOCK_M), q.shape[0] * q.shape[1], 1)
    M = torch.empty((q.shape[0], q.shape[1], q.shape[2]), device=q.device, dtype=torch.float32)
    _attn_fwd[grid](
        q, k, v, sm_scale, M, o,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        q.shape[0], q.shape[1], N_CTX=q.shape[2],
        HEAD_DIM=HEAD_DIM_K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return o
"""
