"""Student attention computed in double precision (issue 32 held-out set, h16).

NO BUG (honest, must pass): accessor style, every product and sum in double, the result
cast to float at the end (slow but exact).
EXPECTED: ok on every config; numerics "fp32" (or better), no warning."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty({B, H, S, D}, q.options());
    auto Q = q.accessor<float, 4>(), K = k.accessor<float, 4>(), V = v.accessor<float, 4>();
    auto O = out.accessor<float, 4>();
    const double scale = 1.0 / std::sqrt((double)D);
    std::vector<double> p(S), acc(D);
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h)
            for (int i = 0; i < S; ++i) {
                double mx = -INFINITY;
                for (int j = 0; j < S; ++j) {
                    double s = 0.0;
                    for (int x = 0; x < D; ++x) s += (double)Q[b][h][i][x] * (double)K[b][h][j][x];
                    p[j] = s * scale;
                    if (p[j] > mx) mx = p[j];
                }
                double sum = 0.0;
                for (int j = 0; j < S; ++j) { p[j] = std::exp(p[j] - mx); sum += p[j]; }
                for (int x = 0; x < D; ++x) acc[x] = 0.0;
                for (int j = 0; j < S; ++j)
                    for (int x = 0; x < D; ++x) acc[x] += p[j] * (double)V[b][h][j][x];
                for (int x = 0; x < D; ++x) O[b][h][i][x] = (float)(acc[x] / sum);
            }
    return out;
}
"""
