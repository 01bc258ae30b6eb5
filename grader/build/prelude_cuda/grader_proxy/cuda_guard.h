// The proxy's c10/cuda/CUDAGuard.h: make a device current for a scope.
#pragma once
#include "cuda_stream.h"

#ifdef __CUDACC__
namespace c10 {
namespace cuda {
// Makes `device` current for its lifetime, then restores the previous device.
class CUDAGuard {
 public:
    explicit CUDAGuard(DeviceIndex index) { set(index); }
    explicit CUDAGuard(Device device) {
        TORCH_CHECK(device.is_cuda(), "Expected a CUDA device, but got ", device);
        set(device.index());
    }
    CUDAGuard(const CUDAGuard&) = delete;
    CUDAGuard& operator=(const CUDAGuard&) = delete;
    ~CUDAGuard() {
        if (original_ != current_) cudaSetDevice(original_);
    }
    Device original_device() const { return Device(DeviceType::CUDA, static_cast<DeviceIndex>(original_)); }
    Device current_device() const { return Device(DeviceType::CUDA, static_cast<DeviceIndex>(current_)); }

 private:
    void set(DeviceIndex index) {
        C10_CUDA_CHECK(cudaGetDevice(&original_));
        current_ = index < 0 ? original_ : index;
        if (current_ != original_) C10_CUDA_CHECK(cudaSetDevice(current_));
    }
    int original_ = 0, current_ = 0;
};

// The same for an optional device (a CPU or absent device changes nothing).
class OptionalCUDAGuard {
 public:
    explicit OptionalCUDAGuard(std::optional<Device> device) {
        if (device && device->is_cuda()) guard_.emplace(device->index());
    }
    explicit OptionalCUDAGuard(Device device) : OptionalCUDAGuard(std::optional<Device>(device)) {}

 private:
    std::optional<CUDAGuard> guard_;
};
}  // namespace cuda
}  // namespace c10
#endif  // __CUDACC__
