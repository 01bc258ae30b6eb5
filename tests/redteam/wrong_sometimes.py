"""Attack: right on the checked calls, then wrong on about one timed call in twenty (an
output left unwritten: no work, a fast call) at places a pseudo-random counter picks; the
median barely moves, so a judge that checks a few timed calls is likely to miss it.
Defence: on the CPU the judge checks random rows of every head of every timed output (the
CUDA twin, gpu/wrong_sometimes_cuda.py, meets the canaries: >= 100 a size).
Expect: status=wrong_answer; message=benchmark inputs
"""

_CPP_SRC = r"""
#include <torch/extension.h>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static unsigned calls = 0;
    static unsigned long long state = 0x9E3779B97F4A7C15ull;
    ++calls;
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    if (calls > 8 && (state >> 33) % 20 == 0)
        return torch::empty_like(q);
    return correct_attention(q, k, v);
}
"""
