"""A Python syntax error: invalid_submission naming line 4."""

_CPP_SRC = r"""
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v);
""
