// The proxy's c10 (see ../torch/extension.h for how the proxy headers work): scalar
// types, devices, array references, tensor options, scalars and the TORCH_CHECK family,
// declared small. Every message and error class comes from torch itself, through the
// binding module (grader/build/dispatch.cpp).
#pragma once

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif
#include <c10/macros/Macros.h>   // torch's own (cheap): C10_HOST_DEVICE, C10_WARP_SIZE, at -> c10 aliases

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <grader_proxy_abi.h>   // the C interface to grader/build/dispatch.cpp (grader/build/proxy_abi/)

// c10::Half and c10::BFloat16 are torch's own header-only types. The grader compiles
// them in (-DGRADER_PROXY_HALF) only for a source that names them or AT_DISPATCH: they
// add ~0.5 s to every nvcc pass.
#if defined(GRADER_PROXY_HALF) && __has_include(<torch/headeronly/util/Half.h>) && \
    __has_include(<torch/headeronly/util/BFloat16.h>)
#include <torch/headeronly/util/BFloat16.h>
#include <torch/headeronly/util/Half.h>
#define GRADER_PROXY_HAS_HALF 1
#endif

namespace c10 {

// A message's parts appended as c10::str streams them (an ostream's defaults: %g with 6
// digits, bools as 1/0, chars as characters), but numbers and pointers through snprintf, never
// through a stream's locale: on the GPU image (an H100, 2026-11-27) a TORCH_CHECK that
// streamed an int or a float crashed the process with SIGSEGV where a message of strings
// raised; its g++ (/opt/gcc) had only a static libstdc++, copied into every library beside the
// process's shared one (every build now links the shared one: grader/build/compile.py
// `process_libstdcxx`, which made a student's own std::cout of numbers work). Other types (a tensor,
// its options) are streamed as before, each of them printed from a string.
namespace detail {
inline void append(std::string& s, const char* x) { if (x) s += x; }
inline void append(std::string& s, const std::string& x) { s += x; }
inline void append(std::string& s, char x) { s += x; }
inline void append(std::string& s, signed char x) { s += static_cast<char>(x); }
inline void append(std::string& s, unsigned char x) { s += static_cast<char>(x); }
inline void append(std::string& s, bool x) { s += x ? '1' : '0'; }
template <typename T>
typename std::enable_if<std::is_arithmetic<T>::value>::type append(std::string& s, T x) {
    char buf[64];
    if (std::is_floating_point<T>::value)
        std::snprintf(buf, sizeof buf, "%.6Lg", static_cast<long double>(x));
    else if (std::is_signed<T>::value)
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x));
    else
        std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(x));
    s += buf;
}
#ifdef GRADER_PROXY_HAS_HALF
inline void append(std::string& s, Half x) { append(s, static_cast<float>(x)); }
inline void append(std::string& s, BFloat16 x) { append(s, static_cast<float>(x)); }
#endif
inline void append(std::string& s, std::nullptr_t) { s += "nullptr"; }
template <typename T>             // an object's address: 0x..., or 0 (as an ostream prints them)
typename std::enable_if<std::is_pointer<T>::value && !std::is_convertible<T, const char*>::value &&
                        !std::is_function<typename std::remove_pointer<T>::type>::value>::type
append(std::string& s, T x) {
    using U = typename std::remove_cv<typename std::remove_pointer<T>::type>::type;
    const void* p = static_cast<const void*>(const_cast<const U*>(x));
    if (!p) {
        s += '0';
        return;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", p);
    s += buf;
}
template <typename T>             // a function's address: streamed as a bool, 1
typename std::enable_if<std::is_pointer<T>::value &&
                        std::is_function<typename std::remove_pointer<T>::type>::value>::type
append(std::string& s, T x) { s += x ? '1' : '0'; }
template <typename T>             // an unscoped enum (cudaError_t): its number, as it promotes
typename std::enable_if<std::is_enum<T>::value && std::is_convertible<T, long long>::value>::type
append(std::string& s, T x) { append(s, static_cast<typename std::underlying_type<T>::type>(x)); }
template <typename T>
typename std::enable_if<!std::is_arithmetic<T>::value && !std::is_pointer<T>::value &&
                        !(std::is_enum<T>::value && std::is_convertible<T, long long>::value) &&
                        !std::is_null_pointer<T>::value &&
                        !std::is_convertible<const T&, const char*>::value &&
                        !std::is_convertible<const T&, std::string>::value>::type
append(std::string& s, const T& x) {
    std::ostringstream ss;
    ss << x;
    s += ss.str();
}
}  // namespace detail

