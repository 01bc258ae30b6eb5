"""Student three-pass attention with a half-precision score matrix (issue 32 held-out set, h08).

BUG (precision): the S x S score buffer is stored in c10::Half "to save memory": each score
q.k/sqrt(D) is rounded to fp16 (10-bit mantissa) before the softmax. Small error on the
ordinary configs; on the large-score config (scores up to ~300) the rounding of a score
is ~0.1-0.25, so exp() weights are off by ~10-25%: fails config 4 (and maybe others).
EXPECTED DIAGNOSIS: wrong_answer on config 4 (large scores); the numerics forensics should
name fp16 (10-bit mantissa) as the precision, "keep the scores in fp32"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <c10/util/Half.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::zeros_like(q);
    auto Q = q.accessor<float, 4>(), K = k.accessor<float, 4>(), V = v.accessor<float, 4>();
    auto O = out.accessor<float, 4>();
    std::vector<c10::Half> scores((size_t)S * S);      // half the memory of float
    std::vector<float> p(S);
    const float scale = 1.0f / std::sqrt((float)D);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            for (int i = 0; i < S; i++)
                for (int j = 0; j < S; j++) {
                    float s = 0;
                    for (int x = 0; x < D; x++) s += Q[b][h][i][x] * K[b][h][j][x];
                    scores[(size_t)i * S + j] = c10::Half(s * scale);
                }
            for (int i = 0; i < S; i++) {
                float mx = -INFINITY;
                for (int j = 0; j < S; j++) mx = std::max(mx, (float)scores[(size_t)i * S + j]);
                float sum = 0;
                for (int j = 0; j < S; j++) { p[j] = std::exp((float)scores[(size_t)i * S + j] - mx); sum += p[j]; }
                for (int x = 0; x < D; x++) {
                    float acc = 0;
                    for (int j = 0; j < S; j++) acc += p[j] * V[b][h][j][x];
                    O[b][h][i][x] = acc / sum;
                }
            }
        }
    return out;
}
"""
