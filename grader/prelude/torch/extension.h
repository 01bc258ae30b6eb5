// The grader's lean <torch/extension.h>: what an attention kernel uses, nothing more.
//
// The real <torch/extension.h> pulls in pybind11, Python.h and the whole ATen
// operator library: ~30 s of parsing per build on a 2-core machine. Kernels need
// tensors, a few factory functions, TORCH_CHECK and parallel_for, which parse in
// a few seconds. The grader puts this folder first on the include path; if a
// source needs more (a compile error about a missing name), the grader rebuilds
// it against the real headers, so the result never depends on this file.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/full.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <c10/core/ScalarType.h>
#include <c10/core/TensorOptions.h>
#ifdef __CUDACC__
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#endif

#include <optional>

// The same names <torch/types.h> puts in namespace torch.
namespace torch {
using namespace at;  // NOLINT: torch::Tensor, torch::empty, ... are the at:: ones
using std::nullopt;
using std::optional;
using Dtype = at::ScalarType;
constexpr auto kUInt8 = at::kByte;
constexpr auto kInt8 = at::kChar;
constexpr auto kInt16 = at::kShort;
constexpr auto kInt32 = at::kInt;
constexpr auto kInt64 = at::kLong;
constexpr auto kFloat16 = at::kHalf;
constexpr auto kFloat32 = at::kFloat;
constexpr auto kFloat64 = at::kDouble;
constexpr auto kU8 = kUInt8;
constexpr auto kI8 = kInt8;
constexpr auto kI16 = kInt16;
constexpr auto kI32 = kInt32;
constexpr auto kI64 = kInt64;
constexpr auto kF16 = kFloat16;
constexpr auto kF32 = kFloat32;
constexpr auto kF64 = kFloat64;
}  // namespace torch