enum class ScalarType : int8_t {   // the numbering of c10/core/ScalarType.h (checked in dispatch.cpp)
    Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7,
    ComplexHalf = 8, ComplexFloat = 9, ComplexDouble = 10, Bool = 11, QInt8 = 12, QUInt8 = 13,
    QInt32 = 14, BFloat16 = 15,
};
constexpr ScalarType kByte = ScalarType::Byte, kChar = ScalarType::Char, kShort = ScalarType::Short,
                     kInt = ScalarType::Int, kLong = ScalarType::Long, kHalf = ScalarType::Half,
                     kFloat = ScalarType::Float, kDouble = ScalarType::Double, kBool = ScalarType::Bool,
                     kBFloat16 = ScalarType::BFloat16, kComplexHalf = ScalarType::ComplexHalf,
                     kComplexFloat = ScalarType::ComplexFloat, kComplexDouble = ScalarType::ComplexDouble;

// torch's own name for any value (a tensor of another dtype may reach a dispatch's default)
inline const char* toString(ScalarType t) { return grader_proxy_scalar_type_name(static_cast<int>(t)); }
inline std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

inline size_t elementSize(ScalarType t) {
    switch (t) {
        case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool: case ScalarType::QInt8:
        case ScalarType::QUInt8: return 1;
        case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: return 2;
        case ScalarType::Int: case ScalarType::Float: case ScalarType::ComplexHalf: case ScalarType::QInt32: return 4;
        case ScalarType::Long: case ScalarType::Double: case ScalarType::ComplexFloat: return 8;
        case ScalarType::ComplexDouble: return 16;
    }
    return 0;
}

// C++ type <-> ScalarType for the types the proxy knows (c10::CppTypeToScalarType and
// c10::impl::ScalarTypeToCPPTypeT in torch); data_ptr<T>(), dtype<T>() and AT_DISPATCH use them.
template <typename T> struct CppTypeToScalarType;
#define GRADER_PROXY_TYPE_PAIR(cpp_type, name)                                                    \
    template <> struct CppTypeToScalarType<cpp_type> {                                            \
        static constexpr ScalarType value = ScalarType::name;                                     \
    };
GRADER_PROXY_TYPE_PAIR(uint8_t, Byte)
GRADER_PROXY_TYPE_PAIR(int8_t, Char)
GRADER_PROXY_TYPE_PAIR(int16_t, Short)
GRADER_PROXY_TYPE_PAIR(int, Int)
GRADER_PROXY_TYPE_PAIR(int64_t, Long)
GRADER_PROXY_TYPE_PAIR(float, Float)
GRADER_PROXY_TYPE_PAIR(double, Double)
GRADER_PROXY_TYPE_PAIR(bool, Bool)
#ifdef GRADER_PROXY_HAS_HALF
GRADER_PROXY_TYPE_PAIR(c10::Half, Half)
GRADER_PROXY_TYPE_PAIR(c10::BFloat16, BFloat16)
#endif
#undef GRADER_PROXY_TYPE_PAIR

namespace impl {
template <ScalarType N> struct ScalarTypeToCPPType;
#define GRADER_PROXY_CPP_TYPE(cpp_type, name)                                                     \
    template <> struct ScalarTypeToCPPType<ScalarType::name> { using type = cpp_type; };
GRADER_PROXY_CPP_TYPE(uint8_t, Byte)
GRADER_PROXY_CPP_TYPE(int8_t, Char)
GRADER_PROXY_CPP_TYPE(int16_t, Short)
GRADER_PROXY_CPP_TYPE(int, Int)
GRADER_PROXY_CPP_TYPE(int64_t, Long)
GRADER_PROXY_CPP_TYPE(float, Float)
GRADER_PROXY_CPP_TYPE(double, Double)
GRADER_PROXY_CPP_TYPE(bool, Bool)
#ifdef GRADER_PROXY_HAS_HALF
GRADER_PROXY_CPP_TYPE(c10::Half, Half)
GRADER_PROXY_CPP_TYPE(c10::BFloat16, BFloat16)
#endif
#undef GRADER_PROXY_CPP_TYPE
template <ScalarType N>
using ScalarTypeToCPPTypeT = typename ScalarTypeToCPPType<N>::type;
}  // namespace impl

