"""Reads its output buffer before writing it: O = 0·O + softmax(q kᵀ/√D) v, the GEMM habit
`C = a·A@B + b·C` with b = 0 on a buffer from torch::empty_like. Right on memory that happens
to hold finite numbers, NaN on the grader's poison (NaN·0 = NaN), garbage wherever the memory
held NaN or Inf. The max shift is there: the bug is the uninitialised read, and the
differential poison (issue 32) must name it, not "a softmax without the max shift"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    const float scale = 1.0f / std::sqrt(static_cast<float>(D)), beta = 0.0f;
    auto out = torch::empty_like(q);                 // DEFECT: never zeroed, then read below
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    std::vector<float> p(S);
    for (int64_t h = 0; h < BH; ++h)
        for (int64_t i = 0; i < S; ++i) {
            float mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < S; ++j) {
                float s = 0;
                for (int64_t d = 0; d < D; ++d) s += Q[(h * S + i) * D + d] * K[(h * S + j) * D + d];
                p[j] = s * scale;
                mx = std::max(mx, p[j]);
            }
            for (int64_t j = 0; j < S; ++j) { p[j] = std::exp(p[j] - mx); sum += p[j]; }
            for (int64_t d = 0; d < D; ++d) {
                float acc = 0;
                for (int64_t j = 0; j < S; ++j) acc += p[j] / sum * V[(h * S + j) * D + d];
                O[(h * S + i) * D + d] = acc + beta * O[(h * S + i) * D + d];   // reads O before writing it
            }
        }
    return out;
}
"""
