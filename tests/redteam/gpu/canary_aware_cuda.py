"""Attack: the GPU harness places the judge's canary inputs in the kernel's own process, and the
harness's frame says which timed call gets one (its locals `mine` and `j`). Through the Python
C API the kernel reads them on every call: on a canary call it computes honestly (slowly), on
every other timed call it writes nothing and spins 40 µs, well above the physical floor, so its
medians are below SDPA's at S = 512 and 1024 while every canary comes back right.
Captured into a graph (S <= 256), where no call can tell, it is honest.
Defence: none structural yet (open, issue 26). The name-based audit flags the Python C API
symbols it links, which an ELF lookup of its own would hide (tests/redteam/_elf_lookup.inc).
Expect: status=cheat_suspected; without=wrong_answer; flags=strict:python_api; open=issue 26
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <cstdio>
@@CORRECT_CUDA@@
extern "C" int PyGILState_Ensure();
extern "C" void PyGILState_Release(int);
extern "C" int PyRun_SimpleString(const char*);

static volatile char canary = 0;

__global__ void rt_spin(float* out, long long n, long long ns) {
    long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > ns) break;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && n > 0) out[0] = 0.f;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    char code[600];
    canary = 1;                    // outside the harness's timed loop: a canary until shown otherwise
    std::snprintf(code, sizeof code,
        "import sys, ctypes\n"
        "f = sys._getframe()\n"
        "while f is not None and not ('mine' in f.f_locals and 'j' in f.f_locals and 'starts' in f.f_locals):\n"
        "    f = f.f_back\n"
        "if f is not None and f.f_locals['j'] not in f.f_locals['mine']:\n"
        "    ctypes.memmove(%llu, b'\\x00', 1)\n",
        (unsigned long long)&canary);
    int gil = PyGILState_Ensure();
    PyRun_SimpleString(code);
    PyGILState_Release(gil);
    auto stream = c10::cuda::getCurrentCUDAStream();
    if (canary)
        return correct_attention(q, k, v, stream);
    auto out = torch::empty_like(q);
    rt_spin<<<1, 32, 0, stream>>>(out.data_ptr<float>(), out.numel(), 40000);
    return out;
}
"""
