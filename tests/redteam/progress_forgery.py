"""Attack: the old judge read its child's stage from progress.jsonl and took each stage's
timeout from it; the kernel appends a line naming a stage without a timeout ("ready"),
then loops forever.
Defence: the judge keeps every deadline on its own clock, per request and for the whole
submission; nothing the child writes is read.
Expect: status=cheat_suspected; without=timeout; flags=strict:file_access; without_message=limit
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdio>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    if (FILE* f = std::fopen("progress.jsonl", "a")) {
        std::fputs("{\"stage\": \"ready\", \"detail\": \"\", \"t\": 0}\n", f);
        std::fclose(f);
    }
    volatile unsigned long spin = 0;
    for (;;) ++spin;
    return q;
}
"""
