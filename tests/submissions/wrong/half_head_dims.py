"""Student kernel with a hand-unrolled P V loop (issue 32 held-out set, h10).

BUG: the P V loop is unrolled by two output dims (x, x+1) but its bound is D / 2 instead of
D, so only output columns 0 .. D/2 - 1 are written (into torch::zeros: the rest stay 0).
Wrong on every config: columns 32..63 at D = 64, 64..127 at D = 128.
EXPECTED DIAGNOSIS: wrong_answer on every config; "only the first D/2 output dims written
(a loop over d that stops at D/2)"; must NOT say "head dimension hard-coded to 64"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    torch::Tensor out = torch::zeros_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> w(S);
    for (int bh = 0; bh < B * H; ++bh) {
        const float *Qh = Q + (size_t)bh * S * D, *Kh = K + (size_t)bh * S * D, *Vh = V + (size_t)bh * S * D;
        float* Oh = O + (size_t)bh * S * D;
        for (int i = 0; i < S; ++i) {
            float mx = -INFINITY;
            for (int j = 0; j < S; ++j) {
                float s = 0.f;
                for (int x = 0; x < D; ++x) s += Qh[i * D + x] * Kh[j * D + x];
                w[j] = s * scale;
                mx = std::max(mx, w[j]);
            }
            float sum = 0.f;
            for (int j = 0; j < S; ++j) { w[j] = std::exp(w[j] - mx); sum += w[j]; }
            for (int x = 0; x < D / 2; x += 2) {          // should be x < D
                float a0 = 0.f, a1 = 0.f;
                for (int j = 0; j < S; ++j) {
                    a0 += w[j] * Vh[j * D + x];
                    a1 += w[j] * Vh[j * D + x + 1];
                }
                Oh[i * D + x] = a0 / sum;
                Oh[i * D + x + 1] = a1 / sum;
            }
        }
    }
    return out;
}
"""
