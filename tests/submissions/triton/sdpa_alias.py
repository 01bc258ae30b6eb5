"""Triton, SDPA hidden (2 of 3): torch bound to another name, and the call made through
it, beside a real (unused) Triton kernel.
Expect: cheat_suspected (a module is never a value in a Triton submission)."""

_TRITON_SRC = r"""
import torch
import triton
import triton.language as tl


@triton.jit
def _unused(x, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), tl.zeros((BLOCK,), dtype=tl.float32))


backend = torch


def attention(q, k, v):
    return backend.nn.functional.scaled_dot_product_attention(q, k, v)
"""
