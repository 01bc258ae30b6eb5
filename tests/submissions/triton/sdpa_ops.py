"""Triton, SDPA hidden (3 of 3): ATen's operator reached through torch.ops, and the
dunder route to it kept in reserve.
Expect: cheat_suspected (torch.ops is off the allowlist)."""

_TRITON_SRC = r"""
import torch
import triton
import triton.language as tl


def attention(q, k, v):
    return torch.ops.aten.scaled_dot_product_attention(q, k, v)
"""
