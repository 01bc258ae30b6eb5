"""Fused attention with one thread block per query row, in the style of a PyTorch C++/CUDA
extension tutorial solution: the query row and the row of scores kept in dynamic shared
memory, warp-shuffle block reductions for the max and the sum, then every thread producing
some of the output columns.

Held-out set of 2026-11-27 (issue 32; written without the grader's diagnosis code,
graded on an H200 before it was added here). BUG: softmax on unscaled scores, 1/sqrt(D) applied to the output.
EXPECTED: wrong_answer, "applied after the softmax"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define NT 128
#define NWARPS (NT / 32)

__inline__ __device__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    return v;
}
__inline__ __device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

__inline__ __device__ float block_max(float v, float* red) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    v = warp_max(v);
    if (lane == 0) red[w] = v;
    __syncthreads();
    v = (lane < NWARPS) ? red[lane] : -INFINITY;
    v = warp_max(v);
    __syncthreads();
    return v;
}
__inline__ __device__ float block_sum(float v, float* red) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) red[w] = v;
    __syncthreads();
    v = (lane < NWARPS) ? red[lane] : 0.f;
    v = warp_sum(v);
    __syncthreads();
    return v;
}

__global__ void attn_row_block(const float* __restrict__ Q, const float* __restrict__ K,
                               const float* __restrict__ V, float* __restrict__ O,
                               int S, int D, float scale) {
    extern __shared__ float sh[];
    float* qs = sh;        // D
    float* w = sh + D;     // S
    __shared__ float red[NWARPS];

    const size_t row = blockIdx.x;          // flat over B*H*S
    const size_t bh = row / S;
    const float* Kh = K + bh * S * D;
    const float* Vh = V + bh * S * D;

    for (int d = threadIdx.x; d < D; d += NT) qs[d] = Q[row * D + d];
    __syncthreads();

    float mx = -INFINITY;
    for (int j = threadIdx.x; j < S; j += NT) {
        const float* kj = Kh + (size_t)j * D;
        float s = 0.f;
        for (int d = 0; d < D; ++d) s += qs[d] * kj[d];
        w[j] = s;
        mx = fmaxf(mx, s);
    }
    mx = block_max(mx, red);

    float sum = 0.f;
    for (int j = threadIdx.x; j < S; j += NT) {
        const float e = expf(w[j] - mx);
        w[j] = e;
        sum += e;
    }
    sum = block_sum(sum, red);

    const float norm = scale / sum;
    for (int d = threadIdx.x; d < D; d += NT) {
        float acc = 0.f;
        for (int j = 0; j < S; ++j) acc += w[j] * Vh[(size_t)j * D + d];
        O[row * D + d] = acc * norm;
    }
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(q.is_contiguous() && k.is_contiguous() && v.is_contiguous());
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    const float scale = 1.0f / std::sqrt((float)D);
    const size_t smem = (size_t)(D + S) * sizeof(float);
    const int rows = B * H * S;
    attn_row_block<<<rows, NT, smem, at::cuda::getCurrentCUDAStream()>>>(
        q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), out.data_ptr<float>(),
        S, D, scale);
    return out;
}
"""
