// The proxy's namespace torch: everything a real <torch/extension.h> declares that the
// proxy knows (tensor, factories, dispatch, accessors) plus <torch/types.h>'s aliases.
#pragma once
#include <iostream>   // the real <torch/extension.h> brings it (pybind11): std::cout works without an include
#include "dispatch.h"
#include "functions.h"
#include "../../prelude_common/torch_names.h"   // shared with the lean tier
