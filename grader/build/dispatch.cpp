// The grader's one binding to Python, built once per torch install.
//
// Why: binding each kernel with pybind11 costs ~15-30 s of compile time per build,
// because pybind11 and <torch/extension.h> are huge. Instead every kernel build
// appends one tiny C function, `grader_attention_entry`, that returns a pointer to
// the student's `attention`, with its type checked by the compiler. This module
// loads such a library and calls through that pointer.
#include <torch/extension.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <ATen/record_function.h>
#include <dlfcn.h>
#include <atomic>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

#include <grader_proxy_abi.h>   // grader/build/proxy_abi/: the proxy tensor API (grader/build/prelude_cuda/)
#include <cstdint>
#include <sstream>
#include <string>

using AttentionFn = at::Tensor (*)(at::Tensor, at::Tensor, at::Tensor);

// Load a kernel library and return the address of its `attention` function.
static std::uintptr_t open_kernel(const std::string& path) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    TORCH_CHECK(handle != nullptr, "cannot load ", path, ": ", dlerror());
    auto entry = reinterpret_cast<void* (*)()>(dlsym(handle, "grader_attention_entry"));
    TORCH_CHECK(entry != nullptr, path, " has no grader_attention_entry symbol");
    return reinterpret_cast<std::uintptr_t>(entry());
}

// ---- the operators a kernel's calls dispatch, observed natively -----------------------
// The operation audit's Python dispatch mode (grader/judge/integrity.py OpAudit) costs ~30 us a
// call, too much for a timed call. This counts, with torch's own operator observer (a
// RecordFunction callback, as the profiler uses: ~0.1 us an operator), every operator the
// dispatcher runs on any thread while a kernel call is in progress: call_kernel's, or a
// Python kernel's between kernel_window(true) and kernel_window(false). An operator called
// by name through c10::Dispatcher is counted too; turning the observer off takes symbols
// the link audit holds strict (at::enableRecordFunction, removeCallback, RecordFunction).
static std::atomic<int> g_window{0};            // kernel calls in progress
static std::atomic<long long> g_calls{0};       // kernel calls since the last take_ops
static std::mutex g_ops_mutex;
static std::unordered_map<std::string, long long> g_ops;
static std::atomic<bool> g_observing{false};

static std::unique_ptr<at::ObserverContext> count_op(const at::RecordFunction& fn) {
    if (g_window.load(std::memory_order_relaxed) > 0) {
        std::lock_guard<std::mutex> lock(g_ops_mutex);
        const char* name = fn.name();
        std::string key = name ? name : "(unnamed)";
        if (g_ops.size() < 256 || g_ops.count(key)) ++g_ops[key];
        else ++g_ops["(more operators)"];
    }
    return nullptr;
}

// Register the observer (once per process); true when it is registered.
static bool observe_ops() {
    if (!g_observing.exchange(true))
        at::addGlobalCallback(at::RecordFunctionCallback(count_op).scopes({at::RecordScope::FUNCTION}));
    return at::hasGlobalCallbacks();
}

// (kernel calls, {operator: count}) since the last take, and start again.
static std::pair<long long, std::unordered_map<std::string, long long>> take_ops() {
    std::lock_guard<std::mutex> lock(g_ops_mutex);
    std::unordered_map<std::string, long long> out;
    out.swap(g_ops);
    return {g_calls.exchange(0), out};
}

struct KernelWindow {
    KernelWindow() { g_window.fetch_add(1); g_calls.fetch_add(1); }
    ~KernelWindow() { g_window.fetch_sub(1); }
};

static void kernel_window(bool open) {
    if (open) { g_window.fetch_add(1); g_calls.fetch_add(1); }
    else if (g_window.load() > 0) g_window.fetch_sub(1);
}

// Call `attention(q, k, v)` through the address open_kernel returned.
static at::Tensor call_kernel(std::uintptr_t fn, at::Tensor q, at::Tensor k, at::Tensor v) {
    KernelWindow window;
    return reinterpret_cast<AttentionFn>(fn)(std::move(q), std::move(k), std::move(v));
}

// The same, its operators not counted (the course's reference kernels, timed beside it).
static at::Tensor call_unobserved(std::uintptr_t fn, at::Tensor q, at::Tensor k, at::Tensor v) {
    return reinterpret_cast<AttentionFn>(fn)(std::move(q), std::move(k), std::move(v));
}

