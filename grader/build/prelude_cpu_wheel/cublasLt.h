/* Stand-in for cublasLt.h (see README.md here): the handle type torch's headers name. */
#pragma once
#include "cublas_api.h"

struct cublasLtContext;
typedef struct cublasLtContext* cublasLtHandle_t;
struct cublasLtMatmulDescOpaque_t;
typedef struct cublasLtMatmulDescOpaque_t* cublasLtMatmulDesc_t;
struct cublasLtMatrixLayoutOpaque_t;
typedef struct cublasLtMatrixLayoutOpaque_t* cublasLtMatrixLayout_t;
struct cublasLtMatmulPreferenceOpaque_t;
typedef struct cublasLtMatmulPreferenceOpaque_t* cublasLtMatmulPreference_t;

#ifdef __cplusplus
extern "C" {
#endif
cublasStatus_t cublasLtCreate(cublasLtHandle_t* lightHandle);
cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle);
#ifdef __cplusplus
}
#endif
