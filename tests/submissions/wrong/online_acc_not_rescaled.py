"""Student fused online-softmax attention, one query row at a time, key blocks of 32 (issue 32 held-out set, h05).

BUG: blocked online softmax (FlashAttention-style, key blocks of 32, tail masked correctly)
that rescales the running sum l by exp(m_old - m_new) when the max grows but forgets to
rescale the output accumulator acc. Wrong on every config (rows whose max moves after the
first block get too much weight from the early blocks).
EXPECTED DIAGNOSIS: wrong_answer on every config; "the online-softmax rescaling of the
accumulator forgotten (acc *= exp(m_old - m_new))"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>
#include <vector>

#define BLOCK_N 32

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> acc(D), s(BLOCK_N);
    for (int64_t bh = 0; bh < B * H; ++bh) {
        const int64_t base = bh * S * D;
        for (int64_t i = 0; i < S; ++i) {
            const float* qi = Q + base + i * D;
            float m = -INFINITY, l = 0.f;
            std::fill(acc.begin(), acc.end(), 0.f);
            for (int64_t j0 = 0; j0 < S; j0 += BLOCK_N) {
                const int64_t n = std::min<int64_t>(BLOCK_N, S - j0);
                float mblk = -INFINITY;
                for (int64_t t = 0; t < n; ++t) {
                    const float* kj = K + base + (j0 + t) * D;
                    float dot = 0.f;
                    for (int64_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
                    s[t] = dot * scale;
                    mblk = std::max(mblk, s[t]);
                }
                const float mnew = std::max(m, mblk);
                const float alpha = std::exp(m - mnew);
                l *= alpha;
                // (missing) for (d) acc[d] *= alpha;
                for (int64_t t = 0; t < n; ++t) {
                    const float p = std::exp(s[t] - mnew);
                    l += p;
                    const float* vj = V + base + (j0 + t) * D;
                    for (int64_t d = 0; d < D; ++d) acc[d] += p * vj[d];
                }
                m = mnew;
            }
            for (int64_t d = 0; d < D; ++d) O[base + i * D + d] = acc[d] / l;
        }
    }
    return out;
}
"""
