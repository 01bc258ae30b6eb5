"""Student softmax that clamps the exponent instead of subtracting the max (issue 32 held-out set, h14).

BUG: no max shift; instead the student "fixed" the inf/NaN by clamping the exponent:
p = exp(min(s, 80)). Exact on configs 1-3 (every score far below 80); on the large-score
config every score above 80 gets the same weight exp(80), so a row with several large
scores averages their V rows: finite but wrong.
EXPECTED DIAGNOSIS: wrong only on config 4, finite; "a softmax without the max shift (the
exponent clamped at 80 flattens the largest scores): subtract the row max before exp()".
Must not claim TF32/bf16 products."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::zeros_like(q);
    auto Q = q.accessor<float, 4>(), K = k.accessor<float, 4>(), V = v.accessor<float, 4>();
    auto O = out.accessor<float, 4>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> e(S);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < S; i++) {
                float z = 0.f;
                for (int j = 0; j < S; j++) {
                    float s = 0.f;
                    for (int x = 0; x < D; x++) s += Q[b][h][i][x] * K[b][h][j][x];
                    e[j] = std::exp(std::min(s * scale, 80.0f));   // avoid overflow
                    z += e[j];
                }
                for (int x = 0; x < D; x++) {
                    float acc = 0.f;
                    for (int j = 0; j < S; j++) acc += e[j] * V[b][h][j][x];
                    O[b][h][i][x] = acc / z;
                }
            }
    return out;
}
"""
