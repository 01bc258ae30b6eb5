// The grader's lean <torch/extension.h>: what an attention kernel uses, nothing more.
//
// The real <torch/extension.h> pulls in pybind11, Python.h and the whole ATen
// operator library: ~30 s of parsing per build on a 2-core machine. Kernels need
// tensors, a few factory functions, TORCH_CHECK and parallel_for, which parse in
// a few seconds. The grader puts this folder first on the include path; if a
// source does not compile with it (whatever the error), the grader rebuilds it
// against the real headers before reporting anything, so the result never
// depends on this file, only the compile time does (grader/build/compile.py).
#pragma once

#include <ATen/ATen.h>   // the lean one, in this folder

// The same names <torch/types.h> puts in namespace torch.
#include "../../prelude_common/torch_names.h"   // shared with the other tier
