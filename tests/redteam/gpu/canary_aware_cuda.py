"""Attack: the GPU harness once placed the judge's canary inputs in the kernel's own process, and
its frame said which timed call got one (its locals `mine` and `j`). Through the Python C API
the kernel looks for any such map in the harness's frames on every call: where it finds one it
computes honestly (slowly) on the canaries only; where it finds none it gambles, honest on one
call in 8 and spinning 40 µs with nothing written on the others, so that its medians are below
SDPA's at S = 512 and 1024. Captured into a graph (S <= 256), where no call can tell, it is honest.
Defence: commit-reveal canaries. Every timed call gets counter-based inputs the judge can make
again, the reply commits to every output (a digest each), and only then does the judge draw the
calls it checks: nothing in the process knows them while it runs, so the gamble loses on the
benchmark inputs. (The link audit also flags the Python C API symbols it links, which an ELF
lookup of its own would hide: tests/redteam/_elf_lookup.inc.)
Expect: status=cheat_suspected; without=wrong_answer; flags=strict:python_api; without_message=benchmark inputs
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
        "while f is not None and not ('j' in f.f_locals and 'starts' in f.f_locals):\n"
        "    f = f.f_back\n"
        "if f is not None and 'mine' not in f.f_locals:\n"
        "    ctypes.memmove(%llu, b'\\x02', 1)\n"
        "elif f is not None and f.f_locals['j'] not in f.f_locals['mine']:\n"
        "    ctypes.memmove(%llu, b'\\x00', 1)\n",
        (unsigned long long)&canary, (unsigned long long)&canary);
    int gil = PyGILState_Ensure();
    PyRun_SimpleString(code);
    PyGILState_Release(gil);
    auto stream = c10::cuda::getCurrentCUDAStream();
    static long calls = 0;
    // 1: a canary, or outside the timed loop; 2: a timed call and no canary map to read: gamble
    if (canary == 1 || (canary == 2 && ++calls % 8 == 0))
        return correct_attention(q, k, v, stream);
    auto out = torch::empty_like(q);
    rt_spin<<<1, 32, 0, stream>>>(out.data_ptr<float>(), out.numel(), 40000);
    return out;
}
"""
