"""Attack: a kernel (mkdirat and openat found at run time in libc's symbol table: no file
symbol linked) builds a chain of 2 600 nested folders in its work folder, deeper than any path
can name, and 130 000 files at the bottom: a path-based walk could not count past PATH_MAX
(it failed open: no file limit), and shutil.rmtree recursed until Python's recursion limit
(grader_error, no gradebook row: the batch lost it).
Defence: the judge measures and removes a child's folder by descriptors, one level at a time
(grader/isolation/safefs.py): a tree deeper than 256 levels is a breach, and any depth is removed.
Expect: status=runtime_error; message=levels deep
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdlib>
#include <cstdio>
@@ELF_LOOKUP@@
@@CORRECT@@
using Mkdirat = int (*)(int, const char*, unsigned);
using Openat = int (*)(int, const char*, int, ...);
using Close = int (*)(int);
static int g_bottom = -1;
static long g_files = 0;

static void grow() {
    static auto mk = (Mkdirat)rt_libc("mkdirat");
    static auto op = (Openat)rt_libc("openat");
    static auto cl = (Close)rt_libc("close");
    if (!mk || !op || !cl) return;
    if (g_bottom < 0) {
        int fd = op(-100, ".", 0200000);
        for (int i = 0; i < 2600 && fd >= 0; ++i) { mk(fd, "a", 0755); int next = op(fd, "a", 0200000); cl(fd); fd = next; }
        g_bottom = fd;
    }
    char name[32];
    for (int i = 0; i < 20000 && g_files < 130000 && g_bottom >= 0; ++i, ++g_files) {
        snprintf(name, sizeof name, "f%ld", g_files);
        int f = op(g_bottom, name, 01 | 0100, 0644);
        if (f >= 0) cl(f);
    }
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    grow();
    return correct_attention(q, k, v);
}
"""
