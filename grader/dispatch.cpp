// The grader's one binding to Python, built once per torch install.
//
// Why: binding each kernel with pybind11 costs ~15-30 s of compile time per build,
// because pybind11 and <torch/extension.h> are huge. Instead every kernel build
// appends one tiny C function, `grader_attention_entry`, that returns a pointer to
// the student's `attention`, with its type checked by the compiler. This module
// loads such a library and calls through that pointer.
#include <torch/extension.h>
#include <dlfcn.h>
#include <cstdint>
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

// Call `attention(q, k, v)` through the address open_kernel returned.
static at::Tensor call_kernel(std::uintptr_t fn, at::Tensor q, at::Tensor k, at::Tensor v) {
    return reinterpret_cast<AttentionFn>(fn)(std::move(q), std::move(k), std::move(v));
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("open_kernel", torch::wrap_pybind_function(open_kernel), "address of attention()");
    m.def("call_kernel", torch::wrap_pybind_function(call_kernel), "attention(q, k, v)");
}
