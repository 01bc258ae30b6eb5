"""Refuses S >= 200 with a TORCH_CHECK whose message formats numbers: runtime_error with the
kernel's own message, numbers included. On the GPU image (an H100, 2026-11-27) this became
"the process crashed with SIGSEGV" while the proxy headers streamed the numbers through the
stream's locale; they are now formatted with snprintf (grader/build/prelude_cuda/grader_proxy/c10.h)."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

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
    // DEFECT: a limit the assignment does not have
    TORCH_CHECK(S < 200, "S=", S, " is over this kernel's limit of 200 (shape ", q.sizes(), ", scale ", scale, ")");
    auto out = torch::empty_like(q);
    attention_rows<<<(BH * S + 127) / 128, 128, 0, c10::cuda::getCurrentCUDAStream()>>>(
        q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), out.data_ptr<float>(), BH, S, D, scale);
    return out;
}
"""
