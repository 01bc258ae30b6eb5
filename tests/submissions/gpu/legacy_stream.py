"""A correct (slow) CUDA kernel launched the way the extension tutorial does: on the legacy
default stream (`<<<blocks, threads>>>`, no stream). Captured in a CUDA graph, torch's
non-blocking capture stream leaves the launch out: it runs once, eagerly, during the capture,
and the replays leave the output as that run wrote it. The grader must see that and time it
with events, not judge the graph's stale outputs: ok."""

_CUDA_SRC = r"""
#include <torch/extension.h>

// One thread per query row, plain loops: slow but simple.
__global__ void attention_rows(const float* q, const float* k, const float* v, float* out,
                               int BH, int S, int D, float scale, int rows_done) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= BH * S) return;
    const int h = r / S, i = r % S;
    if (i >= rows_done) return;

    const float* qi = q + (size_t)r * D;
    float mx = -INFINITY;
    for (int j = 0; j < S; ++j) {
        float s = 0.f;
        for (int d = 0; d < D; ++d) s += qi[d] * k[((size_t)h * S + j) * D + d];
        mx = fmaxf(mx, s * scale);
    }
    float sum = 0.f;
    float* o = out + (size_t)r * D;
    for (int d = 0; d < D; ++d) o[d] = 0.f;
    for (int j = 0; j < S; ++j) {
        float s = 0.f;
        for (int d = 0; d < D; ++d) s += qi[d] * k[((size_t)h * S + j) * D + d];
        const float p = expf(s * scale - mx);
        sum += p;
        for (int d = 0; d < D; ++d) o[d] += p * v[((size_t)h * S + j) * D + d];
    }
    for (int d = 0; d < D; ++d) o[d] /= sum;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    int rows_done = S;

    const int threads = 128, blocks = (BH * S + threads - 1) / threads;
    attention_rows<<<blocks, threads>>>(
        q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), out.data_ptr<float>(),
        BH, S, D, 1.0f / sqrtf((float)D), rows_done);
    return out;
}
"""