// What `tensor.dtype()` returns: compares with a ScalarType, prints like caffe2::TypeMeta.
class TypeMeta {
 public:
    constexpr TypeMeta(ScalarType t) : t_(t) {}  // NOLINT: implicit, as in c10
    constexpr ScalarType toScalarType() const { return t_; }
    size_t itemsize() const { return elementSize(t_); }
    const char* name() const {
        switch (t_) {
            case ScalarType::Byte: return "unsigned char";
            case ScalarType::Char: return "signed char";
            case ScalarType::Short: return "short int";
            case ScalarType::Int: return "int";
            case ScalarType::Long: return "long int";
            case ScalarType::Float: return "float";
            case ScalarType::Double: return "double";
            case ScalarType::Bool: return "bool";
            case ScalarType::Half: return "c10::Half";
            case ScalarType::BFloat16: return "c10::BFloat16";
            default: return toString(t_);
        }
    }
    template <typename T>
    static constexpr TypeMeta Make() { return TypeMeta(CppTypeToScalarType<T>::value); }
    friend constexpr bool operator==(TypeMeta a, TypeMeta b) { return a.t_ == b.t_; }
    friend constexpr bool operator!=(TypeMeta a, TypeMeta b) { return a.t_ != b.t_; }
    friend constexpr bool operator==(TypeMeta a, ScalarType b) { return a.t_ == b; }
    friend constexpr bool operator!=(TypeMeta a, ScalarType b) { return a.t_ != b; }
    friend constexpr bool operator==(ScalarType a, TypeMeta b) { return a == b.t_; }
    friend constexpr bool operator!=(ScalarType a, TypeMeta b) { return a != b.t_; }
    friend std::ostream& operator<<(std::ostream& os, TypeMeta m) { return os << m.name(); }

 private:
    ScalarType t_;
};

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr DeviceType kCPU = DeviceType::CPU, kCUDA = DeviceType::CUDA;
using DeviceIndex = int8_t;

class Device {
 public:
    Device(DeviceType type, DeviceIndex index = -1) : type_(type), index_(index) {}  // NOLINT: implicit
    DeviceType type() const { return type_; }
    DeviceIndex index() const { return index_; }
    bool has_index() const { return index_ != -1; }
    bool is_cuda() const { return type_ == DeviceType::CUDA; }
    bool is_cpu() const { return type_ == DeviceType::CPU; }
    std::string str() const {
        std::string s = is_cuda() ? "cuda" : "cpu";
        return has_index() ? s + ":" + std::to_string(static_cast<int>(index_)) : s;
    }
    friend bool operator==(const Device& a, const Device& b) { return a.type_ == b.type_ && a.index_ == b.index_; }
    friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
    friend std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

 private:
    DeviceType type_;
    DeviceIndex index_;
};

enum class Layout : int8_t { Strided = 0, Sparse, SparseCsr, Mkldnn, SparseCsc, SparseBsr, SparseBsc, Jagged };
constexpr Layout kStrided = Layout::Strided, kSparse = Layout::Sparse;

// A view of contiguous values it does not own (c10::ArrayRef): tensor sizes and strides.
template <typename T>
class ArrayRef {
 public:
    using value_type = T;
    using iterator = const T*;
    using const_iterator = const T*;
    using size_type = size_t;
    constexpr ArrayRef() : data_(nullptr), size_(0) {}
    constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}                 // NOLINT: implicit
    constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
    ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}    // NOLINT: implicit
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"   // as in c10: the list outlives the call
    constexpr ArrayRef(const std::initializer_list<T>& l)                        // NOLINT: implicit
        : data_(l.begin() == l.end() ? nullptr : l.begin()), size_(l.size()) {}
