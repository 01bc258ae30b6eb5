"""Decoy: the softmax normalised down each column (over the queries) instead of along each row
(over the keys). Must fail every config, told "a softmax over the wrong axis"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> p(S * S);
    for (int64_t h = 0; h < BH; ++h) {
        for (int64_t i = 0; i < S; ++i)
            for (int64_t j = 0; j < S; ++j) {
                float s = 0;
                for (int64_t d = 0; d < D; ++d) s += Q[(h * S + i) * D + d] * K[(h * S + j) * D + d];
                p[i * S + j] = s * scale;
            }
        for (int64_t j = 0; j < S; ++j) {                 // DEFECT: column j normalised over i
            float mx = -INFINITY, sum = 0;
            for (int64_t i = 0; i < S; ++i) mx = std::max(mx, p[i * S + j]);
            for (int64_t i = 0; i < S; ++i) { p[i * S + j] = std::exp(p[i * S + j] - mx); sum += p[i * S + j]; }
            for (int64_t i = 0; i < S; ++i) p[i * S + j] /= sum;
        }
        for (int64_t i = 0; i < S; ++i)
            for (int64_t d = 0; d < D; ++d) {
                float acc = 0;
                for (int64_t j = 0; j < S; ++j) acc += p[i * S + j] * V[(h * S + j) * D + d];
                O[(h * S + i) * D + d] = acc;
            }
    }
    return out;
}
"""
