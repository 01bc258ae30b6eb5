"""A softmax without the max shift, exp() of the raw scores: right on the standard-normal
configs (every score far below 88.7), NaN on the large-score config (q and k x 8), where
exp() overflows float32 and the row's sum becomes inf."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::zeros_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> p(S);
    for (int64_t h = 0; h < BH; ++h)
        for (int64_t i = 0; i < S; ++i) {
            float sum = 0;
            for (int64_t j = 0; j < S; ++j) {
                float s = 0;
                for (int64_t d = 0; d < D; ++d) s += Q[(h * S + i) * D + d] * K[(h * S + j) * D + d];
                p[j] = std::exp(s * scale);          // DEFECT: no max subtracted before exp()
                sum += p[j];
            }
            for (int64_t j = 0; j < S; ++j)
                for (int64_t d = 0; d < D; ++d) O[(h * S + i) * D + d] += p[j] / sum * V[(h * S + j) * D + d];
        }
    return out;
}
"""
