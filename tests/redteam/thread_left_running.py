"""Attack: starts a thread that spins forever and returns: the spinning thread steals a core
from whatever is timed next (SDPA), and outlives the grade if nothing kills it.
Defence: the link audit flags threads of its own (a warning: a person looks); the whole
sandbox (PID namespace) is killed with the child, so nothing survives the grade.
Expect: status=ok; flags=warning:own_threads
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <thread>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static bool started = false;
    if (!started) {
        started = true;
        std::thread([] { volatile unsigned long x = 0; for (;;) ++x; }).detach();
    }
    return correct_attention(q, k, v);
}
"""
