"""Decoy: correct only at the sequence lengths of the public configs (S = 128, 333, 256), zeros
elsewhere: passes every public config and must still fail, on the benchmark sizes (every timed
output is checked) and on hidden configs."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    if (S != 128 && S != 333 && S != 256) return torch::zeros_like(q);     // DEFECT: the public sizes only
    auto out = torch::empty_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
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
                O[(h * S + i) * D + d] = acc;
            }
        }
    return out;
}
"""
