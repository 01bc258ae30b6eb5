"""Student online-softmax attention with a running max that stops running (issue 32 held-out set, h13).

BUG: online softmax over key blocks of 64 whose running max is taken from the FIRST block
only (the update sits inside `if (j0 == 0)`): later blocks use exp(s - m) with that m.
Softmax is shift-invariant, so this is exact while exp() does not overflow (configs 1-3);
on the large-score config the later blocks' scores exceed m by more than 88.7 and exp()
overflows to inf: inf/inf = NaN in those rows.
EXPECTED DIAGNOSIS: wrong only on config 4 with NaN/Inf; "the max shift is applied to only
part of the row (the running max is never updated after the first block)"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    const int64_t BN = 64;
    auto out = torch::empty_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> acc(D), s(BN);
    for (int64_t bh = 0; bh < B * H; ++bh) {
        const int64_t base = bh * S * D;
        for (int64_t i = 0; i < S; ++i) {
            float m = -INFINITY, l = 0.f;
            std::fill(acc.begin(), acc.end(), 0.f);
            for (int64_t j0 = 0; j0 < S; j0 += BN) {
                const int64_t n = std::min(BN, S - j0);
                for (int64_t t = 0; t < n; ++t) {
                    float dot = 0.f;
                    for (int64_t d = 0; d < D; ++d) dot += Q[base + i * D + d] * K[base + (j0 + t) * D + d];
                    s[t] = dot * scale;
                    if (j0 == 0) m = std::max(m, s[t]);      // the max of the first block only
                }
                for (int64_t t = 0; t < n; ++t) {
                    const float p = std::exp(s[t] - m);
                    l += p;
                    for (int64_t d = 0; d < D; ++d) acc[d] += p * V[base + (j0 + t) * D + d];
                }
            }
            for (int64_t d = 0; d < D; ++d) O[base + i * D + d] = acc[d] / l;
        }
    }
    return out;
}
"""
