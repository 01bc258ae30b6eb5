"""Attack: memory that no process's resident size shows: a memfd written with write(),
never mapped (3 GiB), held open.
Defence: the judge counts the memfds and tmpfs files the child's processes hold open in
its memory, and stops it at the limit; the link audit sees memfd_create.
Expect: status=cheat_suspected; without=runtime_error; flags=strict:file_access; without_message=memory
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <vector>
extern "C" int memfd_create(const char*, unsigned);
extern "C" long write(int, const void*, unsigned long);
extern "C" unsigned sleep(unsigned);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    int fd = memfd_create("hog", 0);
    std::vector<char> block(1 << 20, 'm');
    for (int i = 0; i < 3072; ++i) write(fd, block.data(), block.size());
    for (;;) sleep(1);
    return q;
}
"""
