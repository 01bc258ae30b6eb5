// The names <torch/types.h> puts in namespace torch, for both of the grader's own
// <torch/extension.h> headers (grader/build/prelude/: lean, grader/build/prelude_cuda/: proxy).
// Included after namespace at (Tensor, the factories, the dtype constants) is declared.
#pragma once
#include <optional>

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
