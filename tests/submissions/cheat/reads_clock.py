"""A correct scalar kernel that reads std::chrono (harmless here): the static scan's
warning tier flags it for a human (`timing_calls`) and the verdict stays ok."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <chrono>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto started = std::chrono::steady_clock::now();   // flagged: timing calls
    (void)started;
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
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
                for (int64_t j = 0; j < S; ++j) acc += p[j] * V[(h * S + j) * D + d];
                O[(h * S + i) * D + d] = acc / sum;
            }
        }
    return out;
}
"""
