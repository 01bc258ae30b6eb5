// The proxy's c10/cuda/CUDAStream.h (and the c10/cuda/CUDAFunctions.h it includes):
// the stream torch is working on, from torch itself.
#pragma once
#include "c10.h"
#include "cuda_exception.h"

#ifdef __CUDACC__
namespace c10 {
namespace cuda {
// The stream torch is working on for a device (what getCurrentCUDAStream returns);
// converts to cudaStream_t for a launch's fourth argument.
class CUDAStream {
 public:
    CUDAStream(cudaStream_t s, DeviceIndex device) : stream_(s), device_(device) {}
    cudaStream_t stream() const { return stream_; }
    operator cudaStream_t() const { return stream_; }   // NOLINT: implicit, as in c10
    DeviceIndex device_index() const { return device_; }
    Device device() const { return Device(DeviceType::CUDA, device_); }
    void synchronize() const { C10_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
    cudaStream_t stream_;
    DeviceIndex device_;
};
inline CUDAStream getCurrentCUDAStream(DeviceIndex device = -1) {
    int index = device;
    cudaStream_t s = static_cast<cudaStream_t>(grader_proxy_current_stream(&index));
    return CUDAStream(s, static_cast<DeviceIndex>(index));
}
inline CUDAStream getDefaultCUDAStream(DeviceIndex device = -1) {
    int index = device;
    cudaStream_t s = static_cast<cudaStream_t>(grader_proxy_default_stream(&index));
    return CUDAStream(s, static_cast<DeviceIndex>(index));
}
inline DeviceIndex device_count() noexcept {   // 0 when CUDA cannot be used, as in c10
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return static_cast<DeviceIndex>(n);
}
inline DeviceIndex current_device() {
    int d = 0;
    C10_CUDA_CHECK(cudaGetDevice(&d));
    return static_cast<DeviceIndex>(d);
}
inline void device_synchronize() { C10_CUDA_CHECK(cudaDeviceSynchronize()); }
}  // namespace cuda
}  // namespace c10
namespace at::cuda {
using namespace c10::cuda;   // as torch's c10/macros/Macros.h does
}  // namespace at::cuda
#endif  // __CUDACC__
