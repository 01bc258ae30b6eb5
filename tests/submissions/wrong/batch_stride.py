"""A batch offset bug: the (b, h) slice is found at h·S·D, the batch index left out, so every
batch after the first reads and writes batch 0's slices. Each head's own computation is right
(called on two identical heads both come out right): the message must name the offset."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::zeros_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> p(S);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h) {
            const int64_t base = h * S * D;                  // DEFECT: should be (b * H + h) * S * D
            for (int64_t i = 0; i < S; ++i) {
                float mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < S; ++j) {
                    float s = 0;
                    for (int64_t d = 0; d < D; ++d) s += Q[base + i * D + d] * K[base + j * D + d];
                    p[j] = s * scale;
                    mx = std::max(mx, p[j]);
                }
                for (int64_t j = 0; j < S; ++j) { p[j] = std::exp(p[j] - mx); sum += p[j]; }
                for (int64_t d = 0; d < D; ++d) {
                    float a = 0;
                    for (int64_t j = 0; j < S; ++j) a += p[j] / sum * V[base + j * D + d];
                    O[base + i * D + d] = a;
                }
            }
        }
    return out;
}
"""
