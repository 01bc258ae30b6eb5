"""Attack: prints 256 MiB (to fill the judge's memory or disk with its log), then answers
correctly.
Defence: the judge keeps the first and last 8 KiB of what the kernel prints and counts the
rest.
Expect: status=ok
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdio>
#include <vector>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static bool flooded = false;
    if (!flooded) {
        flooded = true;
        std::vector<char> line(1 << 16, 'F');
        line.back() = '\n';
        for (int i = 0; i < 4096; ++i) std::fwrite(line.data(), 1, line.size(), stdout);
        std::fflush(stdout);
    }
    return correct_attention(q, k, v);
}
"""
