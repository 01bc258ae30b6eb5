"""A typo in the kernel: compile_error, and the error must point at line 10 of this file."""

X = 1

_CPP_SRC = r"""
#include <torch/extension.h>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto out = torch::empty_like(q)
    return out;
}
"""
