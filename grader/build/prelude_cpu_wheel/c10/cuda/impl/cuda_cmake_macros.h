// Stand-in for a header that CUDA builds of torch generate and CPU wheels lack.
// Used only by `make check-compile` (compile without a GPU), and only when the
// installed torch has no such file: torch's wheels are shared libraries, which is
// all this generated header records.
#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS
