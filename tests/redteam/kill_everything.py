"""Attack: kill(-1, SIGKILL) and kill(getppid(), SIGKILL): every process the kernel may
signal, the grader's included, if it can reach it.
Defence: a PID namespace (only the sandbox's own processes are there) and another uid:
the judge and the batch go on; the kernel only ends itself.
Expect: status=cheat_suspected; without=runtime_error; flags=strict:process
"""

_CPP_SRC = r"""
#include <torch/extension.h>
extern "C" int kill(int, int);
extern "C" int getppid();

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    kill(getppid(), 9);
    kill(-1, 9);
    kill(1, 9);
    TORCH_CHECK(false, "kill_everything: still alive");
    return q;
}
"""
