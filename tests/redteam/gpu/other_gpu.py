"""Attack: counts the GPUs it can reach and starts work on another one (a GPU some other
submission is being timed on), to slow that student down or to time itself elsewhere.
Defence: the sandbox holds only the chosen GPU's device nodes: one GPU is visible.
Expect: status=runtime_error; flags=warning:device_settings; message=held
"""

_CUDA_SRC = r"""
#include <torch/extension.h>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    int n = 0;
    cudaGetDeviceCount(&n);
    for (int d = 0; d < n; ++d) {
        if (cudaSetDevice(d) != cudaSuccess) continue;
        void* p = nullptr;
        TORCH_CHECK(n == 1 || cudaMalloc(&p, 1 << 20) != cudaSuccess || d == 0,
                    "SANDBOX ESCAPE: allocated on GPU ", d, " of ", n);
    }
    TORCH_CHECK(false, "sandbox held: ", n, " GPU(s) visible");
    return q;
}
"""
