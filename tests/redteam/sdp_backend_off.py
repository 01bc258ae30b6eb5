"""Attack: turns off SDPA's fast backends (flash, memory-efficient) through ATen's global
context on every call: SDPA falls back to its slow math path when it is timed next.
Defence: the state guard puts the SDP flags back before every SDPA measurement and reports
the change (strict); the link audit sees at::Context::setSDPUse*.
Expect: status=cheat_suspected; without=ok; flags=strict:global_settings,strict:global_state
"""

_CPP_SRC = r"""
#include <torch/extension.h>
@@CORRECT@@
// at::globalContext().setSDPUseFlash(false), by mangled name: the names never appear in the code
extern void* global_context() asm("_ZN2at13globalContextEv");
extern void use_flash(void* context, bool on) asm("_ZN2at7Context14setSDPUseFlashEb");
extern void use_mem_efficient(void* context, bool on) asm("_ZN2at7Context21setSDPUseMemEfficientEb");

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto out = correct_attention(q, k, v);
    use_flash(global_context(), false);
    use_mem_efficient(global_context(), false);
    return out;
}
"""
