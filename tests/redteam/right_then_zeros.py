"""Attack: right on the first calls (the check configs come first), zeros after: fast
"timings" of garbage, which a judge that re-checks only the check inputs, or only the last
timed output, would grade ok.
Defence: on the CPU the judge checks random rows of every timed output against float64
(on CUDA its canary inputs sit among the timed calls, at places the kernel cannot know).
The CPU sampler can decide first (its own code got none of the timed calls' samples: strict,
cheat_suspected, seen once in a suite run of 2026-11-28); the wrong outputs always show beneath.
Expect: status=wrong_answer|cheat_suspected; without=wrong_answer; without_message=benchmark inputs
"""

_CPP_SRC = r"""
#include <torch/extension.h>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static int calls = 0;
    if (++calls <= 4) return correct_attention(q, k, v);
    return torch::zeros_like(q);
}
"""
