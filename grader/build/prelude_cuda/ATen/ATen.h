// The proxy's <ATen/ATen.h>: the tensor API, factories, AT_DISPATCH (no namespace torch, as in ATen).
// Declared in grader_proxy/ (see torch/extension.h here for how the proxy works).
#pragma once
#include "../grader_proxy/dispatch.h"
#include "../grader_proxy/functions.h"
