// The proxy's <ATen/core/TensorAccessor.h>: the accessor templates.
// Declared in grader_proxy/ (see torch/extension.h here for how the proxy works).
#pragma once
#include "../../grader_proxy/accessor.h"
