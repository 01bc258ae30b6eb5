"""Correct at the check sizes (S = 128, 333, 256) and writes far outside its output at every
other S, the benchmark's sizes: an illegal memory access found during benchmarking. The message must
name the kernel's fault in the student's terms, never "the grader's worker failed"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

// One thread per query row, plain loops: slow but simple. The defect is marked DEFECT.
__global__ void attention_rows(const float* q, const float* k, const float* v, float* out,
                               int BH, int S, int D, float scale, int rows_done) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= BH * S) return;
    const int h = r / S, i = r % S;
    if (i >= rows_done) return;
    if (r == 0 && S != 128 && S != 333 && S != 256) out[(size_t)1 << 36] = 1.f;  // DEFECT: off the check sizes, 256 GiB past the output
    const float* qi = q + (size_t)r * D;
    float mx = -INFINITY;
    for (int j = 0; j < S; ++j) {
        float s = 0.f;
        for (int d = 0; d < D; ++d) s += qi[d] * k[((size_t)h * S + j) * D + d];
        mx = fmaxf(mx, s * scale);
    }
    float sum = 0.f;
    float* o = out + (size_t)r * D;
    for (int d = 0; d < D; ++d) o[d] = 0.f;
    for (int j = 0; j < S; ++j) {
        float s = 0.f;
        for (int d = 0; d < D; ++d) s += qi[d] * k[((size_t)h * S + j) * D + d];
        const float p = expf(s * scale - mx);
        sum += p;
        for (int d = 0; d < D; ++d) o[d] += p * v[((size_t)h * S + j) * D + d];
    }
    for (int d = 0; d < D; ++d) o[d] /= sum;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    int rows_done = S;

    const int threads = 128, blocks = (BH * S + threads - 1) / threads;
    attention_rows<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), out.data_ptr<float>(),
        BH, S, D, 1.0f / sqrtf((float)D), rows_done);
    return out;
}
"""
