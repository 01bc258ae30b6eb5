"""Triton, SDPA hidden (1 of 3): the attribute name is built from pieces at run time and
fetched with getattr, so no line of the source says scaled_dot_product_attention.
Expect: cheat_suspected (the allowlist refuses getattr; the op audit sees SDPA)."""

_TRITON_SRC = r"""
import torch
import triton
import triton.language as tl


def attention(q, k, v):
    name = "scaled_dot_" + "product_attention"
    return getattr(torch.nn.functional, name)(q, k, v)
"""
