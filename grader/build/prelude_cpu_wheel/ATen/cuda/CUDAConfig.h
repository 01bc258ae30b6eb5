#pragma once
#define AT_CUDNN_ENABLED() 1
#define AT_ROCM_ENABLED() 0
#define AT_MAGMA_ENABLED() 0
#define NVCC_FLAGS_EXTRA ""
