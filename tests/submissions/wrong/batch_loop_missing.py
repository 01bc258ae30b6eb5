"""Student accessor kernel that forgot the batch loop (issue 32 held-out set, h12).

BUG: written and tested with B = 1: the loops run over heads only and index batch 0
(q[0][h], out[0][h]); batches b >= 1 are never computed and stay 0 (torch::zeros_like).
Wrong on config 2 only (the only B > 1 config): slices (1, 0..2) are all zeros.
EXPECTED DIAGNOSIS: wrong only on config 2; "the batch dimension is never looped over /
batches >= 1 never written (zeros)"; must NOT be called a tail/tile bug, and "a wrong
batch/head offset" is at best half right (the offsets are right, the loop is missing)."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::zeros_like(q);
    auto Q = q.accessor<float, 4>(), K = k.accessor<float, 4>(), V = v.accessor<float, 4>();
    auto O = out.accessor<float, 4>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> p(S);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < S; i++) {
            float mx = -INFINITY;
            for (int j = 0; j < S; j++) {
                float s = 0.f;
                for (int x = 0; x < D; x++) s += Q[0][h][i][x] * K[0][h][j][x];
                p[j] = s * scale;
                mx = std::max(mx, p[j]);
            }
            float sum = 0.f;
            for (int j = 0; j < S; j++) { p[j] = std::exp(p[j] - mx); sum += p[j]; }
            for (int x = 0; x < D; x++) {
                float acc = 0.f;
                for (int j = 0; j < S; j++) acc += p[j] * V[0][h][j][x];
                O[0][h][i][x] = acc / sum;
            }
        }
    return out;
}
"""
