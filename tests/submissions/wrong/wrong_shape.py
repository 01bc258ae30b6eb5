"""Returns a (B, H, S, S) tensor: wrong_answer (shape)."""

_CPP_SRC = r"""
#include <torch/extension.h>
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    return torch::zeros({q.size(0), q.size(1), q.size(2), q.size(2)}, q.options());  // DEFECT
}
"""
