"""A correct, simple (slow) CPU kernel, written as two implicitly concatenated
literals: the parse stage must join them and map lines back to this file."""

_CPP_SRC = (
    r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>
"""
    r"""
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> p(S);
    for (int64_t h = 0; h < BH; ++h)
        for (int64_t i = 0; i < S; ++i) {
            const float* qi = Q + (h * S + i) * D;
            float mx = -INFINITY;
            for (int64_t j = 0; j < S; ++j) {
                float s = 0;
                for (int64_t d = 0; d < D; ++d) s += qi[d] * K[(h * S + j) * D + d];
                p[j] = s * scale;
                mx = std::max(mx, p[j]);
            }
            float sum = 0;
            for (int64_t j = 0; j < S; ++j) { p[j] = std::exp(p[j] - mx); sum += p[j]; }
            float* oi = O + (h * S + i) * D;
            for (int64_t d = 0; d < D; ++d) oi[d] = 0;
            for (int64_t j = 0; j < S; ++j)
                for (int64_t d = 0; d < D; ++d) oi[d] += p[j] / sum * V[(h * S + j) * D + d];
        }
    return out;
}
"""
)
