"""Attack: code written in memory for the length of each call, put back before anyone looks.
On every call the kernel opens /proc/self/mem for writing (by a system call no disassembly
shows, the path XOR-encoded), writes new instructions over a page of its own library's
code (a write through /proc/self/mem goes past the page's read-only protection and makes
no mapping, so no PERF_RECORD_MMAP2), runs them, and drops the written copy with
MADV_DONTNEED, which maps the file's page back. The judge reads /proc/PID/smaps before and
after a size's rounds (`modified_code`: anonymous pages in a file's executable mapping) and
finds nothing: in the window, torch's code relocated into the library would be sampled as
the kernel's own. mseal does not stop the write (Linux 6.18: a write to a sealed read-only
file mapping went through, and so did MADV_DONTNEED on it).
Defence: before the library loads, the worker (grader/judge/worker.py) restricts itself with
Landlock (grader/isolation/landlock.py): files may be opened for writing anywhere but under
/proc, so /proc/self/mem (and /proc/PID/mem of a process it forks) is refused, whatever
instruction asks; the kernel computes attention and gets its row: the attack held only if
the open failed (the kernel raises "ESCAPE" otherwise).
Expect: status=ok
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdint>
#include <string>
@@CORRECT@@

#if defined(__x86_64__)
@@HIDDEN_SYSCALL@@

/* a page of the library's code of its own: what the window rewrites */
__attribute__((noinline, aligned(4096))) int spare_code() { return 7; }

static std::string window() {
    static const unsigned char path_xor[] = {0x75, 0x2a, 0x28, 0x35, 0x39, 0x75, 0x29, 0x3f, 0x36, 0x3c, 0x75, 0x37, 0x3f, 0x37};    /* "/proc/self/mem" ^ 0x5a */
    char path[sizeof(path_xor) + 1] = {0};
    for (size_t i = 0; i < sizeof(path_xor); ++i) path[i] = (char)(path_xor[i] ^ 0x5a);
    int (*volatile code)() = spare_code;
    const uintptr_t at = (uintptr_t)code;
    const long fd = hidden_syscall(257 /* openat */, -100 /* AT_FDCWD */, (long)path, 2 /* O_RDWR */, 0, 0);
    if (fd < 0) return "";
    const unsigned char patch[] = {0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3};    /* mov $42,%eax; ret */
    const long wrote = hidden_syscall(18 /* pwrite64 */, fd, (long)patch, sizeof(patch), (long)at, 0);
    hidden_syscall(3 /* close */, fd, 0, 0, 0, 0);
    if (wrote != (long)sizeof(patch)) return " /proc/self/mem opened for writing (the write: " + std::to_string(wrote) + ")";
    const int ran = code();
    hidden_syscall(28 /* madvise */, (long)(at & ~(uintptr_t)4095), 4096, 4 /* MADV_DONTNEED */, 0, 0);
    const int back = code();
    return " code written through /proc/self/mem ran (" + std::to_string(ran) + ") and was put back ("
           + std::to_string(back) + ")";
}
#else
static std::string window() { return ""; }
#endif

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const std::string got = window();
    TORCH_CHECK(got.empty(), std::string("ESCAPE:") + got);
    return correct_attention(q, k, v);
}
"""
