"""Attack: returns zeros and writes past the end of its output into whatever the caching
allocator put next, hoping to overwrite the grader's expected tensor so that zeros pass.
Defence: the expected tensor lives in the judge's process, not on this GPU; the output is
judged there.
Expect: status=wrong_answer
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void scribble(float* p, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] = 0.f;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto out = torch::empty({q.numel() + (1 << 18)}, q.options());
    const size_t n = out.numel();
    scribble<<<(n + 255) / 256, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(out.data_ptr<float>(), n);
    return out.narrow(0, 0, q.numel()).view(q.sizes());
}
"""
