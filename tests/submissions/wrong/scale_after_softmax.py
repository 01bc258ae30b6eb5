"""Student three-pass attention with a flat S x S std::vector buffer, raw pointers (issue 32 held-out set, h04).

BUG: the 1/sqrt(D) scale is applied to the output after the softmax (out = softmax(q k^T) v
/ sqrt(D)) instead of to the scores. Wrong on every config.
EXPECTED DIAGNOSIS: wrong_answer on every config; "the 1/sqrt(D) scale applied after the
softmax (to the output) instead of to the scores"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    torch::Tensor o = torch::zeros_like(q);
    const float* Q = q.data_ptr<float>();
    const float* K = k.data_ptr<float>();
    const float* V = v.data_ptr<float>();
    float* O = o.data_ptr<float>();
    std::vector<float> att((size_t)S * S);
    for (int bh = 0; bh < B * H; bh++) {
        const float* q_ = Q + (size_t)bh * S * D;
        const float* k_ = K + (size_t)bh * S * D;
        const float* v_ = V + (size_t)bh * S * D;
        float* o_ = O + (size_t)bh * S * D;
        for (int i = 0; i < S; i++)
            for (int j = 0; j < S; j++) {
                float acc = 0;
                for (int d = 0; d < D; d++) acc += q_[i * D + d] * k_[j * D + d];
                att[(size_t)i * S + j] = acc;
            }
        for (int i = 0; i < S; i++) {
            float* row = &att[(size_t)i * S];
            float m = row[0];
            for (int j = 1; j < S; j++) m = std::max(m, row[j]);
            float z = 0;
            for (int j = 0; j < S; j++) { row[j] = std::exp(row[j] - m); z += row[j]; }
            for (int j = 0; j < S; j++) row[j] /= z;
        }
        const float scale = 1.0f / std::sqrt((float)D);
        for (int i = 0; i < S; i++)
            for (int d = 0; d < D; d++) {
                float acc = 0;
                for (int j = 0; j < S; j++) acc += att[(size_t)i * S + j] * v_[j * D + d];
                o_[i * D + d] = acc * scale;     // scale belongs on the scores, before the softmax
            }
    }
    return o;
}
"""
