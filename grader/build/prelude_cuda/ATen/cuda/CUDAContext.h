// The proxy's <ATen/cuda/CUDAContext.h>: device properties, the current stream, AT_CUDA_CHECK.
// Declared in grader_proxy/ (see torch/extension.h here for how the proxy works).
#pragma once
#include "../../grader_proxy/cuda_context.h"
