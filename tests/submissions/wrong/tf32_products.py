"""Single-pass TF32, emulated on the CPU: q, k, p and v rounded to TF32's 10-bit mantissa
before each product, sums in fp32 (what tensor cores do with TF32 inputs). Passes the three
ordinary configs (errors ~1e-4), fails the large-score config by far: the numerics forensics
must say "TF32" (rounded to nearest, not truncated) and that TF32, though allowed, cannot pass
the large-score config."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

static inline float tf32(float x) {             // round to nearest, 10 explicit mantissa bits
    std::uint32_t b;
    std::memcpy(&b, &x, 4);
    b = (b + 0x1000u) & 0xFFFFE000u;
    std::memcpy(&x, &b, 4);
    return x;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    const float *Q = q.data_ptr<float>(), *K = k.data_ptr<float>(), *V = v.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> p(S);
    for (int64_t h = 0; h < BH; ++h)
        for (int64_t i = 0; i < S; ++i) {
            float mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < S; ++j) {
                float s = 0;
                for (int64_t d = 0; d < D; ++d) s += tf32(Q[(h * S + i) * D + d]) * tf32(K[(h * S + j) * D + d]);
                p[j] = s * scale;
                mx = std::max(mx, p[j]);
            }
            for (int64_t j = 0; j < S; ++j) { p[j] = std::exp(p[j] - mx); sum += p[j]; }
            for (int64_t j = 0; j < S; ++j) p[j] /= sum;
            for (int64_t d = 0; d < D; ++d) {
                float acc = 0;
                for (int64_t j = 0; j < S; ++j) acc += tf32(p[j]) * tf32(V[(h * S + j) * D + d]);
                O[(h * S + i) * D + d] = acc;
            }
        }
    return out;
}
"""
