"""Student OpenMP attention: parallel over rows, scores in a shared scratch row (issue 32 held-out set, h06).

BUG: OpenMP over the query rows (#pragma omp parallel for) with the score row buffer
std::vector<float> p(S) declared OUTSIDE the parallel region: every thread writes and reads
the same p, so rows get each other's weights. A data race; the output changes run to run
(on one thread it would be right).
EXPECTED DIAGNOSIS: wrong_answer; "the output changes from run to run: a race" (the
differential re-runs), naming a shared scratch buffer / missing private copy."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <omp.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::zeros_like(q);
    const float* Q = q.data_ptr<float>();
    const float* K = k.data_ptr<float>();
    const float* V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> p(S);                     // shared by all threads
    for (int bh = 0; bh < B * H; bh++) {
        const long base = (long)bh * S * D;
        #pragma omp parallel for schedule(static)
        for (int i = 0; i < S; i++) {
            float mx = -INFINITY;
            for (int j = 0; j < S; j++) {
                float s = 0.f;
                for (int d = 0; d < D; d++) s += Q[base + (long)i * D + d] * K[base + (long)j * D + d];
                p[j] = s * scale;
                mx = std::max(mx, p[j]);
            }
            float sum = 0.f;
            for (int j = 0; j < S; j++) { p[j] = std::exp(p[j] - mx); sum += p[j]; }
            for (int d = 0; d < D; d++) {
                float acc = 0.f;
                for (int j = 0; j < S; j++) acc += p[j] * V[base + (long)j * D + d];
                O[base + (long)i * D + d] = acc / sum;
            }
        }
    }
    return out;
}
"""
