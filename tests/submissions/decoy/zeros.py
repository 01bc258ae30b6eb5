"""Decoy: returns zeros (no work at all). Must fail every config, told "an output of all zeros"
(never "off by a constant factor of 0")."""

_CPP_SRC = r"""
#include <torch/extension.h>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    return torch::zeros_like(q);
}
"""
