"""Attention in two CUDA kernels, in the style of a LeetGPU "softmax attention" solution
(thread-per-element kernels, default stream, no shared memory): the exponentiated scores,
then one block per query row with one thread per output column normalising as it
accumulates.

Held-out set of 2026-11-27 (issue 32; written without the grader's diagnosis code,
graded on an H200 before it was added here). BUG: expf(dot * scale) with no row-max subtraction.
EXPECTED: wrong_answer, "without the max shift"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void exp_scores(const float* Q, const float* K, float* E, int S, int D, float scale) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y;
    int bh = blockIdx.z;
    if (j < S) {
        const float* q = Q + ((size_t)bh * S + i) * D;
        const float* k = K + ((size_t)bh * S + j) * D;
        float dot = 0.0f;
        for (int d = 0; d < D; d++) dot += q[d] * k[d];
        E[((size_t)bh * S + i) * S + j] = expf(dot * scale);
    }
}

__global__ void weighted_sum(const float* E, const float* V, float* O, int S, int D) {
    int d = threadIdx.x;
    int i = blockIdx.x;
    int bh = blockIdx.y;
    if (d >= D) return;
    const float* e = E + ((size_t)bh * S + i) * S;
    const float* v = V + (size_t)bh * S * D;
    float num = 0.0f, den = 0.0f;
    for (int j = 0; j < S; j++) {
        float w = e[j];
        num += w * v[(size_t)j * D + d];
        den += w;
    }
    O[((size_t)bh * S + i) * D + d] = num / den;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto E = torch::empty({B, H, S, S}, q.options());
    auto O = torch::empty_like(q);
    float scale = 1.0f / sqrtf((float)D);

    int threads = 256;
    dim3 g1((S + threads - 1) / threads, S, B * H);
    exp_scores<<<g1, threads>>>(q.data_ptr<float>(), k.data_ptr<float>(), E.data_ptr<float>(),
                                S, D, scale);
    dim3 g2(S, B * H);
    weighted_sum<<<g2, D>>>(E.data_ptr<float>(), v.data_ptr<float>(), O.data_ptr<float>(), S, D);
    return O;
}
"""
