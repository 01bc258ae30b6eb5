// The proxy's factory functions (ATen/Functions.h): torch::empty({B, H, S, S}, q.options())
// and the like, each done by the same ATen function in the binding module.
#pragma once
#include "tensor.h"

namespace at {
namespace detail {
inline Tensor factory(int kind, IntArrayRef size, const Tensor* like, const Scalar& fill, const TensorOptions& o) {
    Tensor out;
    grader_proxy_factory(&out, kind, size.data(), size.size(), like, fill.abi(), o.abi());
    return out;
}
}  // namespace detail
inline Tensor empty(IntArrayRef size, TensorOptions o = {}) { return detail::factory(GRADER_PROXY_EMPTY, size, nullptr, 0, o); }
inline Tensor zeros(IntArrayRef size, TensorOptions o = {}) { return detail::factory(GRADER_PROXY_ZEROS, size, nullptr, 0, o); }
inline Tensor ones(IntArrayRef size, TensorOptions o = {}) { return detail::factory(GRADER_PROXY_ONES, size, nullptr, 0, o); }
inline Tensor full(IntArrayRef size, const Scalar& value, TensorOptions o = {}) { return detail::factory(GRADER_PROXY_FULL, size, nullptr, value, o); }
inline Tensor empty_like(const Tensor& t, TensorOptions o = {}) { return detail::factory(GRADER_PROXY_EMPTY_LIKE, {}, &t, 0, o); }
inline Tensor zeros_like(const Tensor& t, TensorOptions o = {}) { return detail::factory(GRADER_PROXY_ZEROS_LIKE, {}, &t, 0, o); }
inline Tensor ones_like(const Tensor& t, TensorOptions o = {}) { return detail::factory(GRADER_PROXY_ONES_LIKE, {}, &t, 0, o); }
inline Tensor full_like(const Tensor& t, const Scalar& value, TensorOptions o = {}) { return detail::factory(GRADER_PROXY_FULL_LIKE, {}, &t, value, o); }
inline Tensor fill(const Tensor& t, const Scalar& value) { return full_like(t, value); }   // at::fill: a filled copy
inline std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << grader_proxy_tensor_str(&t); }
}  // namespace at
