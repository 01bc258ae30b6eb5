"""Attention with one thread per query row using the CUDA half-precision intrinsics
(__hfma, hexp, __hadd), in the style of a hobby "faster attention with cuda_fp16" snippet
from a forum post: inputs converted to __half on the fly, two passes over the keys.

Held-out set of 2026-11-27 (issue 32; written without the grader's diagnosis code,
graded on an H200 before it was added here). BUG: everything in __half: products, hexp, row sum and output.
EXPECTED: wrong_answer, "16-bit float computation"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <cuda_fp16.h>

#define MAX_D 128

__global__ void attn_fp16(const float* __restrict__ Q, const float* __restrict__ K,
                          const float* __restrict__ V, float* __restrict__ O,
                          int S, int D, float scale) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const size_t bh = blockIdx.y;
    if (i >= S) return;

    const float* q = Q + (bh * S + i) * D;
    const float* Kh = K + bh * S * D;
    const float* Vh = V + bh * S * D;

    __half qh[MAX_D];
    for (int d = 0; d < D; ++d) qh[d] = __float2half(q[d] * scale);

    // pass 1: row max
    __half m = __float2half(-60000.f);
    for (int j = 0; j < S; ++j) {
        __half s = __float2half(0.f);
        for (int d = 0; d < D; ++d) s = __hfma(qh[d], __float2half(Kh[(size_t)j * D + d]), s);
        if (__hgt(s, m)) m = s;
    }

    // pass 2: exponentials, their sum, and the weighted sum of V
    __half l = __float2half(0.f);
    __half acc[MAX_D];
    for (int d = 0; d < D; ++d) acc[d] = __float2half(0.f);
    for (int j = 0; j < S; ++j) {
        __half s = __float2half(0.f);
        for (int d = 0; d < D; ++d) s = __hfma(qh[d], __float2half(Kh[(size_t)j * D + d]), s);
        const __half p = hexp(__hsub(s, m));
        l = __hadd(l, p);
        for (int d = 0; d < D; ++d) acc[d] = __hfma(p, __float2half(Vh[(size_t)j * D + d]), acc[d]);
    }

    const float inv = 1.f / __half2float(l);
    float* o = O + (bh * S + i) * D;
    for (int d = 0; d < D; ++d) o[d] = __half2float(acc[d]) * inv;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    TORCH_CHECK(D <= MAX_D, "head dim too large");
    auto out = torch::empty_like(q);
    const int threads = 128;
    dim3 grid((S + threads - 1) / threads, B * H);
    attn_fp16<<<grid, threads>>>(q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(),
                                 out.data_ptr<float>(), S, D, 1.0f / sqrtf((float)D));
    return out;
}
"""
