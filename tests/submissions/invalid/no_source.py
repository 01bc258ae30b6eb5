"""No _CPP_SRC or _CUDA_SRC: invalid_submission."""

KERNEL = r"""
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v);
"""
