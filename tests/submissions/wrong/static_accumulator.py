"""Three passes per (batch, head) with scratch buffers kept as `static` (issue 32 held-out set of
2026-11-27, in the style of a CS149-style "naive attention" solution).

BUG: the P·V accumulator is a `static std::vector`, zeroed only when it first grows: it keeps
what the previous (b, h) and the previous call added. No threads anywhere, so it is not a race.
EXPECTED DIAGNOSIS: wrong_answer; the output changes from one call to the next on the same inputs,
and the library starts no threads: state kept between calls (a static accumulator never reset),
never "OpenMP threads sharing a scratch buffer"."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <vector>
#include <cmath>
#include <algorithm>

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    q = q.contiguous(); k = k.contiguous(); v = v.contiguous();
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    const float* Q = q.data_ptr<float>();
    const float* K = k.data_ptr<float>();
    const float* V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);

    static std::vector<float> scores;
    static std::vector<float> accum;
    if (scores.size() < (size_t)S * S) scores.resize((size_t)S * S);
    if (accum.size() < (size_t)S * D) accum.resize((size_t)S * D, 0.0f);

    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            const size_t off = ((size_t)b * H + h) * S * D;
            const float* Qh = Q + off;
            const float* Kh = K + off;
            const float* Vh = V + off;

            // pass 1: scores = Q K^T * scale
            for (int i = 0; i < S; i++)
                for (int j = 0; j < S; j++) {
                    float dot = 0.0f;
                    for (int d = 0; d < D; d++) dot += Qh[i * D + d] * Kh[j * D + d];
                    scores[(size_t)i * S + j] = dot * scale;
                }

            // pass 2: row softmax
            for (int i = 0; i < S; i++) {
                float* row = &scores[(size_t)i * S];
                float mx = row[0];
                for (int j = 1; j < S; j++) mx = std::max(mx, row[j]);
                float sum = 0.0f;
                for (int j = 0; j < S; j++) { row[j] = std::exp(row[j] - mx); sum += row[j]; }
                for (int j = 0; j < S; j++) row[j] /= sum;
            }

            // pass 3: accum = P V, then write out
            for (int i = 0; i < S; i++)
                for (int j = 0; j < S; j++) {
                    const float p = scores[(size_t)i * S + j];
                    for (int d = 0; d < D; d++) accum[(size_t)i * D + d] += p * Vh[j * D + d];
                }
            std::copy(accum.begin(), accum.begin() + (size_t)S * D, O + off);
        }
    }
    return out;
}
"""
