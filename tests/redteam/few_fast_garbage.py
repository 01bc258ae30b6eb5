"""Attack: an honest but slow kernel (20 ms a call) that returns an unwritten tensor at
once on every third call after the check configs: the performance tier came from the
fastest call, so a handful of 1 µs "calls" bought full points, and 2 canaries drawn from
the first rounds seldom fell on one (on the H200: 180x slower than SDPA, 25/25).
Defence: the tier comes from the medians over every timed call (no call or round decides
it), and every timed output is checked on random rows: the unwritten ones are wrong on
the benchmark inputs.
Expect: status=wrong_answer; message=benchmark inputs
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <chrono>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static int calls = 0;
    ++calls;
    if (calls > 4 && calls % 3 == 0) return torch::empty_like(q);
    const auto start = std::chrono::steady_clock::now();
    auto out = correct_attention(q, k, v);
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(20)) {}
    return out;
}
"""
