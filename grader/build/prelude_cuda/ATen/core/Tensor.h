// The proxy's <ATen/core/Tensor.h>: at::Tensor.
// Declared in grader_proxy/ (see torch/extension.h here for how the proxy works).
#pragma once
#include "../../grader_proxy/tensor.h"
