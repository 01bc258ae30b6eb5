"""Hides its ATen calls from the static scan behind a token-pasting macro; the
operation audit still sees the operations it dispatches. Expected: cheat_suspected
with the flag `dispatched_compute` only (no static flag)."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>

#define METHOD(obj, name, ...) obj.name(__VA_ARGS__)

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto scores = METHOD(q, matmul, k.transpose(-1, -2)).mul_(1.0 / std::sqrt((double)q.size(3)));
    return METHOD(METHOD(scores, softmax, -1), matmul, v);
}
"""
