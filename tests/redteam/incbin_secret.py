"""Attack: reads files at compile time, when no kernel code has run yet: .incbin of the
hidden config and #include of another student's source, to print them in compile errors.
Defence: the compiler runs in the sandbox too: neither path exists there.
Expect: status=compile_error; message=did not compile
"""

_CPP_SRC = r"""
#include <torch/extension.h>
asm(".section .rodata\n.incbin \"@@HIDDEN_FILE@@\"\n.previous\n");
#include "@@OTHER_STUDENT@@"

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    return q;
}
"""
