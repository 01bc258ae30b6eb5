"""Decoy: every output row is the mean of V's rows (uniform attention weights, O(S·D) work,
far faster than any honest kernel). Must fail every config, told "uniform weights"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    const float* V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    std::vector<float> mean(D);
    for (int64_t h = 0; h < BH; ++h) {
        for (int64_t d = 0; d < D; ++d) mean[d] = 0;
        for (int64_t j = 0; j < S; ++j)
            for (int64_t d = 0; d < D; ++d) mean[d] += V[(h * S + j) * D + d] / S;
        for (int64_t i = 0; i < S; ++i)
            for (int64_t d = 0; d < D; ++d) O[(h * S + i) * D + d] = mean[d];
    }
    return out;
}
"""
