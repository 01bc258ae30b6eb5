// The C interface between the proxy <torch/extension.h> (grader/prelude_cuda/) and
// the grader's binding module (grader/dispatch.cpp), which implements every function
// with the real ATen. A tensor is passed as the address of an object with the layout
// of at::Tensor (one c10::TensorImpl pointer); the binding module constructs, copies
// and destroys it in place with the real at::Tensor. Plain C, so both sides agree on
// it whatever headers each was compiled with.
#pragma once
#include <stddef.h>
#include <stdint.h>

struct GraderProxyOptions {       // which of dtype / device a TensorOptions sets
    int8_t has_dtype, dtype;      // dtype: a c10::ScalarType value
    int8_t has_device, device_type;
    int8_t device_index;          // -1: the current device
};

enum {                            // grader_proxy_factory's kinds
    GRADER_PROXY_EMPTY, GRADER_PROXY_ZEROS, GRADER_PROXY_ONES, GRADER_PROXY_FULL,
    GRADER_PROXY_EMPTY_LIKE, GRADER_PROXY_ZEROS_LIKE, GRADER_PROXY_ONES_LIKE, GRADER_PROXY_FULL_LIKE,
};

#ifdef __cplusplus
extern "C" {
#endif
void grader_proxy_tensor_undefined(void* self);
void grader_proxy_tensor_copy(void* self, const void* other);
void grader_proxy_tensor_move(void* self, void* other);
void grader_proxy_tensor_destroy(void* self);
void grader_proxy_tensor_assign(void* self, const void* other);
void grader_proxy_tensor_move_assign(void* self, void* other);
bool grader_proxy_tensor_defined(const void* self);
int64_t grader_proxy_tensor_dim(const void* self);
int64_t grader_proxy_tensor_size(const void* self, int64_t dim);
int64_t grader_proxy_tensor_stride(const void* self, int64_t dim);
const int64_t* grader_proxy_tensor_sizes(const void* self, size_t* n);
const int64_t* grader_proxy_tensor_strides(const void* self, size_t* n);
int64_t grader_proxy_tensor_numel(const void* self);
int grader_proxy_tensor_scalar_type(const void* self);
void grader_proxy_tensor_device(const void* self, int* type, int* index);
bool grader_proxy_tensor_is_contiguous(const void* self);
void* grader_proxy_tensor_data_ptr(const void* self, int scalar_type);   // -1: any type
void grader_proxy_tensor_contiguous(void* out, const void* self);
void grader_proxy_tensor_zero_(void* self);
void grader_proxy_factory(void* out, int kind, const int64_t* sizes, size_t n, const void* like,
                          double fill, const struct GraderProxyOptions* options);
void* grader_proxy_current_stream(int* device_index);                    // in: -1 = current; out: the index
[[noreturn]] void grader_proxy_check_fail(const char* func, const char* file, int line, const char* msg);
[[noreturn]] void grader_proxy_not_implemented(const char* func, const char* file, int line, const char* msg);
#ifdef __cplusplus
}
#endif
