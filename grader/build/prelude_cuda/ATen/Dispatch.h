// The proxy's <ATen/Dispatch.h>: AT_DISPATCH_*.
// Declared in grader_proxy/ (see torch/extension.h here for how the proxy works).
#pragma once
#include "../grader_proxy/dispatch.h"
