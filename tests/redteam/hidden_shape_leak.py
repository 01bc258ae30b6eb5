"""Attack: on any shape that is not a public config it prints the shape and raises with it:
the hidden config's shape then shows in the report, the log or Gradescope's output, for the
next submission to special-case.
Defence: the hidden configs run last, after the benchmark; from the moment their inputs are
sent, the kernel's output goes to the instructor's folder only; their messages are withheld.
Expect: status=runtime_error; message=hidden
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdio>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t S = q.size(2);
    const bool known = S == 128 || S == 333 || S == 256 || S == 64 || S == 200;
    if (!known) {
        std::printf("HIDDEN SHAPE B=%ld H=%ld S=%ld D=%ld\n", (long)q.size(0), (long)q.size(1), (long)S, (long)q.size(3));
        std::fflush(stdout);
        TORCH_CHECK(false, "HIDDEN SHAPE ", q.sizes());
    }
    return correct_attention(q, k, v);
}
"""
