"""A CUDA kernel with an undeclared name on line 10: compile_error naming line 10,
and `make check-compile` finds it without a GPU."""

_CUDA_SRC = r"""
#include <torch/extension.h>

__global__ void fill(float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = undeclared_value;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto out = torch::empty_like(q);
    fill<<<1, 32>>>(out.data_ptr<float>(), 32);
    return out;
}
"""
