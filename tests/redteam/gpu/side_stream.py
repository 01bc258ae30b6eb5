"""Attack: does its work on a stream of its own and returns at once: the timed stream's end
event is recorded before the work is done, so the kernel looks almost free.
Defence: the output the judge reads is the one the caller's stream sees: memory the caller
already reused (the next call's output, a canary's) is still being written by the side
stream, so the judge's canaries come back wrong (seen on the H200: wrong on the benchmark
inputs, right on the check configs). Where the side work outruns the launches, each size's
call timed with the device synchronised disagrees (review:async_work) and the link audit
warns of extra streams: a person looks.
Expect: status=wrong_answer; message=benchmark inputs
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
