"""Attack: after the check configs, every call returns at once an output it has not
written and fills it 2 ms later from a thread of its own: a timed call then costs almost
nothing, and a judge that reads the outputs after the whole loop (the canaries once were)
finds them written.
Defence: the harness takes the kernel's output the moment its call returns, before any
other kernel runs, and the judge checks random rows of every timed output against
float64: an output not yet written is wrong on the benchmark inputs.
Expect: status=wrong_answer; flags=warning:own_threads; message=benchmark inputs
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <chrono>
#include <thread>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static int calls = 0;
    if (++calls <= 4) return correct_attention(q, k, v);
    auto out = torch::empty_like(q);
    std::thread([out, q, k, v]() mutable {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        out.copy_(correct_attention(q, k, v));
    }).detach();
    return out;
}
"""
