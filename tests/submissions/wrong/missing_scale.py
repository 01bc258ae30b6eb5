"""Forgets the 1/sqrt(D) scale: softmax(q k^T) v, wrong on every config, off by a smooth
pattern (a sharper softmax), never by NaN."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::zeros_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    std::vector<float> p(S);
    for (int64_t h = 0; h < BH; ++h)
        for (int64_t i = 0; i < S; ++i) {
            float mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < S; ++j) {
                float s = 0;
                for (int64_t d = 0; d < D; ++d) s += Q[(h * S + i) * D + d] * K[(h * S + j) * D + d];
                p[j] = s;                            // DEFECT: not multiplied by 1/sqrt(D)
                mx = std::max(mx, p[j]);
            }
            for (int64_t j = 0; j < S; ++j) { p[j] = std::exp(p[j] - mx); sum += p[j]; }
            for (int64_t j = 0; j < S; ++j)
                for (int64_t d = 0; d < D; ++d) O[(h * S + i) * D + d] += p[j] / sum * V[(h * S + j) * D + d];
        }
    return out;
}
"""
