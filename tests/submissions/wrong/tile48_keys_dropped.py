"""Student blocked online-softmax attention, key tiles of 48 (issue 32 held-out set, h18).

BUG (a tile bug on every config): keys processed in tiles of 48 (48 x 64 floats = 12 KiB,
"fits L1 beside the Q row"), the loop bound S / 48 * 48 drops the last partial tile of
keys. No public S is a multiple of 48 (128 = 2*48+32, 333 = 6*48+45, 256 = 5*48+16), so
every config fails: keys from 96 / 288 / 240 on are left out of the softmax and P V.
EXPECTED DIAGNOSIS: wrong_answer on every config; "the keys past the last full tile of 48
left out"; must NOT say "not in tiles or sizes"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

#define KT 48

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::zeros_like(q);
    auto Q = q.accessor<float, 4>(), K = k.accessor<float, 4>(), V = v.accessor<float, 4>();
    auto O = out.accessor<float, 4>();
    const float scale = 1.0f / std::sqrt((float)D);
    const int64_t n_tiles = S / KT;                        // the partial tile is lost
    std::vector<float> acc(D), s(KT);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < S; ++i) {
                float m = -INFINITY, l = 0.f;
                std::fill(acc.begin(), acc.end(), 0.f);
                for (int64_t t = 0; t < n_tiles; ++t) {
                    float mt = -INFINITY;
                    for (int64_t jj = 0; jj < KT; ++jj) {
                        const int64_t j = t * KT + jj;
                        float dot = 0.f;
                        for (int64_t x = 0; x < D; ++x) dot += Q[b][h][i][x] * K[b][h][j][x];
                        s[jj] = dot * scale;
                        mt = std::max(mt, s[jj]);
                    }
                    const float mn = std::max(m, mt), c = std::exp(m - mn);
                    l *= c;
                    for (int64_t x = 0; x < D; ++x) acc[x] *= c;
                    for (int64_t jj = 0; jj < KT; ++jj) {
                        const float p = std::exp(s[jj] - mn);
                        l += p;
                        for (int64_t x = 0; x < D; ++x) acc[x] += p * V[b][h][t * KT + jj][x];
                    }
                    m = mn;
                }
                for (int64_t x = 0; x < D; ++x) O[b][h][i][x] = acc[x] / l;
            }
    return out;
}
"""
