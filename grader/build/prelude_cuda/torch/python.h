// The proxy's <torch/python.h>: what a kernel uses of it (no pybind11: a source that binds with it needs the real headers).
// Declared in grader_proxy/ (see torch/extension.h here for how the proxy works).
#pragma once
#include "../grader_proxy/torch.h"
