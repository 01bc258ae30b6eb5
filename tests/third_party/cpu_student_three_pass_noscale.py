"""Third-party style: a student's three-pass CPU attention as published for a university
assignment (scores = Q·Kᵀ into a full S×S buffer, a row softmax, then P·V; see MANIFEST.toml),
with the classic slip: the 1/√D scale left out. Wrong on every config; the diagnosis must
name the missing scale.
Written here for the grader's tests; licence: the project's."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <vector>
#include <cmath>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    int B = q.size(0), H = q.size(1), N = q.size(2), d = q.size(3);
    torch::Tensor O = torch::zeros({B, H, N, d});
    auto Q = q.accessor<float, 4>();
    auto K = k.accessor<float, 4>();
    auto V = v.accessor<float, 4>();
    auto Oa = O.accessor<float, 4>();
    std::vector<float> QK(N * N);
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            // pass 1: QK^t
            for (int i = 0; i < N; i++)
                for (int j = 0; j < N; j++) {
                    float val = 0;
                    for (int x = 0; x < d; x++) val += Q[b][h][i][x] * K[b][h][j][x];
                    QK[i * N + j] = val;
                }
            // pass 2: softmax of each row
            for (int i = 0; i < N; i++) {
                float mx = QK[i * N];
                for (int j = 1; j < N; j++) mx = std::max(mx, QK[i * N + j]);
                float sum = 0;
                for (int j = 0; j < N; j++) { QK[i * N + j] = std::exp(QK[i * N + j] - mx); sum += QK[i * N + j]; }
                for (int j = 0; j < N; j++) QK[i * N + j] /= sum;
            }
            // pass 3: P V
            for (int i = 0; i < N; i++)
                for (int x = 0; x < d; x++) {
                    float val = 0;
                    for (int j = 0; j < N; j++) val += QK[i * N + j] * V[b][h][j][x];
                    Oa[b][h][i][x] = val;
                }
        }
    }
    return O;
}
"""
