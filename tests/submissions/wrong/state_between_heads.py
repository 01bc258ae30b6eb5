"""Carries a running sum from one (batch, head) to the next: the output accumulator is a
static buffer zeroed once, so head 0 is right and every later head adds onto the heads before
it. The offsets are right (called once per (b, h) it passes): the judge's twin-heads re-run
must say "carries state", not "check the batch/head offsets"."""

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
    std::vector<float> p(S), acc(S * D, 0.0f);        // DEFECT: zeroed once, not for every (b, h)
    for (int64_t h = 0; h < BH; ++h) {
        for (int64_t i = 0; i < S; ++i) {
            float mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < S; ++j) {
                float s = 0;
                for (int64_t d = 0; d < D; ++d) s += Q[(h * S + i) * D + d] * K[(h * S + j) * D + d];
                p[j] = s * scale;
                mx = std::max(mx, p[j]);
            }
            for (int64_t j = 0; j < S; ++j) { p[j] = std::exp(p[j] - mx); sum += p[j]; }
            for (int64_t j = 0; j < S; ++j)
                for (int64_t d = 0; d < D; ++d) acc[i * D + d] += p[j] / sum * V[(h * S + j) * D + d];
        }
        for (int64_t x = 0; x < S * D; ++x) O[h * S * D + x] = acc[x];
    }
    return out;
}
"""
