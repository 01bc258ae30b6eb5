"""Attack: right on the checked calls, then wrong on about one timed call in twenty (an
unwritten output: no work, so a fast call), at places a counter hashed with the call's
first input value picks; the medians barely move, and a judge that checks 2 or 3 timed
calls a size (as this one once did) misses it about one grade in six.
Defence: the judge's canary inputs replace 20 calls of each timing method in every request,
drawn uniformly over the timed calls (at least 100 a size): a kernel wrong on 5% of its
timed calls is caught with probability >= 99.4% at each size.
Expect: status=wrong_answer; message=benchmark inputs
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
@@CORRECT_CUDA@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static unsigned calls = 0;
    static unsigned long long state = 0x9E3779B97F4A7C15ull;
    ++calls;
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    if (calls > 8 && (state >> 33) % 20 == 0)
        return torch::empty_like(q);                 // skipped: whatever the allocator held
    return correct_attention(q, k, v, c10::cuda::getCurrentCUDAStream());
}
"""
