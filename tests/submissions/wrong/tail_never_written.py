"""Computes only whole tiles of 32 query rows into torch::empty_like (never written: the
last 13 rows at S=333). With the grader's NaN poison the message counts exactly the
elements never written: 2 x 3 heads x 13 rows x 64 = 4992 of 127872, rows 320..332."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>

// softmax(q k^T / sqrt(D)) v with plain loops; the defect is marked DEFECT.
static void reference_loops(const float* Q, const float* K, const float* V, float* O,
                            int64_t BH, int64_t S, int64_t D, float scale, int64_t rows_done) {
    for (int64_t h = 0; h < BH; ++h)
        for (int64_t i = 0; i < rows_done; ++i) {
            float mx = -INFINITY;
            for (int64_t j = 0; j < S; ++j) {
                float s = 0;
                for (int64_t d = 0; d < D; ++d) s += Q[(h * S + i) * D + d] * K[(h * S + j) * D + d];
                mx = std::max(mx, s * scale);
            }
            float sum = 0;
            for (int64_t d = 0; d < D; ++d) O[(h * S + i) * D + d] = 0;
            for (int64_t j = 0; j < S; ++j) {
                float s = 0;
                for (int64_t d = 0; d < D; ++d) s += Q[(h * S + i) * D + d] * K[(h * S + j) * D + d];
                const float p = std::exp(s * scale - mx);
                sum += p;
                for (int64_t d = 0; d < D; ++d) O[(h * S + i) * D + d] += p * V[(h * S + j) * D + d];
            }
            for (int64_t d = 0; d < D; ++d) O[(h * S + i) * D + d] /= sum;
        }
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);       // DEFECT (with the one below): rows past the tiles keep garbage
    float scale = 1.0f / std::sqrt((float)D);
    int64_t rows_done = S / 32 * 32;       // DEFECT: drops the last partial tile of 32 rows
    reference_loops(q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(),
                    out.data_ptr<float>(), BH, S, D, scale, rows_done);
    return out;
}
"""
