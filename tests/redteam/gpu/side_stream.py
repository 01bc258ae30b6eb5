"""Attack: does its work on a stream of its own and returns at once: the timed stream's end
event is recorded before the work is done, so the kernel looks almost free.
Defence: each size also times a call with the device synchronised (review:async_work when
the two disagree); the link audit warns of extra streams. A person looks.
Expect: status=ok; flags=review:async_work,warning:extra_streams
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
@@CORRECT_CUDA@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static cudaStream_t side = nullptr;
    if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    return correct_attention(q, k, v, side);
}
"""
