"""Attack: (Triton) code that runs when the file is imported, before any check: a decorator
of the student's own, and a launch hook registered with Triton's runtime (triton.knobs),
both set to swap the real kernel for SDPA on the timed calls and keep it on the checks.
Defence: the Triton allowlist (grader/judge/tritonaudit.py), read from the syntax tree in the
judge: decorators are triton.jit/autotune/heuristics only, triton.knobs and triton.runtime
are off the list. Static, so the flag holds whatever the code does once it runs.
Expect: status=cheat_suspected; flags=strict:triton_allowlist,strict:torch_compute; message=torch.nn
"""

_TRITON_SRC = r"""
import torch
import triton
import triton.language as tl


def swap(fn):
    return lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v)


triton.knobs.runtime.launch_enter_hook = print


@swap
def attention(q, k, v):
    return torch.empty_like(q)
"""
