"""Attack: statistics of the judge's two summaries. The tier comes from the median over every timed
call, the CPU sampler from the samples over all of them together. So 3 calls in 5 use torch's flash
kernel (GNU-hash lookup, XOR-encoded name, no symbol) and 2 in 5 run an honest but slow kernel of
its own (plain loops, OpenMP): the median is a flash call (~1x SDPA), while the slow own calls,
each several times longer, fill the sampler's own share. No padding, no spinner: every call is
correct and the mix alone decides both figures.
(Held-out set of 2026-11-28: ok, no flag, slowdown 1.38/1.23.)
Defence: every CPU call is a request of its own, so the judge takes the samples of the kernel's
own calls' brackets apart, and of the faster half of them, which decides the tier: there its own
code got almost none (grader/judge/cpusample.py `in_call_flags`). A loaded machine scrambles which
calls are the faster half (CI, 2026-11-28: review, not strict), so the calls are also counted once
each, by their own samples, which are CPU time: most of them ran torch's code (`calls_in_torch`).
Expect: status=cheat_suspected; without=ok; flags=strict:foreign_cpu_time
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <optional>
#include <tuple>
@@CORRECT@@
@@GNU_LOOKUP@@
@@FLASH_FN@@


torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static FlashFn fn = flash_fn();
    TORCH_CHECK(fn != nullptr, "setup failed");
    static unsigned calls = 0;
    if (++calls % 5 < 2) return correct_attention(q, k, v);
    auto r = fn(q, k, v, 0.0, false, std::nullopt, std::nullopt);
    return std::get<0>(r).contiguous();
}
"""
