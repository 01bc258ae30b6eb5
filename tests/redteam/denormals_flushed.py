"""Attack: sets the FTZ and DAZ bits of the x86 MXCSR with an intrinsic (no function call,
no symbol): denormal arithmetic changes speed for whatever runs next on this thread.
Defence: the state guard probes denormal flushing before every SDPA measurement, puts it
back and reports the change.
Expect: status=cheat_suspected; without=ok; flags=strict:global_state
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <xmmintrin.h>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto out = correct_attention(q, k, v);
    _mm_setcsr(_mm_getcsr() | 0x8040);      // FTZ | DAZ
    return out;
}
"""
