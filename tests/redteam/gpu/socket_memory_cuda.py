"""Attack: the socket_memory attack in a CUDA child, whose seccomp filter answers bind and listen
with success and does nothing (CUDA's initialisation binds a Unix socket and listens, and fails
when they are refused: tools/sandbox_gpu_probe.py), trying for a peer to queue gigabytes of
kernel memory with: a socket pair, a TCP socket, System V memory, or a second socket
connecting to the one it bound and listens on.
Defence: the CUDA child's filter (grader/isolation/seccomp.py, gpu=True) refuses socketpair,
every family but AF_UNIX and System V memory, and answers bind and listen without making
them: nothing is ever bound or listening, so the connect is refused (ECONNREFUSED). Any of
them that opens is the escape. Seen on the H200 (2026-11-27): ok, no peer.
Expect: status=ok
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
@@ELF_LOOKUP@@
@@CORRECT_CUDA@@
using SocketPair = int (*)(int, int, int, int*);
using ShmGet = int (*)(int, unsigned long, int);
using Socket = int (*)(int, int, int);
using Bind = int (*)(int, const void*, unsigned);
using Listen = int (*)(int, int);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static bool tried = false;
    if (!tried) {
        tried = true;
        auto sp = (SocketPair)rt_libc("socketpair");
        auto shm = (ShmGet)rt_libc("shmget");
        int sv[2];
        TORCH_CHECK(!sp || sp(1 /*AF_UNIX*/, 1 /*SOCK_STREAM*/, 0, sv) != 0, "SANDBOX ESCAPE: a socket pair opened");
        TORCH_CHECK(!shm || shm(0 /*IPC_PRIVATE*/, 1 << 20, 01000 | 0600) < 0, "SANDBOX ESCAPE: System V memory");
        auto so = (Socket)rt_libc("socket");
        auto bi = (Bind)rt_libc("bind");
        auto li = (Listen)rt_libc("listen");
        TORCH_CHECK(!so || so(2 /*AF_INET*/, 1 /*SOCK_STREAM*/, 0) < 0, "SANDBOX ESCAPE: a TCP socket opened");
        int u = so ? so(1 /*AF_UNIX*/, 1 /*SOCK_STREAM*/, 0) : -1;   // allowed: CUDA's init needs it
        auto co = (Bind)rt_libc("connect");
        if (u >= 0 && bi && li && co) {
            // sockaddr_un in the abstract namespace: family 1, then a NUL and a name. A CUDA
            // child's filter answers bind and listen with success and does nothing (CUDA's
            // init needs them to succeed): the escape is a second socket that connects
            char addr[2 + 1 + 12] = {1, 0, 0, 'g', 'r', 'a', 'd', 'e', 'r', '-', 'p', 'e', 'e', 'r'};
            bool listening = bi(u, addr, sizeof addr) == 0 && li(u, 8) == 0;
            int c = so(1 /*AF_UNIX*/, 1 /*SOCK_STREAM*/, 0);
            TORCH_CHECK(!(listening && c >= 0 && co(c, addr, sizeof addr) == 0),
                        "SANDBOX ESCAPE: a Unix socket bound, listening and connected to (a peer)");
        }

    }
    return correct_attention(q, k, v, c10::cuda::getCurrentCUDAStream());
}
"""