// ---- the proxy tensor API (grader/build/prelude_cuda/): each call done by the real ATen ----
// A CUDA source compiled against the proxy headers links to this module and calls
// these functions; `self` is an object with at::Tensor's layout, built in place here.
static_assert(sizeof(at::Tensor) == sizeof(void*), "the proxy tensor is one TensorImpl pointer");
static_assert(static_cast<int>(c10::ScalarType::Float) == 6 && static_cast<int>(c10::ScalarType::Bool) == 11 &&
              static_cast<int>(c10::ScalarType::BFloat16) == 15 && static_cast<int>(c10::ScalarType::QInt32) == 14 &&
              static_cast<int>(c10::DeviceType::CUDA) == 1 && static_cast<int>(c10::Layout::Strided) == 0 &&
              static_cast<int>(c10::Layout::Jagged) == 7,
              "the proxy's ScalarType/DeviceType/Layout numbering must be c10's");

#define GRADER_EXPORT extern "C" __attribute__((visibility("default")))
static at::Tensor& T(void* p) { return *static_cast<at::Tensor*>(p); }
static const at::Tensor& T(const void* p) { return *static_cast<const at::Tensor*>(p); }

GRADER_EXPORT void grader_proxy_tensor_undefined(void* self) { new (self) at::Tensor(); }
GRADER_EXPORT void grader_proxy_tensor_copy(void* self, const void* other) { new (self) at::Tensor(T(other)); }
GRADER_EXPORT void grader_proxy_tensor_move(void* self, void* other) { new (self) at::Tensor(std::move(T(other))); }
GRADER_EXPORT void grader_proxy_tensor_destroy(void* self) { T(self).~Tensor(); }
GRADER_EXPORT void grader_proxy_tensor_assign(void* self, const void* other) { T(self) = T(other); }
GRADER_EXPORT void grader_proxy_tensor_move_assign(void* self, void* other) { T(self) = std::move(T(other)); }
GRADER_EXPORT bool grader_proxy_tensor_defined(const void* self) { return T(self).defined(); }
GRADER_EXPORT int64_t grader_proxy_tensor_dim(const void* self) { return T(self).dim(); }
GRADER_EXPORT int64_t grader_proxy_tensor_size(const void* self, int64_t d) { return T(self).size(d); }
GRADER_EXPORT int64_t grader_proxy_tensor_stride(const void* self, int64_t d) { return T(self).stride(d); }
GRADER_EXPORT const int64_t* grader_proxy_tensor_sizes(const void* self, size_t* n) {
    auto s = T(self).sizes();
    *n = s.size();
    return s.data();
}
GRADER_EXPORT const int64_t* grader_proxy_tensor_strides(const void* self, size_t* n) {
    auto s = T(self).strides();
    *n = s.size();
    return s.data();
}
GRADER_EXPORT int64_t grader_proxy_tensor_numel(const void* self) { return T(self).numel(); }
GRADER_EXPORT int grader_proxy_tensor_scalar_type(const void* self) { return static_cast<int>(T(self).scalar_type()); }
GRADER_EXPORT void grader_proxy_tensor_device(const void* self, int* type, int* index) {
    const auto d = T(self).device();
    *type = static_cast<int>(d.type());
    *index = d.index();
}
GRADER_EXPORT bool grader_proxy_tensor_is_contiguous(const void* self) { return T(self).is_contiguous(); }
GRADER_EXPORT void* grader_proxy_tensor_data_ptr(const void* self, int scalar_type) {
    const at::Tensor& t = T(self);
    switch (scalar_type) {      // the typed accessors check the dtype and raise as torch does
        case -1: return t.data_ptr();
        case static_cast<int>(at::kFloat): return t.data_ptr<float>();
        case static_cast<int>(at::kDouble): return t.data_ptr<double>();
        case static_cast<int>(at::kInt): return t.data_ptr<int32_t>();
        case static_cast<int>(at::kLong): return t.data_ptr<int64_t>();
        case static_cast<int>(at::kShort): return t.data_ptr<int16_t>();
        case static_cast<int>(at::kChar): return t.data_ptr<int8_t>();
        case static_cast<int>(at::kByte): return t.data_ptr<uint8_t>();
        case static_cast<int>(at::kBool): return t.data_ptr<bool>();
        case static_cast<int>(at::kHalf): return t.data_ptr<at::Half>();
        case static_cast<int>(at::kBFloat16): return t.data_ptr<at::BFloat16>();
    }
    TORCH_CHECK(false, "data_ptr: unsupported scalar type ", scalar_type);
    return nullptr;
}
GRADER_EXPORT void grader_proxy_tensor_contiguous(void* out, const void* self) { T(out) = T(self).contiguous(); }
GRADER_EXPORT void grader_proxy_tensor_zero_(void* self) { T(self).zero_(); }

