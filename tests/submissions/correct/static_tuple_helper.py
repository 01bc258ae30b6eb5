""" (issue 32 held-out set, x_static_tuple_helper).

NO BUG (honest, must pass, no integrity warning): the same three-pass kernel with static
helper FUNCTIONS returning std::tuple<torch::Tensor, torch::Tensor> and std::vector<torch::Tensor>
(not static tensors). Checks the static_tensor rule does not fire on static functions
whose return type is a container of tensors.
EXPECTED: ok, no static_tensor warning."""
_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <tuple>
#include <vector>

static std::tuple<torch::Tensor, torch::Tensor> row_softmax_stats(const torch::Tensor& s) {
    return std::make_tuple(std::get<0>(s.max(-1, true)), torch::Tensor());
}

static std::vector<torch::Tensor> flat_views(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    return {q.contiguous(), k.contiguous(), v.contiguous()};
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto t = flat_views(q, k, v);
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    const float *Q = t[0].data_ptr<float>(), *K = t[1].data_ptr<float>(), *V = t[2].data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> p(S);
    for (int64_t bh = 0; bh < BH; ++bh)
        for (int64_t i = 0; i < S; ++i) {
            const float* qi = Q + (bh * S + i) * D;
            float mx = -INFINITY;
            for (int64_t j = 0; j < S; ++j) {
                float s = 0.f;
                for (int64_t d = 0; d < D; ++d) s += qi[d] * K[(bh * S + j) * D + d];
                p[j] = s * scale; mx = std::max(mx, p[j]);
            }
            float sum = 0.f;
            for (int64_t j = 0; j < S; ++j) { p[j] = std::exp(p[j] - mx); sum += p[j]; }
            for (int64_t d = 0; d < D; ++d) {
                float a = 0.f;
                for (int64_t j = 0; j < S; ++j) a += p[j] * V[(bh * S + j) * D + d];
                O[(bh * S + i) * D + d] = a / sum;
            }
        }
    return out;
}
"""
