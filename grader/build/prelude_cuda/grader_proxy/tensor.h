// The proxy's at::Tensor (ATen/core/Tensor.h): the layout of the real one (one
// c10::TensorImpl pointer), every operation a call into the binding module.
#pragma once
#include "accessor.h"
#include "c10.h"

namespace at {

// What the deprecated `tensor.type()` returns, for the 2018 tutorial's
// `AT_ASSERTM(x.type().is_cuda(), ...)`; it does not convert to a ScalarType (nor in torch).
class DeprecatedTypeProperties {
 public:
    DeprecatedTypeProperties(Device device, ScalarType t) : device_(device), t_(t) {}
    bool is_cuda() const { return device_.is_cuda(); }
    bool is_sparse() const { return false; }
    ScalarType scalarType() const { return t_; }
    TypeMeta typeMeta() const { return t_; }
    friend bool operator==(const DeprecatedTypeProperties& a, const DeprecatedTypeProperties& b) {
        return a.device_.type() == b.device_.type() && a.t_ == b.t_;
    }
    friend bool operator!=(const DeprecatedTypeProperties& a, const DeprecatedTypeProperties& b) { return !(a == b); }

 private:
    Device device_;
    ScalarType t_;
};

class Tensor {
 public:
    Tensor() { grader_proxy_tensor_undefined(this); }
    Tensor(const Tensor& other) { grader_proxy_tensor_copy(this, &other); }
    Tensor(Tensor&& other) noexcept { grader_proxy_tensor_move(this, &other); }
    ~Tensor() { grader_proxy_tensor_destroy(this); }
    Tensor& operator=(const Tensor& other) {
        if (this != &other) grader_proxy_tensor_assign(this, &other);
        return *this;
    }
    Tensor& operator=(Tensor&& other) noexcept {
        if (this != &other) grader_proxy_tensor_move_assign(this, &other);
        return *this;
    }

    bool defined() const { return grader_proxy_tensor_defined(this); }
    int64_t dim() const { return grader_proxy_tensor_dim(this); }
    int64_t ndimension() const { return dim(); }
    int64_t size(int64_t d) const { return grader_proxy_tensor_size(this, d); }
    int64_t stride(int64_t d) const { return grader_proxy_tensor_stride(this, d); }
    IntArrayRef sizes() const { size_t n; const int64_t* p = grader_proxy_tensor_sizes(this, &n); return {p, n}; }
    IntArrayRef strides() const { size_t n; const int64_t* p = grader_proxy_tensor_strides(this, &n); return {p, n}; }
    int64_t numel() const { return grader_proxy_tensor_numel(this); }
    ScalarType scalar_type() const { return static_cast<ScalarType>(grader_proxy_tensor_scalar_type(this)); }
    TypeMeta dtype() const { return scalar_type(); }
    size_t element_size() const { return c10::elementSize(scalar_type()); }
    size_t itemsize() const { return element_size(); }
    size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
    Device device() const {
        int type = 0, index = -1;
        grader_proxy_tensor_device(this, &type, &index);
        return Device(static_cast<DeviceType>(type), static_cast<c10::DeviceIndex>(index));
    }
    int64_t get_device() const { return is_cuda() ? device().index() : -1; }
    bool is_cuda() const { return device().is_cuda(); }
    bool is_cpu() const { return device().is_cpu(); }
    bool is_contiguous() const { return grader_proxy_tensor_is_contiguous(this); }
    TensorOptions options() const { return TensorOptions().dtype(scalar_type()).device(device()); }
    [[deprecated("Tensor.type() is deprecated. Instead use Tensor.options()")]]
    DeprecatedTypeProperties type() const { return DeprecatedTypeProperties(device(), scalar_type()); }

    // Checked like torch's: data_ptr<float>() of a double tensor raises.
    template <typename T>
    T* data_ptr() const {
        return static_cast<T*>(grader_proxy_tensor_data_ptr(this, static_cast<int>(CppTypeToScalarType<T>::value)));
    }
    void* data_ptr() const { return grader_proxy_tensor_data_ptr(this, -1); }
    template <typename T>
    const std::remove_const_t<T>* const_data_ptr() const { return data_ptr<std::remove_const_t<T>>(); }
    const void* const_data_ptr() const { return data_ptr(); }
    template <typename T>
    T* mutable_data_ptr() const { return data_ptr<T>(); }
    void* mutable_data_ptr() const { return data_ptr(); }
    template <typename T>
    [[deprecated("Tensor.data<T>() is deprecated. Please use Tensor.data_ptr<T>() instead.")]]
    T* data() const { return data_ptr<T>(); }

