// The proxy's tensor accessors (ATen/core/TensorAccessor.h): torch's own header-only
// accessor templates, instantiated with the proxy's IntArrayRef and checks exactly as
// ATen instantiates them with c10's. Compiled in (-DGRADER_PROXY_ACCESSOR) only for a
// source that names an accessor.
#pragma once
#include "c10.h"

#if defined(GRADER_PROXY_ACCESSOR) && __has_include(<torch/headeronly/core/TensorAccessor.h>)
#include <torch/headeronly/core/TensorAccessor.h>
#define GRADER_PROXY_HAS_ACCESSORS 1

namespace at {
using torch::headeronly::DefaultPtrTraits;
#if defined(__CUDACC__)
using torch::headeronly::RestrictPtrTraits;   // only under nvcc, as in ATen
#endif

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
using TensorAccessorBase = torch::headeronly::detail::TensorAccessorBase<c10::IntArrayRef, T, N, PtrTraits, index_t>;

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
using TensorAccessor = torch::headeronly::detail::TensorAccessor<c10::IntArrayRef, T, N, PtrTraits, index_t>;

namespace detail {
template <size_t N, typename index_t>
struct IndexBoundsCheck {   // transpose()'s check: torch's IndexError
    IndexBoundsCheck(index_t i) {  // NOLINT: implicit, as in ATen
        TORCH_CHECK_INDEX(0 <= i && i < index_t{N}, "Index ", i, " is not within bounds of a tensor of dimension ", N);
    }
};
}  // namespace detail

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
using GenericPackedTensorAccessorBase =
    torch::headeronly::detail::GenericPackedTensorAccessorBase<detail::IndexBoundsCheck<N, index_t>, T, N, PtrTraits, index_t>;

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
using GenericPackedTensorAccessor = torch::headeronly::detail::GenericPackedTensorAccessor<
    TensorAccessor<T, N - 1, PtrTraits, index_t>, detail::IndexBoundsCheck<N, index_t>, T, N, PtrTraits, index_t>;

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
using PackedTensorAccessor [[deprecated("Old name for GenericPackedTensorAccessor")]] =
    GenericPackedTensorAccessor<T, N, PtrTraits, index_t>;

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor32 = GenericPackedTensorAccessor<T, N, PtrTraits, int32_t>;

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor64 = GenericPackedTensorAccessor<T, N, PtrTraits, int64_t>;
}  // namespace at
#endif
