"""Sandbox test: opens another student's file (@@TARGET@@, filled in by the test). The
call names are pasted together so that the static scan does not see them: the sandbox
alone must stop it. The kernel always raises: "sandbox held" when the open failed,
"SANDBOX ESCAPE" when it succeeded."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cerrno>
#include <cstring>
#define CAT(a, b) a##b
extern "C" int CAT(op, en)(const char*, int, ...);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    int fd = CAT(op, en)("@@TARGET@@", 0);
    TORCH_CHECK(fd < 0, "SANDBOX ESCAPE: read @@TARGET@@");
    TORCH_CHECK(false, "sandbox held: open failed: ", std::strerror(errno));
    return q;
}
"""