    Tensor contiguous() const { Tensor out; grader_proxy_tensor_contiguous(&out, this); return out; }
    Tensor& zero_() { grader_proxy_tensor_zero_(this); return *this; }
    Tensor& fill_(const Scalar& value) { grader_proxy_tensor_fill_(this, value.abi()); return *this; }
    Tensor to(TensorOptions options = {}, bool non_blocking = false, bool copy = false) const {
        Tensor out;
        grader_proxy_tensor_to(&out, this, options.abi(), non_blocking, copy);
        return out;
    }
    Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false) const {
        return to(TensorOptions().device(device).dtype(dtype), non_blocking, copy);
    }
    Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false) const {
        return to(TensorOptions().dtype(dtype), non_blocking, copy);
    }
    Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const {
        return to(other.options(), non_blocking, copy);
    }
    Tensor cpu() const { return to(TensorOptions().device(DeviceType::CPU)); }
    Tensor cuda() const { return to(TensorOptions().device(DeviceType::CUDA)); }
    Tensor toType(ScalarType t) const { return to(TensorOptions().dtype(t)); }
    Tensor view(IntArrayRef size) const { return shape(GRADER_PROXY_VIEW, size); }
    Tensor reshape(IntArrayRef shape_) const { return shape(GRADER_PROXY_RESHAPE, shape_); }
    Tensor permute(IntArrayRef dims) const { return shape(GRADER_PROXY_PERMUTE, dims); }
    Tensor transpose(int64_t dim0, int64_t dim1) const {
        Tensor out;
        grader_proxy_tensor_transpose(&out, this, dim0, dim1);
        return out;
    }
    Tensor clone() const { Tensor out; grader_proxy_tensor_clone(&out, this); return out; }
    Tensor& copy_(const Tensor& src, bool non_blocking = false) {
        grader_proxy_tensor_copy_(this, &src, non_blocking);
        return *this;
    }

#ifdef GRADER_PROXY_HAS_ACCESSORS
    // As TensorBase's: the dimension checked, the data pointer checked for the dtype.
    template <typename T, size_t N>
    TensorAccessor<T, N> accessor() const& {
        static_assert(N > 0, "accessor is used for indexing tensor, for scalars use *data_ptr<T>()");
        TORCH_CHECK(dim() == N, "TensorAccessor expected ", N, " dims but tensor has ", dim());
        return TensorAccessor<T, N>(typed_data<T>(), sizes().data(), strides().data());
    }
    template <typename T, size_t N>
    TensorAccessor<T, N> accessor() && = delete;

    template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
    GenericPackedTensorAccessor<T, N, PtrTraits, index_t> generic_packed_accessor() const& {
        static_assert(N > 0, "accessor is used for indexing tensor, for scalars use *data_ptr<T>()");
        TORCH_CHECK(dim() == N, "TensorAccessor expected ", N, " dims but tensor has ", dim());
        return GenericPackedTensorAccessor<T, N, PtrTraits, index_t>(
            static_cast<typename PtrTraits<T>::PtrType>(typed_data<T>()), sizes().data(), strides().data());
    }
    template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
    GenericPackedTensorAccessor<T, N> generic_packed_accessor() && = delete;

    template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
    PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() const& {
        TORCH_CHECK(numel() <= static_cast<int64_t>(std::numeric_limits<int32_t>::max()),
                    "numel needs to be smaller than int32_t max; otherwise, please use packed_accessor64");
        return generic_packed_accessor<T, N, PtrTraits, int32_t>();
    }
    template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
    PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() && = delete;

    template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
    PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() const& {
        return generic_packed_accessor<T, N, PtrTraits, int64_t>();
    }
    template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
    PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() && = delete;

    template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
    [[deprecated("packed_accessor is deprecated, use packed_accessor32 or packed_accessor64 instead")]]
    GenericPackedTensorAccessor<T, N, PtrTraits, index_t> packed_accessor() const& {
        return generic_packed_accessor<T, N, PtrTraits, index_t>();
    }
    template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
    GenericPackedTensorAccessor<T, N, PtrTraits, index_t> packed_accessor() && = delete;
#endif

 private:
    template <typename T>
    T* typed_data() const {   // const T reads through const_data_ptr, as in TensorBase
        return const_cast<T*>(data_ptr<std::remove_const_t<T>>());
    }
    Tensor shape(int kind, IntArrayRef ints) const {
        Tensor out;
        grader_proxy_tensor_shape(&out, this, kind, ints.data(), ints.size());
        return out;
    }
    void* impl_;   // a c10::TensorImpl*: created, copied and released only by grader/build/dispatch.cpp
};

inline std::optional<Device> device_of(const Tensor& t) {
    return t.defined() ? std::optional<Device>(t.device()) : std::nullopt;
}
}  // namespace at
