"""Fused attention, in the style of a LeetGPU "softmax attention" solution extended to
(B, H, S, D): one thread per query row, K and V streamed through shared memory in tiles of
32 keys, online softmax with a running max and sum kept in registers.

Held-out set of 2026-11-27 (issue 32; written without the grader's diagnosis code,
graded on an H200 before it was added here). BUG: the key loop runs S / 32 tiles rounded down: keys 320-332 never used at S = 333.
EXPECTED: wrong_answer, "only the first 320 of S = 333 keys"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int BR = 32;   // query rows per block (one per thread)
constexpr int BC = 32;   // keys per shared-memory tile

template <int D>
__global__ void flash_fwd_kernel(const float* __restrict__ Q, const float* __restrict__ K,
                                 const float* __restrict__ V, float* __restrict__ O,
                                 int S, float scale) {
    extern __shared__ float smem[];
    float* Ks = smem;            // BC x D
    float* Vs = smem + BC * D;   // BC x D

    const size_t base = (size_t)blockIdx.y * S * D;
    const int row = blockIdx.x * BR + threadIdx.x;

    float q[D], acc[D];
    #pragma unroll
    for (int d = 0; d < D; ++d) {
        q[d] = (row < S) ? Q[base + (size_t)row * D + d] * scale : 0.f;
        acc[d] = 0.f;
    }
    float m = -INFINITY, l = 0.f;

    const int n_tiles = S / BC;
    for (int t = 0; t < n_tiles; ++t) {
        const size_t tile_off = base + (size_t)t * BC * D;
        for (int idx = threadIdx.x; idx < BC * D; idx += BR) {
            Ks[idx] = K[tile_off + idx];
            Vs[idx] = V[tile_off + idx];
        }
        __syncthreads();

        float sc[BC];
        float m_new = m;
        #pragma unroll 4
        for (int j = 0; j < BC; ++j) {
            float s = 0.f;
            #pragma unroll
            for (int d = 0; d < D; ++d) s += q[d] * Ks[j * D + d];
            sc[j] = s;
            m_new = fmaxf(m_new, s);
        }
        const float corr = expf(m - m_new);
        l *= corr;
        #pragma unroll
        for (int d = 0; d < D; ++d) acc[d] *= corr;
        for (int j = 0; j < BC; ++j) {
            const float p = expf(sc[j] - m_new);
            l += p;
            #pragma unroll
            for (int d = 0; d < D; ++d) acc[d] += p * Vs[j * D + d];
        }
        m = m_new;
        __syncthreads();
    }

    if (row < S) {
        const float inv = 1.f / l;
        #pragma unroll
        for (int d = 0; d < D; ++d) O[base + (size_t)row * D + d] = acc[d] * inv;
    }
}

template <int D>
static void launch(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                   torch::Tensor& o, int BH, int S) {
    dim3 grid((S + BR - 1) / BR, BH);
    const size_t smem = 2 * BC * D * sizeof(float);
    flash_fwd_kernel<D><<<grid, BR, smem, at::cuda::getCurrentCUDAStream()>>>(
        q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), o.data_ptr<float>(),
        S, 1.0f / sqrtf((float)D));
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto o = torch::empty_like(q);
    if (D == 64) launch<64>(q, k, v, o, B * H, S);
    else if (D == 128) launch<128>(q, k, v, o, B * H, S);
    else TORCH_CHECK(false, "head dim must be 64 or 128");
    return o;
}
"""
