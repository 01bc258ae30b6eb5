// The proxy's ATen/cuda/Exceptions.h: AT_CUDA_CHECK (the cuBLAS/cuSPARSE checks are not here).
#pragma once
#include "cuda_exception.h"

#ifdef __CUDACC__
#define AT_CUDA_CHECK(EXPR) C10_CUDA_CHECK(EXPR)
#endif
