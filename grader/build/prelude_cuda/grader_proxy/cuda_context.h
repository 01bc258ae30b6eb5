// The proxy's ATen/cuda/CUDAContext.h (with the ATen/cuda/Exceptions.h and
// c10/cuda/CUDAStream.h it includes): device properties and AT_CUDA_CHECK.
#pragma once
#include "aten_cuda_exceptions.h"
#include "cuda_stream.h"

#ifdef __CUDACC__
namespace at {
namespace cuda {
// Every device's properties, read once per process (torch caches them too).
inline cudaDeviceProp* getDeviceProperties(c10::DeviceIndex device) {
    static const int count = c10::cuda::device_count();
    static cudaDeviceProp* const all = [] {
        auto* props = new cudaDeviceProp[count > 0 ? count : 1];
        for (int d = 0; d < count; ++d) C10_CUDA_CHECK(cudaGetDeviceProperties(&props[d], d));
        return props;
    }();
    const int d = device < 0 ? c10::cuda::current_device() : device;
    TORCH_CHECK(d >= 0 && d < count, "device=", d, ", num_gpus=", count);
    return &all[d];
}
inline cudaDeviceProp* getCurrentDeviceProperties() { return getDeviceProperties(-1); }
inline int warp_size() { return getCurrentDeviceProperties()->warpSize; }
inline int64_t getNumGPUs() { return c10::cuda::device_count(); }
inline bool is_available() { return c10::cuda::device_count() > 0; }
}  // namespace cuda
}  // namespace at
#endif  // __CUDACC__
