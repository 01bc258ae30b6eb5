// The proxy's <torch/torch.h>: the tensor API and namespace torch (no torch::nn, no optimisers).
// Declared in grader_proxy/ (see torch/extension.h here for how the proxy works).
#pragma once
#include "../grader_proxy/torch.h"
