/* Stand-in for cublas_v2.h (see README.md here). */
#pragma once
#include "cublas_api.h"
