// The proxy's namespace torch: everything a real <torch/extension.h> declares that the
// proxy knows (tensor, factories, dispatch, accessors) plus <torch/types.h>'s aliases.
#pragma once
#include "dispatch.h"
#include "functions.h"
#include "../../prelude_common/torch_names.h"   // shared with the lean tier
