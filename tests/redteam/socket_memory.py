"""Attack: a kernel (socketpair and write found at run time in libc's symbol table) fills
Unix socket pairs' buffers: gigabytes of kernel memory that no process's resident size shows,
so a 1 GiB memory limit let 2.5 GiB through; System V shared memory would do the same.
Defence: the sandbox's seccomp filter refuses socketpair, bind, listen (a CUDA child's makes
them and refuses connect instead: CUDA's initialisation needs them), every socket family
but AF_UNIX (which CUDA's initialisation opens), every type but the connection-based ones,
shmget, msgget and semget (grader/isolation/seccomp.py): no socket in the sandbox can have a
peer, so none queues memory. Here a socket pair, a Unix socket bound and listening that a
second one connects to (a peer), a datagram sent to a socket the kernel named (SO_PASSCRED
and a failed connect autobind it: a peer without bind), a TCP socket or System V memory that
opens is the escape.
Expect: status=ok
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdlib>
@@ELF_LOOKUP@@
@@CORRECT@@
@@SOCKET_PROBE@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    socket_probe();
    return correct_attention(q, k, v);
}
"""