#pragma GCC diagnostic pop
    constexpr const T* begin() const { return data_; }
    constexpr const T* end() const { return data_ + size_; }
    constexpr const T* data() const { return data_; }
    constexpr size_t size() const { return size_; }
    constexpr bool empty() const { return size_ == 0; }
    constexpr const T& operator[](size_t i) const { return data_[i]; }
    const T& front() const { return data_[0]; }
    const T& back() const { return data_[size_ - 1]; }
    std::vector<T> vec() const { return std::vector<T>(data_, data_ + size_); }
    bool equals(ArrayRef other) const { return size_ == other.size_ && std::equal(begin(), end(), other.begin()); }
    friend bool operator==(ArrayRef a, ArrayRef b) { return a.equals(b); }
    friend bool operator!=(ArrayRef a, ArrayRef b) { return !a.equals(b); }
    friend bool operator==(ArrayRef a, const std::vector<T>& b) { return a.equals(b); }
    friend bool operator!=(ArrayRef a, const std::vector<T>& b) { return !a.equals(b); }
    friend std::ostream& operator<<(std::ostream& os, ArrayRef a) {   // "[1, 8, 128, 64]", as c10 prints
        std::string s = "[";
        for (size_t i = 0; i < a.size_; ++i) {
            if (i) s += ", ";
            detail::append(s, a.data_[i]);
        }
        return os << s << "]";
    }

 private:
    const T* data_;
    size_t size_;
};
using IntArrayRef = ArrayRef<int64_t>;

// A number handed to a factory or fill (c10::Scalar): integers stay exact.
class Scalar {
 public:
    Scalar() : Scalar(int64_t{0}) {}
    template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
    Scalar(T v) {   // NOLINT: implicit, as in c10
        if constexpr (std::is_same_v<T, bool>) {
            abi_.kind = GRADER_PROXY_SCALAR_BOOL;
            abi_.i = v;
        } else if constexpr (std::is_integral_v<T>) {
            abi_.kind = GRADER_PROXY_SCALAR_LONG;
            abi_.i = static_cast<int64_t>(v);
        } else {
            abi_.kind = GRADER_PROXY_SCALAR_DOUBLE;
            abi_.d = static_cast<double>(v);
        }
    }
#ifdef GRADER_PROXY_HAS_HALF
    Scalar(Half v) : Scalar(static_cast<double>(static_cast<float>(v))) {}           // NOLINT: implicit
    Scalar(BFloat16 v) : Scalar(static_cast<double>(static_cast<float>(v))) {}       // NOLINT: implicit
#endif
    bool isFloatingPoint() const { return abi_.kind == GRADER_PROXY_SCALAR_DOUBLE; }
    bool isIntegral(bool includeBool) const {
        return abi_.kind == GRADER_PROXY_SCALAR_LONG || (includeBool && isBoolean());
    }
    bool isBoolean() const { return abi_.kind == GRADER_PROXY_SCALAR_BOOL; }
    template <typename T>
    T to() const { return isFloatingPoint() ? static_cast<T>(abi_.d) : static_cast<T>(abi_.i); }
    double toDouble() const { return to<double>(); }
    float toFloat() const { return to<float>(); }
    int64_t toLong() const { return to<int64_t>(); }
    int toInt() const { return to<int>(); }
    bool toBool() const { return to<bool>(); }
    const GraderProxyScalar* abi() const { return &abi_; }

 private:
    GraderProxyScalar abi_{};
};

// dtype, device, layout and requires_grad for a factory function (c10::TensorOptions).
class TensorOptions {
 public:
    TensorOptions() = default;
    TensorOptions(ScalarType t) { abi_.has_dtype = 1; abi_.dtype = static_cast<int8_t>(t); }    // NOLINT
    TensorOptions(TypeMeta t) : TensorOptions(t.toScalarType()) {}                               // NOLINT
    TensorOptions(Device d) { set_device(d); }                                                   // NOLINT
    TensorOptions(DeviceType t) { set_device(Device(t)); }                                       // NOLINT
    TensorOptions(Layout l) { abi_.has_layout = 1; abi_.layout = static_cast<int8_t>(l); }       // NOLINT
    TensorOptions dtype(ScalarType t) const { TensorOptions o = *this; o.abi_.has_dtype = 1; o.abi_.dtype = static_cast<int8_t>(t); return o; }
    TensorOptions dtype(TypeMeta t) const { return dtype(t.toScalarType()); }
    template <typename T>
    TensorOptions dtype() const { return dtype(CppTypeToScalarType<T>::value); }
    TensorOptions device(Device d) const { TensorOptions o = *this; o.set_device(d); return o; }
    TensorOptions device(DeviceType t, DeviceIndex i = -1) const { return device(Device(t, i)); }
    TensorOptions device_index(DeviceIndex i) const { return device(Device(DeviceType::CUDA, i)); }
    TensorOptions layout(Layout l) const { TensorOptions o = *this; o.abi_.has_layout = 1; o.abi_.layout = static_cast<int8_t>(l); return o; }
    TensorOptions requires_grad(bool r) const { TensorOptions o = *this; o.abi_.has_requires_grad = 1; o.abi_.requires_grad = r; return o; }
    bool has_dtype() const { return abi_.has_dtype; }
    bool has_device() const { return abi_.has_device; }
    TypeMeta dtype() const { return abi_.has_dtype ? static_cast<ScalarType>(abi_.dtype) : ScalarType::Float; }
    Device device() const { return abi_.has_device ? Device(static_cast<DeviceType>(abi_.device_type), abi_.device_index) : Device(DeviceType::CPU); }
    Layout layout() const { return abi_.has_layout ? static_cast<Layout>(abi_.layout) : Layout::Strided; }
    bool requires_grad() const { return abi_.has_requires_grad && abi_.requires_grad; }
    const GraderProxyOptions* abi() const { return &abi_; }
    friend std::ostream& operator<<(std::ostream& os, const TensorOptions& o) {   // as c10 prints them
        return os << grader_proxy_options_str(o.abi());
    }

