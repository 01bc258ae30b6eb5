// The proxy's <ATen/cuda/Exceptions.h>: AT_CUDA_CHECK.
// Declared in grader_proxy/ (see torch/extension.h here for how the proxy works).
#pragma once
#include "../../grader_proxy/aten_cuda_exceptions.h"
