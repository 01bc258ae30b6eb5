"""Attack: /tmp and /dev/shm were unbounded tmpfs (memory no limit counted): writes to
them until they are full (or the machine's memory is).
Defence: both are tmpfs of a fixed size inside the sandbox, counted in the memory limit:
the writes stop at that size.
Expect: status=cheat_suspected; without=runtime_error; flags=strict:file_access; without_message=held
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdio>
#include <string>
#include <vector>

static double fill(const char* path) {
    FILE* f = std::fopen(path, "w");
    if (!f) return -1;
    std::vector<char> block(1 << 20, 'x');
    double mib = 0;
    while (mib < 8192 && std::fwrite(block.data(), 1, block.size(), f) == block.size() && std::fflush(f) == 0) ++mib;
    std::fclose(f);
    std::remove(path);
    return mib;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    double tmp = fill("/tmp/hog"), shm = fill("/dev/shm/hog");
    TORCH_CHECK(tmp < 8192 && shm < 8192, "SANDBOX ESCAPE: wrote 8 GiB to /tmp or /dev/shm");
    // the message is one std::string: on the GPU image, TORCH_CHECK formatting a number
    // crashes (SIGSEGV; see tests/course/test_batch.py's xfail), and the row would lose "held"
    TORCH_CHECK(false, "sandbox held: /tmp full at " + std::to_string((long)tmp) + " MiB, /dev/shm at " +
                       std::to_string((long)shm) + " MiB");
    return q;
}
"""
