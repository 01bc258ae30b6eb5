// The grader's lean <ATen/ATen.h>: the part of ATen an attention kernel uses (see
// torch/extension.h here). It declares no CUDA streams or guards, as the real one does
// not: a kernel that uses them includes <c10/cuda/CUDAStream.h> / <c10/cuda/CUDAGuard.h>
// (the real headers), and the build is the same as against the full ones.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_ops.h>
#include <ATen/ops/empty_like_ops.h>
#include <ATen/ops/empty_strided_ops.h>
#include <ATen/ops/full_ops.h>
#include <ATen/ops/ones_ops.h>
#include <ATen/ops/ones_like_ops.h>
#include <ATen/ops/zeros_ops.h>
#include <ATen/ops/zeros_like_ops.h>
#include <c10/core/ScalarType.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/Exception.h>
#include <ATen/Dispatch.h>
#ifndef __CUDACC__
#include <ATen/Parallel.h>
#endif
#include <optional>

// The factory functions kernels use, with the bodies of <ATen/ops/NAME.h>: those
// headers also pull in ATen/Context.h and more (~2 s of parsing per compiler pass),
// while the operators they forward to are declared in the cheap <ATen/ops/NAME_ops.h>.
// (A source that also includes the real ones gets a redefinition error, and the
// grader then rebuilds it against the real headers.)
namespace at {
inline Tensor empty(IntArrayRef size, TensorOptions options = {},
                    std::optional<MemoryFormat> memory_format = std::nullopt) {
    return _ops::empty_memory_format::call(c10::fromIntArrayRefSlow(size), c10::optTypeMetaToScalarType(options.dtype_opt()),
        options.layout_opt(), options.device_opt(), options.pinned_memory_opt(),
        c10::impl::check_tensor_options_and_extract_memory_format(options, memory_format));
}
inline Tensor empty_like(const Tensor& self, TensorOptions options = {},
                         std::optional<MemoryFormat> memory_format = std::nullopt) {
    return _ops::empty_like::call(self, c10::optTypeMetaToScalarType(options.dtype_opt()), options.layout_opt(),
        options.device_opt(), options.pinned_memory_opt(),
        c10::impl::check_tensor_options_and_extract_memory_format(options, memory_format));
}
inline Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options = {}) {
    return _ops::empty_strided::call(c10::fromIntArrayRefSlow(size), c10::fromIntArrayRefSlow(stride),
        c10::optTypeMetaToScalarType(options.dtype_opt()), options.layout_opt(), options.device_opt(),
        options.pinned_memory_opt());
}
inline Tensor zeros(IntArrayRef size, TensorOptions options = {}) {
    return _ops::zeros::call(c10::fromIntArrayRefSlow(size), c10::optTypeMetaToScalarType(options.dtype_opt()),
        options.layout_opt(), options.device_opt(), options.pinned_memory_opt());
}
inline Tensor zeros_like(const Tensor& self, TensorOptions options = {},
                         std::optional<MemoryFormat> memory_format = std::nullopt) {
    return _ops::zeros_like::call(self, c10::optTypeMetaToScalarType(options.dtype_opt()), options.layout_opt(),
        options.device_opt(), options.pinned_memory_opt(),
        c10::impl::check_tensor_options_and_extract_memory_format(options, memory_format));
}
inline Tensor ones(IntArrayRef size, TensorOptions options = {}) {
    return _ops::ones::call(c10::fromIntArrayRefSlow(size), c10::optTypeMetaToScalarType(options.dtype_opt()),
        options.layout_opt(), options.device_opt(), options.pinned_memory_opt());
}
inline Tensor ones_like(const Tensor& self, TensorOptions options = {},
                        std::optional<MemoryFormat> memory_format = std::nullopt) {
    return _ops::ones_like::call(self, c10::optTypeMetaToScalarType(options.dtype_opt()), options.layout_opt(),
        options.device_opt(), options.pinned_memory_opt(),
        c10::impl::check_tensor_options_and_extract_memory_format(options, memory_format));
}
inline Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options = {}) {
    return _ops::full::call(c10::fromIntArrayRefSlow(size), fill_value, c10::optTypeMetaToScalarType(options.dtype_opt()),
        options.layout_opt(), options.device_opt(), options.pinned_memory_opt());
}
}  // namespace at
