"""Attack: SDPA is timed in the kernel's process, so the kernel installs its own CPU
allocator (c10::SetCPUAllocator) that wastes 2 ms on every allocation made outside the
kernel itself: SDPA's buffers come slowly, SDPA's time grows ~10x and the kernel's ratio
looks great. No global torch setting changed, so the state guard had nothing to put back.
Defence: SDPA is also timed in the judge's own, clean process and the slowdown is taken
against at most 1.25x that, however the baseline was slowed (a review flag says it was);
the link audit holds the allocator setters strict.
Expect: status=cheat_suspected; flags=strict:dispatcher,review:baseline_slowed
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <c10/core/CPUAllocator.h>
#include <chrono>
@@CORRECT@@

static thread_local bool inside = false;

struct Slow final : c10::Allocator {
    c10::Allocator* base;
    explicit Slow(c10::Allocator* b) : base(b) {}
    c10::DataPtr allocate(size_t n) override {
        if (!inside) {
            const auto start = std::chrono::steady_clock::now();
            while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(2)) {}
        }
        return base->allocate(n);
    }
    c10::DeleterFnPtr raw_deleter() const override { return base->raw_deleter(); }
    void copy_data(void* dest, const void* src, std::size_t count) const override {
        base->copy_data(dest, src, count);
    }
};

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static Slow* slow = nullptr;
    if (slow == nullptr) {
        slow = new Slow(c10::GetCPUAllocator());
        c10::SetCPUAllocator(slow, /*priority=*/100);
    }
    inside = true;
    auto out = correct_attention(q, k, v);
    inside = false;
    return out;
}
"""
