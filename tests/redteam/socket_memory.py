"""Attack: a kernel (socketpair and write found at run time in libc's symbol table) fills
Unix socket pairs' buffers: gigabytes of kernel memory that no process's resident size shows,
so a 1 GiB memory limit let 2.5 GiB through; System V shared memory would do the same.
Defence: the sandbox's seccomp filter refuses socket, socketpair, shmget, msgget and semget
(grader/isolation/seccomp.py): the kernel has no one to talk to and no memory to hide there. Here a
socket pair that opens is the escape, said in the kernel's own error.
Expect: status=ok
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdlib>
@@ELF_LOOKUP@@
@@CORRECT@@
using SocketPair = int (*)(int, int, int, int*);
using ShmGet = int (*)(int, unsigned long, int);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static bool tried = false;
    if (!tried) {
        tried = true;
        auto sp = (SocketPair)rt_libc("socketpair");
        auto shm = (ShmGet)rt_libc("shmget");
        int sv[2];
        TORCH_CHECK(!sp || sp(1 /*AF_UNIX*/, 1 /*SOCK_STREAM*/, 0, sv) != 0, "SANDBOX ESCAPE: a socket pair opened");
        TORCH_CHECK(!shm || shm(0 /*IPC_PRIVATE*/, 1 << 20, 01000 | 0600) < 0, "SANDBOX ESCAPE: System V memory");
    }
    return correct_attention(q, k, v);
}
"""
