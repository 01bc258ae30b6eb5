// The proxy's c10/cuda/CUDAException.h: C10_CUDA_CHECK and C10_CUDA_KERNEL_LAUNCH_CHECK.
#pragma once
#include "c10.h"

#ifdef __CUDACC__
#define C10_CUDA_CHECK(EXPR)                                                                     \
    do {                                                                                         \
        const cudaError_t grader_proxy_err = (EXPR);                                             \
        if (__builtin_expect(grader_proxy_err != cudaSuccess, 0)) {                              \
            (void)cudaGetLastError();  /* clear it, as c10 does */                               \
            ::grader_proxy_fail(GRADER_PROXY_ERROR, __func__, __FILE__, __LINE__,                \
                (std::string("CUDA error: ") + cudaGetErrorString(grader_proxy_err) +            \
                 "\nCUDA kernel errors might be asynchronously reported at some other API call, " \
                 "so the stacktrace below might be incorrect.\nFor debugging consider passing "  \
                 "CUDA_LAUNCH_BLOCKING=1").c_str());                                             \
        }                                                                                        \
    } while (0)
#define C10_CUDA_CHECK_WARN(EXPR)                                                                \
    do {                                                                                         \
        const cudaError_t grader_proxy_err = (EXPR);                                             \
        if (__builtin_expect(grader_proxy_err != cudaSuccess, 0)) {                              \
            (void)cudaGetLastError();                                                            \
            TORCH_WARN("CUDA warning: ", cudaGetErrorString(grader_proxy_err));                  \
        }                                                                                        \
    } while (0)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
#endif  // __CUDACC__
