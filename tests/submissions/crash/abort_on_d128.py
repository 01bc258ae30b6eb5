"""Right on configs 1 and 2; on config 3 (D = 128) a failed assert aborts the process
(SIGABRT) after printing why. The configs that passed keep their results and points, and
the message carries the assertion's text."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>

// softmax(q k^T / sqrt(D)) v with plain loops; the defect is marked DEFECT.
static void reference_loops(const float* Q, const float* K, const float* V, float* O,
                            int64_t BH, int64_t S, int64_t D, float scale, int64_t rows_done) {
    for (int64_t h = 0; h < BH; ++h)
        for (int64_t i = 0; i < rows_done; ++i) {
            float mx = -INFINITY;
            for (int64_t j = 0; j < S; ++j) {
                float s = 0;
                for (int64_t d = 0; d < D; ++d) s += Q[(h * S + i) * D + d] * K[(h * S + j) * D + d];
                mx = std::max(mx, s * scale);
            }
            float sum = 0;
            for (int64_t d = 0; d < D; ++d) O[(h * S + i) * D + d] = 0;
            for (int64_t j = 0; j < S; ++j) {
                float s = 0;
                for (int64_t d = 0; d < D; ++d) s += Q[(h * S + i) * D + d] * K[(h * S + j) * D + d];
                const float p = std::exp(s * scale - mx);
                sum += p;
                for (int64_t d = 0; d < D; ++d) O[(h * S + i) * D + d] += p * V[(h * S + j) * D + d];
            }
            for (int64_t d = 0; d < D; ++d) O[(h * S + i) * D + d] /= sum;
        }
}

#include <cassert>
#include <cstdio>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::zeros_like(q);
    float scale = 1.0f / std::sqrt((float)D);
    std::fprintf(stderr, "kernel: D = %ld\n", (long)D);
    assert(D <= 64 && "this kernel keeps one row of 64 dims in registers");   // DEFECT: D = 128 aborts
    reference_loops(q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(),
                    out.data_ptr<float>(), BH, S, D, scale, S);
    return out;
}
"""
