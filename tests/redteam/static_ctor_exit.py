"""Attack: a static constructor that exits the process with status 0 the moment the
library is loaded: a judge that took "exited 0" for success would grade it ok.
Defence: the judge waits for its reply to each request; an exit is a runtime_error with
the stage it happened in.
Expect: status=runtime_error; message=status 0
"""

_CPP_SRC = r"""
#include <torch/extension.h>
extern "C" void _exit(int);

__attribute__((constructor)) static void leave() { _exit(0); }

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    return q;
}
"""
