"""Naive attention as three CUDA kernels, in the style of a university assignment's
baseline solution: one thread per score for Q K^T, one warp per row for a numerically stable
softmax with warp-shuffle reductions, one thread per output element for P V.

Held-out set of 2026-11-27 (issue 32; written without the grader's diagnosis code,
graded on an H200 before it was added here). BUG: none: a correct three-kernel version.
EXPECTED: ok, "correct"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void scores_kernel(const float* __restrict__ Q, const float* __restrict__ K,
                              float* __restrict__ Sc, int S, int D, float scale) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;   // key
    const int i = blockIdx.y;                              // query
    const size_t bh = blockIdx.z;
    if (j >= S) return;
    const float* q = Q + (bh * S + i) * D;
    const float* k = K + (bh * S + j) * D;
    float acc = 0.f;
    for (int d = 0; d < D; ++d) acc += q[d] * k[d];
    Sc[(bh * S + i) * S + j] = acc * scale;
}

__global__ void softmax_kernel(float* __restrict__ P, long rows, int S) {
    const long warp_id = ((long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp_id >= rows) return;
    float* p = P + warp_id * S;

    float mx = -INFINITY;
    for (int j = lane; j < S; j += 32) mx = fmaxf(mx, p[j]);
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));

    float sum = 0.f;
    for (int j = lane; j < S; j += 32) {
        const float e = expf(p[j] - mx);
        p[j] = e;
        sum += e;
    }
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);

    const float inv = 1.f / sum;
    for (int j = lane; j < S; j += 32) p[j] *= inv;
}

__global__ void pv_kernel(const float* __restrict__ P, const float* __restrict__ V,
                          float* __restrict__ O, long total, int S, int D) {
    const long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int d = idx % D;
    const long row = idx / D;          // (bh * S + i)
    const long bh = row / S;
    const float* p = P + row * S;
    const float* v = V + bh * S * D + d;
    float acc = 0.f;
    for (int j = 0; j < S; ++j) acc += p[j] * v[(long)j * D];
    O[idx] = acc;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(q.is_cuda(), "q must be on the GPU");
    q = q.contiguous(); k = k.contiguous(); v = v.contiguous();
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    const int BH = B * H;
    const float scale = 1.0f / sqrtf((float)D);
    auto P = torch::empty({B, H, S, S}, q.options());
    auto O = torch::empty_like(q);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    dim3 g1((S + 127) / 128, S, BH);
    scores_kernel<<<g1, 128, 0, stream>>>(q.data_ptr<float>(), k.data_ptr<float>(),
                                          P.data_ptr<float>(), S, D, scale);

    const long rows = (long)BH * S;
    const int warps_per_block = 4;
    const long g2 = (rows + warps_per_block - 1) / warps_per_block;
    softmax_kernel<<<(unsigned)g2, 32 * warps_per_block, 0, stream>>>(P.data_ptr<float>(), rows, S);

    const long total = rows * D;
    pv_kernel<<<(unsigned)((total + 255) / 256), 256, 0, stream>>>(
        P.data_ptr<float>(), v.data_ptr<float>(), O.data_ptr<float>(), total, S, D);
    return O;
}
"""
