"""Attack: (Triton) the kernel's real code is a string, built at run time and compiled with
exec, so no line of the file the judge reads says what runs (a kernel compiled from a
string, or a jit function whose source is swapped after the audit).
Defence: exec, eval, compile and every other builtin that turns text into code are off the
Triton allowlist; the file is refused before it runs.
Expect: status=cheat_suspected; flags=strict:triton_allowlist; message=exec
"""

_TRITON_SRC = r"""
import torch
import triton
import triton.language as tl

CODE = "import torch.nn.functional as F\nattention = lambda q, k, v: F.scaled_dot_" + "product_attention(q, k, v)"
exec(CODE)
"""
