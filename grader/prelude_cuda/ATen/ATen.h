// The proxy headers declare all of it in one file (see torch/extension.h here).
#pragma once
#include <torch/extension.h>
