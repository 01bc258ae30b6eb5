"""Third-party style: a student's single-pass ("online softmax") CPU attention as published
for a university assignment, with the running max and sum declared once outside the (b, h)
loops and reset only per row of the first head (see MANIFEST.toml): the first head is right,
the state leaks into every later one. The offsets are right: the diagnosis must say the
state is carried between heads.
Written here for the grader's tests; licence: the project's."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <vector>
#include <cmath>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), N = q.size(2), d = q.size(3);
    auto O = torch::zeros_like(q);
    auto Q = q.accessor<float, 4>();
    auto K = k.accessor<float, 4>();
    auto V = v.accessor<float, 4>();
    auto Oa = O.accessor<float, 4>();
    const float scale = 1.0f / std::sqrt((float)d);
    std::vector<float> m(N, -INFINITY), l(N, 0.0f);              // BUG: shared by every (b, h)
    std::vector<float> acc(d);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < N; i++) {
                std::fill(acc.begin(), acc.end(), 0.0f);
                for (int j = 0; j < N; j++) {
                    float s = 0;
                    for (int x = 0; x < d; x++) s += Q[b][h][i][x] * K[b][h][j][x];
                    s *= scale;
                    const float mnew = std::max(m[i], s);
                    const float c = std::exp(m[i] - mnew), p = std::exp(s - mnew);
                    l[i] = l[i] * c + p;
                    for (int x = 0; x < d; x++) acc[x] = acc[x] * c + p * V[b][h][j][x];
                    m[i] = mnew;
                }
                for (int x = 0; x < d; x++) Oa[b][h][i][x] = acc[x] / l[i];
            }
    return O;
}
"""
