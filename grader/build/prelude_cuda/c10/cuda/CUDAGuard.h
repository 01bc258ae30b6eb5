// The proxy's <c10/cuda/CUDAGuard.h>: CUDAGuard, OptionalCUDAGuard.
// Declared in grader_proxy/ (see torch/extension.h here for how the proxy works).
#pragma once
#include "../../grader_proxy/cuda_guard.h"
