"""Student three-pass attention: scores, softmax, P V, through accessors (issue 32 held-out set, h01).

BUG: three-pass naive kernel with an S x S score buffer; every key loop runs j < S - 1,
so the last key is never scored, never in the softmax and never in P V (an off-by-one
copied from a "j + 1 < S" neighbour loop). Wrong on every config by a small, smooth amount.
EXPECTED DIAGNOSIS: wrong_answer on every config; "the last key (j = S-1) left out" /
"a key loop that stops one short" (the keys-left-out formula with keys = S - 1)."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::zeros_like(q);
    auto scores = torch::zeros({S, S}, q.options());
    auto Q = q.accessor<float, 4>(), K = k.accessor<float, 4>(), V = v.accessor<float, 4>();
    auto O = out.accessor<float, 4>();
    auto P = scores.accessor<float, 2>();
    const float scale = 1.0f / std::sqrt((float)D);
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            // pass 1: scores
            for (int i = 0; i < S; i++)
                for (int j = 0; j < S - 1; j++) {
                    float dot = 0.0f;
                    for (int x = 0; x < D; x++) dot += Q[b][h][i][x] * K[b][h][j][x];
                    P[i][j] = dot * scale;
                }
            // pass 2: softmax per row
            for (int i = 0; i < S; i++) {
                float mx = -INFINITY;
                for (int j = 0; j < S - 1; j++) mx = std::max(mx, P[i][j]);
                float sum = 0.0f;
                for (int j = 0; j < S - 1; j++) { P[i][j] = std::exp(P[i][j] - mx); sum += P[i][j]; }
                for (int j = 0; j < S - 1; j++) P[i][j] /= sum;
            }
            // pass 3: P V
            for (int i = 0; i < S; i++)
                for (int x = 0; x < D; x++) {
                    float acc = 0.0f;
                    for (int j = 0; j < S - 1; j++) acc += P[i][j] * V[b][h][j][x];
                    O[b][h][i][x] = acc;
                }
        }
    }
    return out;
}
"""
