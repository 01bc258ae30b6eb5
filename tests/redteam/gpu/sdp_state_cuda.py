"""Attack: switches off SDPA's memory-efficient and flash backends and turns TF32 on for
cuBLAS through ATen's global context (by mangled name), so SDPA runs its slow math path
when timed next.
Defence: the state guard puts every flag back before each SDPA measurement and reports the
change (strict); the link audit sees the setters.
Expect: status=cheat_suspected; without=ok; flags=strict:global_settings,strict:global_state
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
@@CORRECT_CUDA@@
extern void* global_context() asm("_ZN2at13globalContextEv");
extern void use_flash(void* context, bool on) asm("_ZN2at7Context14setSDPUseFlashEb");
extern void use_mem_efficient(void* context, bool on) asm("_ZN2at7Context21setSDPUseMemEfficientEb");

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto out = correct_attention(q, k, v, c10::cuda::getCurrentCUDAStream());
    use_flash(global_context(), false);
    use_mem_efficient(global_context(), false);
    return out;
}
"""
