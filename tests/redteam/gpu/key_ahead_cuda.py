"""Attack: the timed calls' inputs come from the request's key (grader/judge/gpu.py's counter
fills), and the key is in the kernel's process (the harness's `pool`). Through the Python C API,
on its first call of the warm-up round (untimed), the kernel makes every timed call's inputs
itself from the key and computes all their answers honestly, nested calls of its own; each
timed call then reads its slot from the harness's frame, spins 40 µs (above the physical
floor) and copies the answer it made ahead: right on every canary, fast on every call. The
graph's capture finds no slot to read and is honest, so the event sizes (S >= 512) carry it.
Defence: none structural yet (issue 26): the inputs' seeds must come from the judge just
before each call. The link audit flags the Python C API symbols it links (an ELF lookup of its
own would hide them), and the physical floor bounds how fast a copy may claim to be.
Graded on an H200 (2026-11-28) at the red team's sizes (S = 64 and 256, the graph's sizes) it
gained nothing: 149x and 196x SDPA's time, every check right; the event sizes it was written
for were not in that run. It no longer says open=; the hole it names does stay open in
INSTRUCTORS: a kernel that counted its calls natively would read no frame while timed.
Expect: status=cheat_suspected; without=ok; flags=strict:python_api; slowdown_min=1
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <cstdio>
#include <cuda_runtime.h>
@@CORRECT_CUDA@@
extern "C" int PyGILState_Ensure();
extern "C" void PyGILState_Release(int);
extern "C" int PyRun_SimpleString(const char*);

static volatile unsigned long long ahead = 0;    // a device address of this call's answer, or 0
static volatile char nested = 0;                 // 1 while the kernel computes answers ahead

__global__ void rt_spin(long long ns) {
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto stream = c10::cuda::getCurrentCUDAStream();
    if (nested)
        return correct_attention(q, k, v, stream);
    char code[1600];
    ahead = 0;
    std::snprintf(code, sizeof code,
        "import sys, ctypes, builtins\n"
        "f = sys._getframe()\n"
        "while f is not None and not ('slots' in f.f_locals and 'pool' in f.f_locals and 'fn' in f.f_locals):\n"
        "    f = f.f_back\n"
        "st = builtins.__dict__.setdefault('_rt_ahead', {})\n"
        "if f is not None and getattr(f.f_locals['pool'], 'key', None) is not None:\n"
        "    L = f.f_locals\n"
        "    pool = L['pool']\n"
        "    if L['r'] == 0 and st.get('key') != pool.key:\n"
        "        from grader.judge import gpu\n"
        "        st.clear(); st['key'] = pool.key\n"
        "        ctypes.memmove(%llu, b'\\x01', 1)\n"
        "        for s in range(gpu.event_slots()):\n"
        "            buf = pool.bufs[0].clone()\n"
        "            n, stride = gpu._layout(pool.shape)\n"
        "            views = tuple(buf[i * stride:i * stride + n].view_as(pool.sets[0][0]) for i in range(3))\n"
        "            gpu.counter_fill(buf, pool._idx, gpu.counter_seed(pool.key, s), views, pool.shape.qk_std)\n"
        "            st[s] = L['fn'](*views).clone()\n"
        "        ctypes.memmove(%llu, b'\\x00', 1)\n"
        "    elif L['r'] >= 1 and L['slots'].get(L['j']) in st:\n"
        "        ctypes.memmove(%llu, st[L['slots'][L['j']]].data_ptr().to_bytes(8, 'little'), 8)\n",
        (unsigned long long)&nested, (unsigned long long)&nested, (unsigned long long)&ahead);
    int gil = PyGILState_Ensure();
    PyRun_SimpleString(code);
    PyGILState_Release(gil);
    if (!ahead)
        return correct_attention(q, k, v, stream);
    auto out = torch::empty_like(q);
    rt_spin<<<1, 1, 0, stream>>>(40000);
    cudaMemcpyAsync(out.data_ptr<float>(), (const void*)ahead, out.numel() * sizeof(float),
                    cudaMemcpyDeviceToDevice, stream);
    return out;
}
"""
