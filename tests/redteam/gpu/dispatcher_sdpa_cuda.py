"""Attack: the CUDA form of dispatcher_sdpa: the kernel looks SDPA up by name in torch's
operator dispatcher and calls it boxed (flash attention then runs: a foreign kernel), only
while the operation audit's dispatch mode is off (the audited check calls see its own
kernel): on the H200 it was ok with 25/25 and no flag.
Defence: the link audit holds the dispatcher, its dispatch-key state and the allocator
setters strict (grader/judge/linkaudit.py: `dispatcher`), in a CUDA library as in a CPU one.
Expect: status=cheat_suspected; without=ok; flags=strict:dispatcher
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
@@CORRECT_CUDA@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    if (c10::impl::TorchDispatchModeTLS::stack_len() > 0)
        return correct_attention(q, k, v, c10::cuda::getCurrentCUDAStream());
    static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::scaled_dot_product_attention", "");
    std::vector<c10::IValue> stack{q, k, v, c10::IValue(), 0.0, false, c10::IValue(), false};
    op.callBoxed(&stack);
    return stack[0].toTensor();
}
"""