 private:
    void set_device(Device d) {
        abi_.has_device = 1;
        abi_.device_type = static_cast<int8_t>(d.type());
        abi_.device_index = d.index();
    }
    GraderProxyOptions abi_{};
};
inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions dtype(TypeMeta t) { return TensorOptions().dtype(t); }
template <typename T>
inline TensorOptions dtype() { return TensorOptions().dtype<T>(); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions layout(Layout l) { return TensorOptions().layout(l); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

// The message of a failed check, built like c10::str: every argument in order (`append`).
namespace detail {
inline std::string str() { return std::string(); }
template <typename... Args>
std::string str(const Args&... args) {
    std::string s;
    (append(s, args), ...);
    return s;
}
inline std::string check_msg(const char* fallback) { return fallback; }
template <typename... Args>
std::string check_msg(const char*, const Args&... args) { return str(args...); }
}  // namespace detail
using detail::str;

}  // namespace c10

// ---- checks (c10/util/Exception.h): raise torch's own error classes -------------------
#define GRADER_PROXY_CHECK(KIND, cond, ...)                                                      \
    do {                                                                                         \
        if (__builtin_expect(!(cond), 0))                                                        \
            ::grader_proxy_fail(KIND, __func__, __FILE__, __LINE__,                              \
                ::c10::detail::check_msg("Expected " #cond " to be true, but got false.", ##__VA_ARGS__).c_str()); \
    } while (0)
#define TORCH_CHECK(cond, ...) GRADER_PROXY_CHECK(GRADER_PROXY_ERROR, cond, ##__VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) GRADER_PROXY_CHECK(GRADER_PROXY_INDEX_ERROR, cond, ##__VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) GRADER_PROXY_CHECK(GRADER_PROXY_VALUE_ERROR, cond, ##__VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) GRADER_PROXY_CHECK(GRADER_PROXY_TYPE_ERROR, cond, ##__VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) GRADER_PROXY_CHECK(GRADER_PROXY_NOT_IMPLEMENTED, cond, ##__VA_ARGS__)
#define TORCH_INTERNAL_ASSERT(cond, ...)                                                         \
    do {                                                                                         \
        if (__builtin_expect(!(cond), 0))                                                        \
            ::grader_proxy_fail(GRADER_PROXY_ERROR, __func__, __FILE__, __LINE__, ::c10::str(    \
                #cond " INTERNAL ASSERT FAILED at \"", __FILE__, "\":", __LINE__,                \
                ", please report a bug to PyTorch. ", ##__VA_ARGS__).c_str());                   \
    } while (0)
// deprecated in torch, still there (the 2018 extension tutorial's CHECK_CUDA uses AT_ASSERTM)
#define AT_ASSERT(...) TORCH_INTERNAL_ASSERT(__VA_ARGS__)
#define AT_ASSERTM(cond, ...) TORCH_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
#define TORCH_WARN(...) ::grader_proxy_warn(__func__, __FILE__, __LINE__, ::c10::str(__VA_ARGS__).c_str())
