"""Fused attention, in the style of a hobby flash-attention repository's "v2" kernel: eight
warps per block, one warp per query row, tiles of 32 keys and values staged in shared memory
(K padded by one column), lane j scoring key j of the tile, online softmax across the warp
with shuffles, each lane accumulating D/32 output columns.

Held-out set of 2026-11-27 (issue 32; written without the grader's diagnosis code,
graded on an H200 before it was added here). BUG: none: a correct fused tiled version.
EXPECTED: ok, "correct"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define WARPS 8
#define KT 32
#define MAXC 4            // D / 32, so D <= 128
#define FULL 0xffffffffu

__global__ void attn_tiled(const float* __restrict__ Q, const float* __restrict__ K,
                           const float* __restrict__ V, float* __restrict__ O,
                           int S, int D, float scale) {
    extern __shared__ float smem[];
    const int Dp = D + 1;
    float* Ks = smem;              // KT x (D + 1)
    float* Vs = Ks + KT * Dp;      // KT x D
    float* Qs = Vs + KT * D;       // WARPS x D

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const size_t base = (size_t)blockIdx.y * S * D;
    const int row = blockIdx.x * WARPS + warp;
    const bool active = row < S;

    float* qs = Qs + warp * D;
    for (int d = lane; d < D; d += 32)
        qs[d] = active ? Q[base + (size_t)row * D + d] * scale : 0.f;

    float acc[MAXC];
    #pragma unroll
    for (int c = 0; c < MAXC; ++c) acc[c] = 0.f;
    float m = -INFINITY, l = 0.f;

    for (int k0 = 0; k0 < S; k0 += KT) {
        __syncthreads();   // previous tile fully consumed (and qs written)
        for (int idx = threadIdx.x; idx < KT * D; idx += blockDim.x) {
            const int r = idx / D, c = idx - r * D;
            const bool in = (k0 + r) < S;
            const size_t g = base + (size_t)(k0 + r) * D + c;
            Ks[r * Dp + c] = in ? K[g] : 0.f;
            Vs[r * D + c] = in ? V[g] : 0.f;
        }
        __syncthreads();

        float s = -INFINITY;
        if (k0 + lane < S) {
            const float* kr = Ks + lane * Dp;
            float t = 0.f;
            for (int d = 0; d < D; ++d) t += qs[d] * kr[d];
            s = t;
        }
        float tmax = s;
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) tmax = fmaxf(tmax, __shfl_xor_sync(FULL, tmax, o));
        const float m_new = fmaxf(m, tmax);
        const float p = expf(s - m_new);
        const float corr = expf(m - m_new);
        float psum = p;
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) psum += __shfl_xor_sync(FULL, psum, o);
        l = l * corr + psum;

        #pragma unroll
        for (int c = 0; c < MAXC; ++c) acc[c] *= corr;
        for (int j = 0; j < KT; ++j) {
            const float pj = __shfl_sync(FULL, p, j);
            const float* vr = Vs + j * D;
            #pragma unroll
            for (int c = 0; c < MAXC; ++c) {
                const int d = lane + 32 * c;
                if (d < D) acc[c] += pj * vr[d];
            }
        }
        m = m_new;
    }

    if (active) {
        const float inv = 1.f / l;
        #pragma unroll
        for (int c = 0; c < MAXC; ++c) {
            const int d = lane + 32 * c;
            if (d < D) O[base + (size_t)row * D + d] = acc[c] * inv;
        }
    }
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(q.is_cuda() && q.scalar_type() == at::kFloat, "float32 CUDA tensors expected");
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    TORCH_CHECK(D <= 32 * MAXC, "head dim must be <= 128");
    auto out = torch::empty_like(q);
    const float scale = 1.0f / sqrtf((float)D);
    const size_t smem = (size_t)(KT * (D + 1) + KT * D + WARPS * D) * sizeof(float);
    dim3 grid((S + WARPS - 1) / WARPS, B * H);
    attn_tiled<<<grid, WARPS * 32, smem, at::cuda::getCurrentCUDAStream()>>>(
        q.contiguous().data_ptr<float>(), k.contiguous().data_ptr<float>(),
        v.contiguous().data_ptr<float>(), out.data_ptr<float>(), S, D, scale);
    return out;
}
"""
