"""Attack: the socket_memory attack in a CUDA child, whose seccomp filter lets bind and listen
through (CUDA's initialisation binds a Unix socket and listens, and fails when they are
refused: tools/sandbox_gpu_probe.py), trying for a peer to queue gigabytes of kernel memory
with: a socket pair, a TCP socket, System V memory, a second socket connecting to the one it
bound and listens on, or a datagram to a socket the kernel named.
Defence: the CUDA child's filter (grader/isolation/seccomp.py, gpu=True) refuses socketpair,
every family but AF_UNIX, every type but the connection-based ones and System V memory, and
answers every connect with ENOENT: a listening socket never gets a peer. Any of them that
opens is the escape. Seen on the H200 (2026-11-27, with bind and listen then faked): ok, no peer.
Expect: status=ok
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
@@ELF_LOOKUP@@
@@CORRECT_CUDA@@
@@SOCKET_PROBE@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    socket_probe();
    return correct_attention(q, k, v, c10::cuda::getCurrentCUDAStream());
}
"""
