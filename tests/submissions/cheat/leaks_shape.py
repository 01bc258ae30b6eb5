"""Tries to reveal the hidden configs: on any shape that is not a public one it raises
an error carrying q's shape. Expected: ok on the public configs, runtime_error on the
hidden ones, and the shape must not appear in anything the student sees."""

_CPP_SRC = r"""
#include <torch/extension.h>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(false, "LEAK shape=", q.sizes());
    return q;
}
"""
