/* Stand-in for cusolverDn.h (see README.md here): the handle type torch's headers name. */
#pragma once
#include <cuda_runtime_api.h>
#include "cusolver_common.h"

struct cusolverDnContext;
typedef struct cusolverDnContext* cusolverDnHandle_t;

#ifdef __cplusplus
extern "C" {
#endif
cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* handle);
cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle);
cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t streamId);
#ifdef __cplusplus
}
#endif
