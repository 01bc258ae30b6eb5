"""Attack: right on the first calls (the check configs come first), zeros after: fast
"timings" of garbage, which a judge that re-checks only the check inputs, or only the last
timed output, would grade ok.
Defence: the judge's canary inputs sit among the timed calls, at places the kernel cannot
know, and their outputs are checked against float64.
Expect: status=wrong_answer; message=benchmark inputs
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