static at::Scalar S(const GraderProxyScalar* s) {
    switch (s->kind) {
        case GRADER_PROXY_SCALAR_LONG: return at::Scalar(s->i);
        case GRADER_PROXY_SCALAR_BOOL: return at::Scalar(s->i != 0);
    }
    return at::Scalar(s->d);
}
static at::TensorOptions O(const GraderProxyOptions* o) {
    at::TensorOptions options;
    if (o->has_dtype) options = options.dtype(static_cast<c10::ScalarType>(o->dtype));
    if (o->has_device) options = options.device(static_cast<c10::DeviceType>(o->device_type), o->device_index);
    if (o->has_layout) options = options.layout(static_cast<c10::Layout>(o->layout));
    if (o->has_requires_grad) options = options.requires_grad(o->requires_grad);
    return options;
}

GRADER_EXPORT void grader_proxy_tensor_fill_(void* self, const GraderProxyScalar* value) { T(self).fill_(S(value)); }
GRADER_EXPORT void grader_proxy_tensor_to(void* out, const void* self, const GraderProxyOptions* o, bool non_blocking,
                                          bool copy) {
    T(out) = T(self).to(O(o), non_blocking, copy);
}
GRADER_EXPORT void grader_proxy_tensor_shape(void* out, const void* self, int kind, const int64_t* ints, size_t n) {
    const at::IntArrayRef list(ints, n);
    switch (kind) {
        case GRADER_PROXY_VIEW: T(out) = T(self).view(list); return;
        case GRADER_PROXY_RESHAPE: T(out) = T(self).reshape(list); return;
        case GRADER_PROXY_PERMUTE: T(out) = T(self).permute(list); return;
    }
    TORCH_CHECK(false, "unknown shape operation ", kind);
}
GRADER_EXPORT void grader_proxy_tensor_transpose(void* out, const void* self, int64_t dim0, int64_t dim1) {
    T(out) = T(self).transpose(dim0, dim1);
}
GRADER_EXPORT void grader_proxy_tensor_clone(void* out, const void* self) { T(out) = T(self).clone(); }
GRADER_EXPORT void grader_proxy_tensor_copy_(void* self, const void* src, bool non_blocking) {
    T(self).copy_(T(src), non_blocking);
}
// torch:: factories (they honour requires_grad; at:: ones are the same for everything else)
GRADER_EXPORT void grader_proxy_factory(void* out, int kind, const int64_t* sizes, size_t n, const void* like,
                                        const GraderProxyScalar* fill, const GraderProxyOptions* o) {
    const at::TensorOptions options = O(o);
    const at::IntArrayRef size(sizes, n);
    switch (kind) {
        case GRADER_PROXY_EMPTY: T(out) = torch::empty(size, options); return;
        case GRADER_PROXY_ZEROS: T(out) = torch::zeros(size, options); return;
        case GRADER_PROXY_ONES: T(out) = torch::ones(size, options); return;
        case GRADER_PROXY_FULL: T(out) = torch::full(size, S(fill), options); return;
        case GRADER_PROXY_EMPTY_LIKE: T(out) = torch::empty_like(T(like), options); return;
        case GRADER_PROXY_ZEROS_LIKE: T(out) = torch::zeros_like(T(like), options); return;
        case GRADER_PROXY_ONES_LIKE: T(out) = torch::ones_like(T(like), options); return;
        case GRADER_PROXY_FULL_LIKE: T(out) = torch::full_like(T(like), S(fill), options); return;
    }
    TORCH_CHECK(false, "unknown factory ", kind);
}
GRADER_EXPORT const char* grader_proxy_options_str(const GraderProxyOptions* o) {
    thread_local std::string text;
    std::ostringstream ss;
    ss << O(o);
    text = ss.str();
    return text.c_str();
}
GRADER_EXPORT const char* grader_proxy_tensor_str(const void* self) {
    thread_local std::string text;
    std::ostringstream ss;
    ss << T(self);
    text = ss.str();
    return text.c_str();
}
GRADER_EXPORT const char* grader_proxy_scalar_type_name(int scalar_type) {
    return c10::toString(static_cast<c10::ScalarType>(scalar_type));
}
// The streams torch's CUDA work is queued on, through c10's device-guard interface
// (this module is built without the CUDA headers, so that it builds on any machine).
static c10::Device cuda_device(int* device_index, const c10::impl::DeviceGuardImplInterface* impl) {
    const c10::Device device = *device_index < 0 ? impl->getDevice()
                                                 : c10::Device(c10::DeviceType::CUDA, *device_index);
    *device_index = device.index();
    return device;
}
GRADER_EXPORT void* grader_proxy_current_stream(int* device_index) {
    const auto* impl = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
    return impl->getStream(cuda_device(device_index, impl)).native_handle();
}
GRADER_EXPORT void* grader_proxy_default_stream(int* device_index) {
    const auto* impl = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
    return impl->getDefaultStream(cuda_device(device_index, impl)).native_handle();
}
GRADER_EXPORT void grader_proxy_fail(int kind, const char* func, const char* file, int line, const char* msg) {
    const c10::SourceLocation where{func, file, static_cast<uint32_t>(line)};
    switch (kind) {
        case GRADER_PROXY_INDEX_ERROR: throw c10::IndexError(where, std::string(msg));
        case GRADER_PROXY_VALUE_ERROR: throw c10::ValueError(where, std::string(msg));
        case GRADER_PROXY_TYPE_ERROR: throw c10::TypeError(where, std::string(msg));
        case GRADER_PROXY_NOT_IMPLEMENTED: throw c10::NotImplementedError(where, std::string(msg));
    }
    c10::detail::torchCheckFail(func, file, static_cast<uint32_t>(line), std::string(msg));
}
GRADER_EXPORT void grader_proxy_warn(const char* func, const char* file, int line, const char* msg) {
    c10::warn(c10::Warning(c10::UserWarning(), {func, file, static_cast<uint32_t>(line)}, std::string(msg), false));
}

