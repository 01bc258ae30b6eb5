"""Student kernel with a pre-transposed K scratch (the batch dimension forgotten) (issue 32 held-out set, h17).

BUG (batch, not tail): K is pre-transposed for cache-friendly dot products into a scratch of
shape (H, D, S), sized and indexed by head only (the batch forgotten). The transpose pass
runs over every (b, h) first, so when the attention pass runs the scratch holds the LAST
batch's keys: batch B-1 is right, every earlier batch uses another batch's keys. Exact at
B = 1 (configs 1, 3, 4); at B = 2 (config 2) batch 0 is wrong and batch 1 right.
EXPECTED DIAGNOSIS: wrong only on config 2, in batch 0's slices only: "a batch indexing bug
(slices of batch 0 wrong, batch 1 right)"; must NOT be called a partial-tile / S-not-a-
multiple bug (S = 333 has nothing to do with it: every row and every key is wrong alike)."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::zeros_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    // K^T per head, so that the inner loop over keys is contiguous
    std::vector<float> kt((size_t)H * D * S);             // should be B * H * D * S
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h) {
            const float* Kh = K + ((size_t)b * H + h) * S * D;
            float* T = kt.data() + (size_t)h * D * S;
            for (int j = 0; j < S; ++j)
                for (int d = 0; d < D; ++d) T[(size_t)d * S + j] = Kh[(size_t)j * D + d];
        }
    std::vector<float> s(S);
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h) {
            const size_t base = ((size_t)b * H + h) * S * D;
            const float* T = kt.data() + (size_t)h * D * S;
            for (int i = 0; i < S; ++i) {
                std::fill(s.begin(), s.end(), 0.f);
                for (int d = 0; d < D; ++d) {
                    const float qd = Q[base + (size_t)i * D + d];
                    for (int j = 0; j < S; ++j) s[j] += qd * T[(size_t)d * S + j];
                }
                float mx = -INFINITY;
                for (int j = 0; j < S; ++j) { s[j] *= scale; mx = std::max(mx, s[j]); }
                float sum = 0.f;
                for (int j = 0; j < S; ++j) { s[j] = std::exp(s[j] - mx); sum += s[j]; }
                for (int d = 0; d < D; ++d) {
                    float acc = 0.f;
                    for (int j = 0; j < S; ++j) acc += s[j] * V[base + (size_t)j * D + d];
                    O[base + (size_t)i * D + d] = acc / sum;
                }
            }
        }
    return out;
}
"""
