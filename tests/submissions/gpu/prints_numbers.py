"""A correct kernel that prints numbers with std::cout on its first call: ok. The GPU image
crashed a TORCH_CHECK that formatted numbers through a stream (SIGSEGV, an H100, 2026-11-27,
fixed in the proxy headers); this is whether a student's own std::cout of a number does too."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <iostream>

__global__ void attention_rows(const float* q, const float* k, const float* v, float* out,
                               int BH, int S, int D, float scale) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= BH * S) return;
    const int h = r / S;
    const float* qi = q + (size_t)r * D;
    float mx = -INFINITY, sum = 0.f;
    for (int j = 0; j < S; ++j) {
        float s = 0.f;
        for (int d = 0; d < D; ++d) s += qi[d] * k[((size_t)h * S + j) * D + d];
        mx = fmaxf(mx, s * scale);
    }
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
    const float scale = 1.0f / sqrtf((float)D);
    static bool said = false;
    if (!said) {                // numbers through std::cout, once: the stream's locale, as students print
        std::cout << "first call: S=" << S << " D=" << D << " scale=" << scale << std::endl;
        said = true;
    }
    auto out = torch::empty_like(q);
    attention_rows<<<(BH * S + 127) / 128, 128, 0, c10::cuda::getCurrentCUDAStream()>>>(
        q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), out.data_ptr<float>(), BH, S, D, scale);
    return out;
}
"""
