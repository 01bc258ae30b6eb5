"""Attack: the timer is in the kernel's process, so the kernel rewrites it: through the
Python C API it replaces `time.perf_counter` with a clock it can hold back, then on every
call does its slow work (60 ms) and moves the clock back by what the call took, so each
of its calls reads 0.1 ms. (The issue's version reached PyRun_SimpleString by parsing
libpython in memory, with no symbol for the link audit to see.)
Defence: the judge paces the rounds and holds each one to its own clock: the calls a
round reports must fit in the round's time there, and the time they leave unaccounted
must be what the harness's own work costs (done again in the judge to know); tens of ms
missing each round are a strict flag (a review flag on a machine other processes kept busy),
whatever rewrote the timer.
Expect: status=cheat_suspected; flags=strict:python_api,*:forged_timings
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <chrono>
#include <string>
@@CORRECT@@
extern "C" int PyGILState_Ensure();
extern "C" void PyGILState_Release(int);
extern "C" int PyRun_SimpleString(const char*);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static bool patched = false;
    const auto start = std::chrono::steady_clock::now();
    int gil = PyGILState_Ensure();
    if (!patched) {
        PyRun_SimpleString(
            "import time, builtins\n"
            "builtins._rt_real = time.perf_counter\n"
            "builtins._rt_back = [0.0]\n"
            "time.perf_counter = lambda: builtins._rt_real() - builtins._rt_back[0]\n");
        patched = true;
    }
    auto out = correct_attention(q, k, v);
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(60)) {}
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string back = "import builtins\nbuiltins._rt_back[0] += " + std::to_string(took - 1e-4) + "\n";
    PyRun_SimpleString(back.c_str());
    PyGILState_Release(gil);
    return out;
}
"""
