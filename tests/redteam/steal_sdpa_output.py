"""Attack: SDPA runs in the kernel's process, in the same round and (on the CPU) on the same
inputs, and its output is still alive while the next kernel runs (the harness's local `out`).
Through the Python C API the kernel walks up to the harness's frame and copies that output into
its own: its call costs a copy. Where there is none (it ran first in the round) it computes
honestly and slowly (30 ms more).
Defence: every call is a request of its own on the CPU (grader/judge/judge.py `_bench_size_cpu`),
so the harness's frame never holds SDPA's output while the kernel runs, and SDPA and the references
are timed on inputs of their own (the last set sent, as (k, q, v); grader/judge/gpu.py's pools on
CUDA): what they leave behind answers another question. Finding nothing to copy, it pays its
honest, slow compute, which must show in its slowdown.
Expect: status=cheat_suspected; without=ok; flags=strict:python_api; slowdown_min=20
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <chrono>
#include <cstdio>
@@CORRECT@@
extern "C" int PyGILState_Ensure();
extern "C" void PyGILState_Release(int);
extern "C" int PyRun_SimpleString(const char*);

static volatile char stolen = 0;

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto out = torch::empty_like(q);
    char code[1200];
    stolen = 0;
    std::snprintf(code, sizeof code,
        "import sys, ctypes\n"
        "f = sys._getframe()\n"
        "while f is not None and not ('samples' in f.f_locals and 'names' in f.f_locals):\n"
        "    f = f.f_back\n"
        "o = f.f_locals.get('out') if f is not None else None\n"
        "if o is not None and getattr(o, 'numel', lambda: 0)() == %lld and o.is_contiguous():\n"
        "    ctypes.memmove(%llu, o.float().data_ptr(), %lld)\n"
        "    ctypes.memmove(%llu, b'\\x01', 1)\n",
        (long long)q.numel(), (unsigned long long)out.data_ptr(), (long long)(q.numel() * 4),
        (unsigned long long)&stolen);
    int gil = PyGILState_Ensure();
    PyRun_SimpleString(code);
    PyGILState_Release(gil);
    if (stolen)
        return out;
    const auto start = std::chrono::steady_clock::now();
    auto honest = correct_attention(q, k, v);
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(30)) {}
    return honest;
}
"""
