"""Starts 2000 processes that sleep. Expected: runtime_error ("started more than ...
processes"), and the batch goes on."""

_CPP_SRC = r"""
#include <torch/extension.h>
#define CAT(a, b) a##b
extern "C" int CAT(fo, rk)();
extern "C" unsigned CAT(sle, ep)(unsigned);

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    for (int i = 0; i < 2000; ++i)
        if (CAT(fo, rk)() == 0) for (;;) CAT(sle, ep)(60);
    for (;;) CAT(sle, ep)(60);
    return q;
}
"""
