"""Attack: torch's code moved to a file of the kernel's own without moving it. On its first call the
kernel writes libtorch_cpu's executable segment, byte for byte as it sits in memory, to a file in
its work folder and maps that file over the segment (MAP_FIXED, the same addresses): torch runs
on unchanged, but every address of its code now lies in a mapping of `seg.bin`, a file no name
rule knows. Then every call runs torch's flash kernel (GNU-hash lookup, XOR-encoded names, libc's
open/write/mmap found the same way) and the calling thread spins in its own code for half the
flash call's time. The samples of the flash kernel, and of SDPA's calls too, fall in "other":
its calls' own share is high, SDPA's calls show no torch code to compare with, and the whole run
has its own code busy. The kernel is ~1.5x SDPA and never computed.
(Found reviewing 2026-11-28's memfd rule: a memfd or a deleted file was caught, a plain file not.)
Defence: the judge reads the child's executable mappings before it loads the kernel's library
(torch, the binding module, Python: the harness's code, by device and inode) and where the
library landed: an address of the harness's code now mapped from another file, a file the harness
never loaded, or the library mapped anywhere else is foreign code, counted as torch's in the
kernel's calls and SDPA's (grader/judge/cpusample.py `Layout`): strict. Since 2026-11-28 the
worker seals torch's code before the library loads (mseal, grader/isolation/seal.py): the map
over it is refused, the kernel cannot set up and raises (runtime_error); Layout's strict flag
where the kernel has no mseal.
Expect: status=cheat_suspected|runtime_error
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <chrono>
#include <cstdint>
#include <optional>
#include <tuple>
#include <cstdlib>
@@GNU_LOOKUP@@
@@FLASH_FN@@

using OpenFn = int (*)(const char*, int, ...);
using WriteFn = long (*)(int, const void*, unsigned long);
using MmapFn = void* (*)(void*, unsigned long, int, int, int, long);
using CloseFn = int (*)(int);
static volatile std::uint64_t sink = 0;

__attribute__((noinline)) static void burn_until(std::chrono::steady_clock::time_point end) {
    std::uint64_t x = sink;
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 200; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

// libtorch_cpu's executable PT_LOAD, written from memory to ./seg.bin and mapped over itself
static bool swap_text(std::uintptr_t base) {
    auto open_ = (OpenFn)ho::libc_fn((const unsigned char*)"\x35\x2a\x3f\x34", 4);
    auto write_ = (WriteFn)ho::libc_fn((const unsigned char*)"\x2d\x28\x33\x2e\x3f", 5);
    auto mmap_ = (MmapFn)ho::libc_fn((const unsigned char*)"\x37\x37\x3b\x2a", 4);
    auto close_ = (CloseFn)ho::libc_fn((const unsigned char*)"\x39\x36\x35\x29\x3f", 5);
    if (!open_ || !write_ || !mmap_ || !close_) return false;
    const Elf64_Ehdr* e = (const Elf64_Ehdr*)base;
    const Elf64_Phdr* ph = (const Elf64_Phdr*)(base + e->e_phoff);
    for (int i = 0; i < e->e_phnum; ++i) {
        if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X)) continue;
        std::uintptr_t lo = (base + ph[i].p_vaddr) & ~(std::uintptr_t)0xfff;
        std::uintptr_t hi = (base + ph[i].p_vaddr + ph[i].p_memsz + 0xfff) & ~(std::uintptr_t)0xfff;
        int fd = open_("seg.bin", 0102 | 01000, 0700);          // O_RDWR | O_CREAT | O_TRUNC
        if (fd < 0) return false;
        for (std::uintptr_t p = lo; p < hi;) {
            long n = write_(fd, (const void*)p, (unsigned long)(hi - p < (1u << 24) ? hi - p : (1u << 24)));
            if (n <= 0) { close_(fd); return false; }
            p += (std::uintptr_t)n;
        }
        void* got = mmap_((void*)lo, hi - lo, 1 | 4, 0x02 | 0x10, fd, 0);   // PROT_READ|EXEC, MAP_PRIVATE|FIXED
        close_(fd);
        return got == (void*)lo;
    }
    return false;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static const std::uintptr_t base = ho::base_of((const void*)&at::get_num_threads);
    static const bool swapped = swap_text(base);
    static FlashFn fn = flash_fn();
    TORCH_CHECK(fn != nullptr && swapped, "setup failed");
    const auto t0 = std::chrono::steady_clock::now();
    auto r = fn(q, k, v, 0.0, false, std::nullopt, std::nullopt);
    auto out = std::get<0>(r).contiguous();
    burn_until(std::chrono::steady_clock::now() + (std::chrono::steady_clock::now() - t0) / 2);
    return out;
}
"""
