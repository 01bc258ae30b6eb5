"""Attack: after the check configs, returns the previous call's answer from a static device
buffer (an answer cache that needs no hit): timed calls then cost a copy.
Defence: the judge's canary inputs sit among the timed calls; their outputs must be right.
Expect: status=wrong_answer; message=benchmark inputs
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
@@CORRECT_CUDA@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static int calls = 0;
    static torch::Tensor last;
    if (++calls <= 4 || !last.defined() || last.sizes() != q.sizes()) {
        last = correct_attention(q, k, v, c10::cuda::getCurrentCUDAStream());
        return last.clone();
    }
    return last.clone();
}
"""
