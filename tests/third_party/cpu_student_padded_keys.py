"""Third-party style: a student's blocked ("tiled") CPU attention as published for a
university assignment: keys in blocks of 64, the last block padded with zero keys, and the
padded scores (0) kept in the softmax, so each row's sum gains exp(0 - max) per padded key
(see MANIFEST.toml). Right where S is a multiple of 64 (S = 128, 256), wrong at S = 333: the
diagnosis must name the row sum, and the configs the tile.
Written here for the grader's tests; licence: the project's."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <vector>
#include <cmath>

#define BLOCK 64

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), N = q.size(2), d = q.size(3);
    const int NP = (N + BLOCK - 1) / BLOCK * BLOCK;            // keys padded to whole blocks
    auto O = torch::zeros_like(q);
    const float* Q = q.data_ptr<float>();
    const float* K = k.data_ptr<float>();
    const float* V = v.data_ptr<float>();
    float* out = O.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)d);
    std::vector<float> kpad(NP * d), vpad(NP * d), s(NP);
    for (int bh = 0; bh < B * H; bh++) {
        std::fill(kpad.begin(), kpad.end(), 0.0f);
        std::fill(vpad.begin(), vpad.end(), 0.0f);
        for (int j = 0; j < N * d; j++) { kpad[j] = K[bh * N * d + j]; vpad[j] = V[bh * N * d + j]; }
        for (int i = 0; i < N; i++) {
            float mx = -INFINITY;
            for (int jb = 0; jb < NP; jb += BLOCK)
                for (int j = jb; j < jb + BLOCK; j++) {
                    float acc = 0;
                    for (int x = 0; x < d; x++) acc += Q[(bh * N + i) * d + x] * kpad[j * d + x];
                    s[j] = acc * scale;                       // padded keys score 0 and stay in
                    mx = std::max(mx, s[j]);
                }
            float sum = 0;
            for (int j = 0; j < NP; j++) { s[j] = std::exp(s[j] - mx); sum += s[j]; }
            for (int x = 0; x < d; x++) {
                float acc = 0;
                for (int j = 0; j < NP; j++) acc += s[j] * vpad[j * d + x];
                out[(bh * N + i) * d + x] = acc / sum;
            }
        }
    }
    return O;
}
"""
