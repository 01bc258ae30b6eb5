"""Fused attention with one warp per query row, in the style of a hobby CUDA attention repo
("warp-level online softmax"): a 3D grid over (query blocks, heads, batches), each lane
holding D/32 elements of the query and of the output accumulator, dot products reduced with
__shfl_xor_sync.

Held-out set of 2026-11-27 (issue 32; written without the grader's diagnosis code,
graded on an H200 before it was added here). BUG: K and V pointers leave out the batch offset.
EXPECTED: wrong_answer, "batch/head offset"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int WARPS_PER_BLOCK = 4;
constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ __forceinline__ float warp_sum(float x) {
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(FULL_MASK, x, off);
    return x;
}

template <int D>
__global__ void attn_warp_row(const float* __restrict__ Q, const float* __restrict__ K,
                              const float* __restrict__ V, float* __restrict__ O,
                              int H, int S, float scale) {
    constexpr int PER_LANE = D / 32;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int i = blockIdx.x * WARPS_PER_BLOCK + warp;
    const int h = blockIdx.y;
    const int b = blockIdx.z;
    if (i >= S) return;

    const size_t head_stride = (size_t)S * D;
    const size_t batch_stride = (size_t)H * head_stride;
    const float* q = Q + b * batch_stride + h * head_stride + (size_t)i * D;
    const float* k = K + h * head_stride;
    const float* v = V + h * head_stride;
    float* o = O + b * batch_stride + h * head_stride + (size_t)i * D;

    float qr[PER_LANE], acc[PER_LANE];
    #pragma unroll
    for (int c = 0; c < PER_LANE; ++c) {
        qr[c] = q[lane + 32 * c] * scale;
        acc[c] = 0.f;
    }

    float m = -INFINITY, l = 0.f;
    for (int j = 0; j < S; ++j) {
        const float* kj = k + (size_t)j * D;
        float part = 0.f;
        #pragma unroll
        for (int c = 0; c < PER_LANE; ++c) part += qr[c] * kj[lane + 32 * c];
        const float s = warp_sum(part);

        const float m_new = fmaxf(m, s);
        const float corr = expf(m - m_new);
        const float p = expf(s - m_new);
        l = l * corr + p;
        const float* vj = v + (size_t)j * D;
        #pragma unroll
        for (int c = 0; c < PER_LANE; ++c) acc[c] = acc[c] * corr + p * vj[lane + 32 * c];
        m = m_new;
    }

    const float inv = 1.f / l;
    #pragma unroll
    for (int c = 0; c < PER_LANE; ++c) o[lane + 32 * c] = acc[c] * inv;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(q.is_cuda() && k.is_cuda() && v.is_cuda(), "CUDA tensors expected");
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    const float scale = 1.0f / sqrtf((float)D);
    dim3 grid((S + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK, H, B);
    dim3 block(32 * WARPS_PER_BLOCK);
    auto stream = at::cuda::getCurrentCUDAStream();
    if (D == 64) {
        attn_warp_row<64><<<grid, block, 0, stream>>>(q.data_ptr<float>(), k.data_ptr<float>(),
            v.data_ptr<float>(), out.data_ptr<float>(), H, S, scale);
    } else if (D == 128) {
        attn_warp_row<128><<<grid, block, 0, stream>>>(q.data_ptr<float>(), k.data_ptr<float>(),
            v.data_ptr<float>(), out.data_ptr<float>(), H, S, scale);
    } else {
        TORCH_CHECK(false, "unsupported head dim ", D);
    }
    return out;
}
"""
