"""Your attention kernel: softmax(Q K^T / sqrt(D)) V.

Fill in `_CPP_SRC` (a C++ kernel for the CPU), `_CUDA_SRC` (a CUDA kernel) and/or
`_TRITON_SRC` (a Triton kernel). The C++ and CUDA sources must define

    torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v)

and the Triton source the Python function `attention(q, k, v)`, which launches your
@triton.jit kernels. Each takes float32, contiguous q, k, v of shape (batch, heads,
seq, head_dim) and returns a NEW float32 tensor of that shape equal to
softmax(q k^T / sqrt(head_dim)) v.

The grader reads the strings below without importing or running this file: keep them
plain string literals (r-strings and "a" "b" concatenation are fine). Grade with
`make grade` (BACKEND=triton for the Triton source; see assignment/README.md).
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

_TRITON_SRC = r"""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _attention_kernel(q, k, v, out, S, D: tl.constexpr, scale, BLOCK: tl.constexpr):
    # One program per (block of BLOCK query rows, batch x head): tl.program_id(0), (1).
    # Load tiles with tl.load(ptr + offsets, mask=...), multiply with tl.dot(a, b,
    # input_precision="ieee"), keep the softmax stable (subtract the row max), and
    # write with tl.store(out + offsets, values, mask=...).
    pass


def attention(q, k, v):
    # q, k, v: float32, contiguous, (B, H, S, D), on the GPU (or the CPU in Triton's
    # interpreter). Allocate with torch.empty_like(q); torch is for allocation and
    # shapes only: the computing happens in your Triton kernels. (Inside this r-string,
    # write docstrings with three single quotes or use comments: three double quotes end it.)
    raise NotImplementedError("attention: not implemented yet (write your kernel in _TRITON_SRC)")
"""
