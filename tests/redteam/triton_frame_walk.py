"""Attack: (Triton) reach the harness from inside the kernel's Python. An exception's
traceback frames lead to the caller's globals (the worker module), where the timer and
the check live: replace time.perf_counter with a slowed copy for SDPA's calls.
Defence: no name or attribute starting with _ (dunders: __traceback__, __globals__,
__class__), no `type`, `vars`, `globals`: the walk is refused at its first step.
Expect: status=cheat_suspected; flags=strict:triton_allowlist; message=__traceback__
"""

_TRITON_SRC = r"""
import torch
import triton
import triton.language as tl


def attention(q, k, v):
    try:
        raise ValueError("walk")
    except ValueError as e:
        frame = e.__traceback__.tb_frame.f_back
        frame.f_globals["time"].perf_counter = lambda: 0.0
    return torch.empty_like(q)
"""
