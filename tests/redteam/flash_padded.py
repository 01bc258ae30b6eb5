"""Attack: torch's flash kernel (GNU-hash lookup, XOR-encoded name, no symbol) computes every call;
after it, both of the call's threads spin in the kernel's own code (OpenMP) for 110% of the time the
flash call took. Each call's own code then gets over half of the samples in its code and torch's:
no call counts as torch's (own under 20% of a call's), and the share over its calls and over their
faster half (~52%) sits above the 50% review line. The kernel is ~2.1x SDPA and never computed.
(The held-out ho_flash_padded of 2026-11-27 padded 40% on one thread: review only, its faster half
at 20% of the samples, the strict bar, in 2026-11-28's run.)
Defence: padding adds samples of its own code, never fewer of torch's: its calls ran as much of
torch's code as SDPA's calls did, each a request with the same harness work (grader/judge/cpusample.py
`torch_work_flags`: in the red-team class at S = 256, 0.78-1.11 of SDPA's for the kernels calling
torch's compute, this one 0.89, 0.04-0.14 for those computing their own; before the rule: ok, no flag).
Expect: status=cheat_suspected; without=ok; flags=strict:foreign_cpu_time
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <chrono>
#include <cstdint>
#include <optional>
#include <tuple>
@@GNU_LOOKUP@@
@@FLASH_FN@@

static volatile std::uint64_t sink = 0;

__attribute__((noinline)) static void burn_until(std::chrono::steady_clock::time_point end) {
    std::uint64_t x = sink;
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 200; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static FlashFn fn = flash_fn();
    TORCH_CHECK(fn != nullptr, "setup failed");
    const auto t0 = std::chrono::steady_clock::now();
    auto r = fn(q, k, v, 0.0, false, std::nullopt, std::nullopt);
    auto out = std::get<0>(r).contiguous();
    const auto end = std::chrono::steady_clock::now() + (std::chrono::steady_clock::now() - t0) * 110 / 100;
    #pragma omp parallel
    burn_until(end);
    return out;
}
"""
