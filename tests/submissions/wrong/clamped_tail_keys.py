"""Student blocked attention: scores in tiles of 32 keys, softmax over the padded row (issue 32 held-out set, h11).

BUG: blocked over keys in tiles of 32 with the key index clamped to S - 1 instead of
masked (the "clamp the load" habit): at S = 333 the last tile's 19 missing keys all read key
332 again, so the last key is counted 20 times in the softmax and in P V. Exact where S is
a multiple of 32 (128, 256); wrong at S = 333 only.
EXPECTED DIAGNOSIS: wrong only on config 2; "the last partial tile of keys read past S
(clamped, not masked): mask the keys past S out of the softmax"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>
#include <vector>

constexpr int TILE = 32;

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    const int Sp = (S + TILE - 1) / TILE * TILE;          // padded to whole tiles
    auto out = torch::zeros_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> s(Sp);
    for (int bh = 0; bh < B * H; ++bh) {
        const size_t base = (size_t)bh * S * D;
        for (int i = 0; i < S; ++i) {
            for (int j0 = 0; j0 < Sp; j0 += TILE)
                for (int t = 0; t < TILE; ++t) {
                    const int j = std::min(j0 + t, S - 1);      // clamp instead of mask
                    float dot = 0.f;
                    for (int d = 0; d < D; ++d) dot += Q[base + (size_t)i * D + d] * K[base + (size_t)j * D + d];
                    s[j0 + t] = dot * scale;
                }
            float mx = *std::max_element(s.begin(), s.end());
            float sum = 0.f;
            for (int j = 0; j < Sp; ++j) { s[j] = std::exp(s[j] - mx); sum += s[j]; }
            for (int d = 0; d < D; ++d) {
                float acc = 0.f;
                for (int j0 = 0; j0 < Sp; j0 += TILE)
                    for (int t = 0; t < TILE; ++t)
                        acc += s[j0 + t] * V[base + (size_t)std::min(j0 + t, S - 1) * D + d];
                O[base + (size_t)i * D + d] = acc / sum;
            }
        }
    }
    return out;
}
"""
