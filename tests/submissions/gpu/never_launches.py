"""Returns torch::empty_like(q) without computing anything: the NaN-poisoned allocator
makes the unwritten output visible -> wrong_answer."""

_CUDA_SRC = r"""
#include <torch/extension.h>
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    return torch::empty_like(q);  // DEFECT: nothing is ever written
}
"""
