// The C interface between the proxy <torch/extension.h> (grader/build/prelude_cuda/) and
// the grader's binding module (grader/build/dispatch.cpp), which implements every function
// with the real ATen. A tensor is passed as the address of an object with the layout
// of at::Tensor (one c10::TensorImpl pointer); the binding module constructs, copies
// and destroys it in place with the real at::Tensor. Plain C, so both sides agree on
// it whatever headers each was compiled with.
#pragma once
#include <stddef.h>
#include <stdint.h>

struct GraderProxyOptions {       // which of dtype / device / layout / requires_grad a TensorOptions sets
    int8_t has_dtype, dtype;      // dtype: a c10::ScalarType value
    int8_t has_device, device_type;
    int8_t device_index;          // -1: the current device
    int8_t has_layout, layout;    // layout: a c10::Layout value
    int8_t has_requires_grad, requires_grad;
};

enum {                            // GraderProxyScalar's kinds (c10::Scalar keeps the same three)
    GRADER_PROXY_SCALAR_DOUBLE, GRADER_PROXY_SCALAR_LONG, GRADER_PROXY_SCALAR_BOOL,
};
struct GraderProxyScalar {        // a c10::Scalar: integers stay exact
    int8_t kind;
    double d;
    int64_t i;
};

enum {                            // grader_proxy_factory's kinds
    GRADER_PROXY_EMPTY, GRADER_PROXY_ZEROS, GRADER_PROXY_ONES, GRADER_PROXY_FULL,
    GRADER_PROXY_EMPTY_LIKE, GRADER_PROXY_ZEROS_LIKE, GRADER_PROXY_ONES_LIKE, GRADER_PROXY_FULL_LIKE,
};

enum {                            // grader_proxy_tensor_shape's kinds: views and copies by a list of ints
    GRADER_PROXY_VIEW, GRADER_PROXY_RESHAPE, GRADER_PROXY_PERMUTE,
};

enum {                            // grader_proxy_fail's kinds: the c10 error class raised
    GRADER_PROXY_ERROR, GRADER_PROXY_INDEX_ERROR, GRADER_PROXY_VALUE_ERROR, GRADER_PROXY_TYPE_ERROR,
    GRADER_PROXY_NOT_IMPLEMENTED,
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
void grader_proxy_tensor_fill_(void* self, const struct GraderProxyScalar* value);
void grader_proxy_tensor_to(void* out, const void* self, const struct GraderProxyOptions* options,
                            bool non_blocking, bool copy);
void grader_proxy_tensor_shape(void* out, const void* self, int kind, const int64_t* ints, size_t n);
void grader_proxy_tensor_transpose(void* out, const void* self, int64_t dim0, int64_t dim1);
void grader_proxy_tensor_clone(void* out, const void* self);
void grader_proxy_tensor_copy_(void* self, const void* src, bool non_blocking);
void grader_proxy_factory(void* out, int kind, const int64_t* sizes, size_t n, const void* like,
                          const struct GraderProxyScalar* fill, const struct GraderProxyOptions* options);
const char* grader_proxy_scalar_type_name(int scalar_type);            // c10::toString
// how torch prints options / a tensor (valid until the thread's next call of the same function)
const char* grader_proxy_options_str(const struct GraderProxyOptions* options);
const char* grader_proxy_tensor_str(const void* self);
void* grader_proxy_current_stream(int* device_index);                    // in: -1 = current; out: the index
void* grader_proxy_default_stream(int* device_index);
[[noreturn]] void grader_proxy_fail(int kind, const char* func, const char* file, int line, const char* msg);
void grader_proxy_warn(const char* func, const char* file, int line, const char* msg);
#ifdef __cplusplus
}
#endif
