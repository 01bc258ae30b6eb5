"""Attack: the per-call times of a CPU round are read in the kernel's process, and only the
round's total is held to the judge's clock. Through the Python C API the kernel wraps
`time.perf_counter` so that its own call (honest, then spinning to 20.05 ms: far slower
than SDPA) reads 0.05 ms in a timed round, and SDPA's call of the same round reads 20 ms
longer (both recognised from the harness's frame). The round's total stays true, so nothing is
unaccounted; SDPA beside it reads slow, which the judge caps at 1.25x its own SDPA (a review
flag), while the kernel's figure stays tiny.
Defence: every call is a request of its own (grader/judge/judge.py `_bench_size_cpu`), so each
call has a bracket on the judge's clock: SDPA's call, handed 20 ms it did not take, no longer
fits in its own bracket (the benchmark's times are not plausible: runtime_error), and time the
kernel only drops stays in its own bracket (`forged_timings`, charged back). Before 2026-11-28
only a round's total was held, and this scored 0.08x at S = 256 with review flags alone. The
link audit also flags the Python C API symbols it links.
Expect: status=cheat_suspected; without=runtime_error; flags=strict:python_api; without_message=not plausible
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <chrono>
@@CORRECT@@
extern "C" int PyGILState_Ensure();
extern "C" void PyGILState_Release(int);
extern "C" int PyRun_SimpleString(const char*);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static bool patched = false;
    const auto start = std::chrono::steady_clock::now();
    int gil = PyGILState_Ensure();
    if (!patched) {
        // SDPA's window in a timed round reads SHIFT longer (on its end read); the kernel's own
        // reads SHIFT shorter: once each a round, so the round's total stays what it took
        PyRun_SimpleString(
            "import time, sys, builtins\n"
            "builtins._rs = {'real': time.perf_counter, 'back': 0.0, 'reads': 0}\n"
            "def _rs_clock():\n"
            "    s = builtins._rs\n"
            "    f = sys._getframe(1)\n"
            "    if f.f_locals.get('name') == 'sdpa' and 'samples' in f.f_locals:\n"
            "        s['reads'] += 1\n"
            "        if s['reads'] % 2 == 0:\n"
            "            s['back'] -= 0.020\n"
            "    return s['real']() - s['back']\n"
            "time.perf_counter = _rs_clock\n");
        patched = true;
    }
    auto out = correct_attention(q, k, v);
    while (std::chrono::steady_clock::now() - start < std::chrono::microseconds(20050)) {}
    PyRun_SimpleString(
        "import sys, builtins\n"
        "f = sys._getframe()\n"
        "while f is not None and not ('samples' in f.f_locals and f.f_locals.get('name') == 'student'):\n"
        "    f = f.f_back\n"
        "if f is not None:\n"
        "    builtins._rs['back'] += 0.020\n");
    PyGILState_Release(gil);
    return out;
}
"""
