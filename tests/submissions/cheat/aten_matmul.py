"""Computes attention with ATen's matmul and softmax: correct output, but not a kernel.
Expected: cheat_suspected, by the static scan (at::matmul, at::softmax) and by the
operation audit (aten.mm / aten.bmm and aten._softmax dispatched)."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto scores = at::matmul(q, k.transpose(-1, -2)) / std::sqrt((double)q.size(3));
    return at::matmul(at::softmax(scores, -1), v);
}
"""
