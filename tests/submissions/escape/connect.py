"""Sandbox test: connects to 127.0.0.1:@@PORT@@, where the test listens. Raises
"SANDBOX ESCAPE" if the connection is made, else "sandbox held"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cerrno>
#include <cstring>
#define CAT(a, b) a##b
extern "C" int CAT(sock, et)(int, int, int);
extern "C" int CAT(conn, ect)(int, const void*, unsigned);

struct Inet { unsigned short family, port; unsigned int addr; char zero[8]; };

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const unsigned port = @@PORT@@;
    int fd = CAT(sock, et)(2 /* AF_INET */, 1 /* SOCK_STREAM */, 0);
    TORCH_CHECK(fd >= 0, "sandbox held: socket failed: ", std::strerror(errno));
    Inet to{2, (unsigned short)(((port & 0xff) << 8) | (port >> 8)), 0x0100007fu, {}};
    int rc = CAT(conn, ect)(fd, &to, sizeof(to));
    TORCH_CHECK(rc != 0, "SANDBOX ESCAPE: connected to 127.0.0.1:", port);
    TORCH_CHECK(false, "sandbox held: connect failed: ", std::strerror(errno));
    return q;
}
"""
