"""Student accessor attention: softmax per row in a local vector, then P V (issue 32 held-out set, h03).

BUG: accessor-style kernel reads V as V[b][h][x][j] (dim index first) instead of
V[b][h][j][x] in the P V product. With accessor strides (D, 1) that reads flat element
x*D + j of the (b, h) slice: a (D x D)-ish window of V, not V transposed as a (D, S) matrix.
EXPECTED DIAGNOSIS: wrong_answer on every config; "V indexed with its two last indices
swapped (V[..][x][j] instead of V[..][j][x])"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto Q = q.accessor<float, 4>();
    auto K = k.accessor<float, 4>();
    auto V = v.accessor<float, 4>();
    auto out = torch::zeros_like(q);
    auto O = out.accessor<float, 4>();
    int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    float scale = 1.0f / sqrtf((float)D);
    std::vector<float> w(S);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < S; i++) {
                float mx = -1e30f;
                for (int j = 0; j < S; j++) {
                    float s = 0;
                    for (int x = 0; x < D; x++) s += Q[b][h][i][x] * K[b][h][j][x];
                    w[j] = s * scale;
                    mx = fmaxf(mx, w[j]);
                }
                float tot = 0;
                for (int j = 0; j < S; j++) { w[j] = expf(w[j] - mx); tot += w[j]; }
                for (int x = 0; x < D; x++) {
                    float acc = 0;
                    for (int j = 0; j < S; j++) acc += w[j] * V[b][h][x][j];   // should be V[b][h][j][x]
                    O[b][h][i][x] = acc / tot;
                }
            }
    return out;
}
"""
