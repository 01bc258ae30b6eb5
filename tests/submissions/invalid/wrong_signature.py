"""`attention` takes const references: compile_error naming the required signature."""

_CPP_SRC = r"""
#include <torch/extension.h>
torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
    return torch::empty_like(q);
}
"""
