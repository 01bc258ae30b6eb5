"""Attention in four small CUDA kernels, in the style of a hobby "attention from scratch in
CUDA" blog post: scores, a row max, exponentials with an atomicAdd row sum, then P V divided
by the row sum.

Held-out set of 2026-11-27 (issue 32; written without the grader's diagnosis code,
graded on an H200 before it was added here). BUG: the row-sum buffer is torch::empty and atomicAdd-ed into without being zeroed.
EXPECTED: wrong_answer, "reads memory it never wrote"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void scores_kernel(const float* q, const float* k, float* att,
                              int S, int D, float scale) {
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const size_t bh = blockIdx.z;
    if (i >= S || j >= S) return;
    const float* qi = q + (bh * S + i) * D;
    const float* kj = k + (bh * S + j) * D;
    float dot = 0.f;
    for (int d = 0; d < D; d++) dot += qi[d] * kj[d];
    att[(bh * S + i) * S + j] = dot * scale;
}

__global__ void rowmax_kernel(const float* att, float* rowmax, int rows, int S) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* a = att + (size_t)r * S;
    float m = a[0];
    for (int j = 1; j < S; j++) m = fmaxf(m, a[j]);
    rowmax[r] = m;
}

__global__ void exp_kernel(float* att, const float* rowmax, float* rowsum, int S) {
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const size_t bh = blockIdx.z;
    if (i >= S || j >= S) return;
    const size_t row = bh * S + i;
    const float e = expf(att[row * S + j] - rowmax[row]);
    att[row * S + j] = e;
    atomicAdd(&rowsum[row], e);
}

__global__ void pv_kernel(const float* att, const float* rowsum, const float* v, float* out,
                          int S, int D) {
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int d = blockIdx.x * blockDim.x + threadIdx.x;
    const size_t bh = blockIdx.z;
    if (i >= S || d >= D) return;
    const size_t row = bh * S + i;
    const float* a = att + row * S;
    const float* vh = v + bh * S * D;
    float acc = 0.f;
    for (int j = 0; j < S; j++) acc += a[j] * vh[(size_t)j * D + d];
    out[row * D + d] = acc / rowsum[row];
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    const int BH = B * H;
    const float scale = 1.0f / sqrtf((float)D);
    auto opts = q.options();

    auto att = torch::empty({B, H, S, S}, opts);
    auto rowmax = torch::empty({B, H, S}, opts);
    auto rowsum = torch::empty({B, H, S}, opts);
    auto out = torch::empty_like(q);
    auto stream = c10::cuda::getCurrentCUDAStream();

    dim3 block(16, 16);
    dim3 grid_ss((S + 15) / 16, (S + 15) / 16, BH);
    scores_kernel<<<grid_ss, block, 0, stream>>>(q.data_ptr<float>(), k.data_ptr<float>(),
                                                 att.data_ptr<float>(), S, D, scale);
    rowmax_kernel<<<(BH * S + 255) / 256, 256, 0, stream>>>(att.data_ptr<float>(),
                                                            rowmax.data_ptr<float>(), BH * S, S);
    exp_kernel<<<grid_ss, block, 0, stream>>>(att.data_ptr<float>(), rowmax.data_ptr<float>(),
                                              rowsum.data_ptr<float>(), S);
    dim3 grid_pv((D + 15) / 16, (S + 15) / 16, BH);
    pv_kernel<<<grid_pv, block, 0, stream>>>(att.data_ptr<float>(), rowsum.data_ptr<float>(),
                                             v.data_ptr<float>(), out.data_ptr<float>(), S, D);
    return out;
}
"""
