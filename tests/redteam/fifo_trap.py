"""Attack: makes FIFOs where the old judge read its child's files (state.json,
progress.jsonl, output.log) and in its build cache, so that a blocking open hangs the
whole batch; then answers correctly.
Defence: the judge opens nothing in the work folder (its walk of the folder's size uses
lstat, which a FIFO does not block); the library it reads is copied before this code runs.
Expect: status=cheat_suspected; without=ok; flags=strict:file_access
"""

_CPP_SRC = r"""
#include <torch/extension.h>
@@CORRECT@@
extern "C" int mkfifo(const char*, unsigned);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const char* names[] = {"state.json", "progress.jsonl", "output.log", "cache/build/trap.so"};
    for (const char* name : names) mkfifo(name, 0644);
    return correct_attention(q, k, v);
}
"""
