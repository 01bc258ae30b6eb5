"""Returns its input q instead of a new tensor: wrong_answer (output aliases an input)."""

_CPP_SRC = r"""
#include <torch/extension.h>
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    return q;  // DEFECT: the output must be a new tensor
}
"""
