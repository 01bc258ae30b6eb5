"""Your attention kernel: softmax(Q K^T / sqrt(D)) V.

Fill in `_CPP_SRC` (a C++ kernel for the CPU) and/or `_CUDA_SRC` (a CUDA kernel).
Each must define

    torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v)

for float32, contiguous q, k, v of shape (batch, heads, seq, head_dim), returning a
NEW float32 tensor of that shape equal to softmax(q k^T / sqrt(head_dim)) v.

The grader reads the two strings below without importing or running this file:
keep them plain string literals (r-strings and "a" "b" concatenation are fine).
Grade with `make grade` (see assignment/README.md).
"""

_CPP_SRC = r"""
#include <torch/extension.h>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    // Step 1: scores = q k^T / sqrt(D)            shape (B, H, S, S)
    // Step 2: p = softmax(scores) along the last dim (subtract the row max first)
    // Step 3: out = p v                            shape (B, H, S, D)
    TORCH_CHECK(false, "attention: not implemented yet (write your kernel in _CPP_SRC)");
    return torch::empty_like(q);
}
"""

_CUDA_SRC = r"""
#include <torch/extension.h>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    // Launch your kernels here; q, k, v are CUDA tensors.
    TORCH_CHECK(false, "attention: not implemented yet (write your kernel in _CUDA_SRC)");
    return torch::empty_like(q);
}
"""
