"""Student kernel that keeps the head-dim arithmetic in ints (issue 32 held-out set, h07).

BUG: the scale is 1 / (int)sqrt(D): exact at D = 64 (sqrt = 8), but at D = 128 it is 1/11
instead of 1/11.3137 (the integer sqrt truncates). Wrong only on config 3 (D = 128).
EXPECTED DIAGNOSIS: wrong only at D = 128 (config 3); "a scale of 1/11 instead of
1/sqrt(128) = 1/11.31: sqrt(D) truncated to an integer"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    int sqrt_d = std::sqrt(D);                    // int: 8 for 64, 11 for 128
    float scale = 1.0f / sqrt_d;
    auto out = torch::zeros_like(q);
    float* O = out.data_ptr<float>();
    const float* Q = q.data_ptr<float>();
    const float* K = k.data_ptr<float>();
    const float* V = v.data_ptr<float>();
    std::vector<float> sc(S);
    for (int n = 0; n < B * H; n++) {
        const float* Qn = Q + (size_t)n * S * D;
        const float* Kn = K + (size_t)n * S * D;
        const float* Vn = V + (size_t)n * S * D;
        float* On = O + (size_t)n * S * D;
        for (int i = 0; i < S; i++) {
            float mx = -INFINITY;
            for (int j = 0; j < S; j++) {
                float s = 0;
                for (int d = 0; d < D; d++) s += Qn[i * D + d] * Kn[j * D + d];
                sc[j] = s * scale;
                if (sc[j] > mx) mx = sc[j];
            }
            float sum = 0;
            for (int j = 0; j < S; j++) { sc[j] = std::exp(sc[j] - mx); sum += sc[j]; }
            for (int j = 0; j < S; j++) {
                float w = sc[j] / sum;
                for (int d = 0; d < D; d++) On[i * D + d] += w * Vn[j * D + d];
            }
        }
    }
    return out;
}
"""
