"""Asks for more dynamic shared memory than the default 48 KiB at D = 128 (K and V tiles of
64 rows: 64 KiB) without cudaFuncSetAttribute's opt-in: the launch is refused at D = 128
(config 3) and runs at D = 64 (32 KiB). The message must say so in the student's terms, never
"the grader's worker failed"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

constexpr int TILE = 64;

// One thread per query row; K and V tiles staged in dynamic shared memory.
__global__ void attention_rows(const float* q, const float* k, const float* v, float* out,
                               int BH, int S, int D, float scale) {
    extern __shared__ float smem[];                 // K tile, then V tile: 2 * TILE * D floats
    float* ks = smem;
    float* vs = smem + TILE * D;
    const int h = blockIdx.y, i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* qi = q + ((size_t)h * S + (i < S ? i : 0)) * D;
    float mx = -INFINITY, sum = 0.f, acc[128];
    for (int d = 0; d < D; ++d) acc[d] = 0.f;
    for (int j0 = 0; j0 < S; j0 += TILE) {
        for (int t = threadIdx.x; t < TILE * D; t += blockDim.x) {
            const int j = j0 + t / D;
            ks[t] = j < S ? k[((size_t)h * S + j) * D + t % D] : 0.f;
            vs[t] = j < S ? v[((size_t)h * S + j) * D + t % D] : 0.f;
        }
        __syncthreads();
        for (int j = 0; j < TILE && j0 + j < S; ++j) {
            float s = 0.f;
            for (int d = 0; d < D; ++d) s += qi[d] * ks[j * D + d];
            s *= scale;
            const float m = fmaxf(mx, s), c = expf(mx - m), p = expf(s - m);
            sum = sum * c + p;
            for (int d = 0; d < D; ++d) acc[d] = acc[d] * c + p * vs[j * D + d];
            mx = m;
        }
        __syncthreads();
    }
    if (i < S)
        for (int d = 0; d < D; ++d) out[((size_t)h * S + i) * D + d] = acc[d] / sum;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    auto out = torch::empty_like(q);
    const int threads = 64;
    const size_t smem = 2 * TILE * D * sizeof(float);        // DEFECT: 64 KiB at D = 128, no opt-in
    dim3 grid((S + threads - 1) / threads, BH);
    attention_rows<<<grid, threads, smem, c10::cuda::getCurrentCUDAStream()>>>(
        q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), out.data_ptr<float>(),
        BH, S, D, 1.0f / sqrtf((float)D));
    return out;
}
"""
