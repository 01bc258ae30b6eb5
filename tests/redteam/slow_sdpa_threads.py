"""Attack: SDPA is timed in the same process, so the kernel sets torch's thread count to 1
on every call: SDPA, timed next, runs on one core and the kernel looks faster than it is.
Defence: torch's global state is compared and put back before every SDPA measurement and
the change is reported; the link audit sees at::set_num_threads.
Expect: status=cheat_suspected; without=ok; flags=strict:global_settings,warning:thread_count
"""

_CPP_SRC = r"""
#include <torch/extension.h>
@@CORRECT@@
extern void set_threads(int) asm("_ZN2at15set_num_threadsEi");     // at::set_num_threads, unnamed

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto out = correct_attention(q, k, v);
    set_threads(1);
    return out;
}
"""
