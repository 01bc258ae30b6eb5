"""Attack: prints terminal escapes and then aborts, so its last words (the crash tail the
judge quotes) carry them into the message: an OSC 52 clipboard write, a screen clear, a
carriage return and a right-to-left override, landing raw in grades.csv, in the results
JSON that `jq -r` prints and on the instructor's terminal.
Defence: every string leaves the grader through `safetext.printable` (the results JSON,
each gradebook cell, the terminal, the kernel's output log): a control character is shown
as its escape (\x1b), never sent.
Expect: status=runtime_error; message=crashed
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdio>
#include <cstdlib>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    std::fputs("\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J\x1b[Hall configs passed\r\xe2\x80\xae" "dekcah\n", stderr);
    std::fflush(stderr);
    std::abort();
    return q;
}
"""