// ---- NaN poison for the CPU check stage ---------------------------------------------
// While on, every CPU allocation torch makes (the kernel's empty_like(q) included) is
// filled with 0xFF bytes: the float NaN 0xFFFFFFFF, which no arithmetic produces, so the
// judge counts exactly the output elements a kernel never wrote. It wraps the allocator
// torch had (its deleter frees what it allocated), installed at the first use.
// The judge's differential poison re-runs a failed config with other bytes (0x00, 0x41):
// an output that changes with them read memory it never wrote.
struct PoisonAllocator final : c10::Allocator {
    c10::Allocator* base = nullptr;
    std::atomic<bool> on{false};
    std::atomic<int> byte{0xFF};
    c10::DataPtr allocate(size_t n) override {
        auto p = base->allocate(n);
        if (on.load(std::memory_order_relaxed) && n && p.get())
            std::memset(p.get(), byte.load(std::memory_order_relaxed), n);
        return p;
    }
    c10::DeleterFnPtr raw_deleter() const override { return base->raw_deleter(); }
    void copy_data(void* dest, const void* src, std::size_t count) const override { base->copy_data(dest, src, count); }
};

static void set_cpu_poison(bool on, int byte) {
    static PoisonAllocator poison;
    if (poison.base == nullptr) {
        poison.base = c10::GetCPUAllocator();
        c10::SetCPUAllocator(&poison, /*priority=*/100);
    }
    poison.byte.store(byte & 0xFF);
    poison.on.store(on);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("set_cpu_poison", &set_cpu_poison, "fill new CPU allocations with this byte (0xFF: NaN)",
          pybind11::arg("on"), pybind11::arg("byte") = 0xFF);
    m.def("open_kernel", torch::wrap_pybind_function(open_kernel), "address of attention()");
    m.def("call_kernel", torch::wrap_pybind_function(call_kernel), "attention(q, k, v)");
    m.def("call_unobserved", torch::wrap_pybind_function(call_unobserved), "attention(q, k, v), operators not counted");
    m.def("observe_ops", &observe_ops, "count the operators kernel calls dispatch (RecordFunction)");
    m.def("take_ops", &take_ops, "(kernel calls, {operator: count}) since the last take");
    m.def("kernel_window", &kernel_window, "a Python kernel's call begins (true) or ends (false)",
          pybind11::arg("open"));
}
