// The grader's lean <torch/types.h>: the lean <ATen/ATen.h> and namespace torch (see
// torch/extension.h here).
#pragma once
#include <torch/extension.h>
