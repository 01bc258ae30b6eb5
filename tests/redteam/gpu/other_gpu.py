"""Attack: counts the GPUs it can reach and starts work on another one (a GPU some other
submission is being timed on), to slow that student down or to time itself elsewhere.
Defence: the sandbox holds only the chosen GPU's device nodes: one GPU is visible.
Expect: status=runtime_error; flags=warning:device_settings; message=held
"""

_CUDA_SRC = r"""
#include <torch/extension.h>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    // literal-only messages: on the GPU image a TORCH_CHECK with values crashes (SIGSEGV)
    // before its message is seen (tests/course/test_batch.py, the xfail)
    int n = 0;
    cudaGetDeviceCount(&n);
    for (int d = 1; d < n; ++d) {
        void* p = nullptr;
        if (cudaSetDevice(d) == cudaSuccess && cudaMalloc(&p, 1 << 20) == cudaSuccess)
            TORCH_CHECK(false, "SANDBOX ESCAPE: allocated on another GPU");
    }
    TORCH_CHECK(n != 1, "sandbox held: one GPU visible");
    TORCH_CHECK(false, "sandbox held? several GPUs visible, none could be used");
    return q;
}
"""
