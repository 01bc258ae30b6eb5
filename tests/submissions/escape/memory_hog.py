"""Touches 64 GiB of memory, 256 MiB at a time. Expected: runtime_error ("used more than
N GiB of memory") long before the machine runs out."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstring>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    std::vector<char*> blocks;
    for (int i = 0; i < 256; ++i) {
        char* block = new char[256u << 20];
        std::memset(block, i, 256u << 20);
        blocks.push_back(block);
    }
    TORCH_CHECK(false, "memory_hog: allocated 64 GiB without being stopped");
    return q;
}
"""
