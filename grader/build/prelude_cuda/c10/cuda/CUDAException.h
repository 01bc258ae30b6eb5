// The proxy's <c10/cuda/CUDAException.h>: C10_CUDA_CHECK.
// Declared in grader_proxy/ (see torch/extension.h here for how the proxy works).
#pragma once
#include "../../grader_proxy/cuda_exception.h"
