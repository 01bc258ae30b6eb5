"""Attention as three CUDA kernels, in the style of a university GPU-programming course
assignment solution: a 16x16 shared-memory tiled Q K^T, a softmax kernel with one block per
row and a shared-memory tree reduction (as in the course's "parallel reduction" lab), and a
plain P V kernel.

Held-out set of 2026-11-27 (issue 32; written without the grader's diagnosis code,
graded on an H200 before it was added here). BUG: the softmax's shared-memory reduction has no __syncthreads() inside its loop: the steps that cross warps race.
EXPECTED: wrong_answer, "changes from run to run"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define TILE 16
#define SOFTMAX_THREADS 256

// Sc[bh][i][j] = scale * dot(Q[bh][i][:], K[bh][j][:])
__global__ void qk_scores(const float* __restrict__ Q, const float* __restrict__ K,
                          float* __restrict__ Sc, int S, int D, float scale) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    const int bh = blockIdx.z;
    const float* Qh = Q + (size_t)bh * S * D;
    const float* Kh = K + (size_t)bh * S * D;
    float* Sh = Sc + (size_t)bh * S * S;

    const int row = blockIdx.y * TILE + threadIdx.y;   // query index
    const int col = blockIdx.x * TILE + threadIdx.x;   // key index
    const int krow = blockIdx.x * TILE + threadIdx.y;  // key row this thread loads

    float acc = 0.f;
    for (int t = 0; t < D; t += TILE) {
        As[threadIdx.y][threadIdx.x] =
            (row < S && t + threadIdx.x < D) ? Qh[(size_t)row * D + t + threadIdx.x] : 0.f;
        Bs[threadIdx.y][threadIdx.x] =
            (krow < S && t + threadIdx.x < D) ? Kh[(size_t)krow * D + t + threadIdx.x] : 0.f;
        __syncthreads();
        #pragma unroll
        for (int e = 0; e < TILE; ++e) acc += As[threadIdx.y][e] * Bs[threadIdx.x][e];
        __syncthreads();
    }
    if (row < S && col < S) Sh[(size_t)row * S + col] = acc * scale;
}

// tree reduction in shared memory, result broadcast to every thread
__device__ float block_reduce(float val, float* buf, bool is_max) {
    const int tid = threadIdx.x;
    buf[tid] = val;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            buf[tid] = is_max ? fmaxf(buf[tid], buf[tid + s]) : buf[tid] + buf[tid + s];
        }
    }
    __syncthreads();
    const float r = buf[0];
    __syncthreads();
    return r;
}

// one block per row of the score matrix, softmax in place
__global__ void softmax_rows(float* __restrict__ P, int S) {
    __shared__ float buf[SOFTMAX_THREADS];
    float* p = P + (size_t)blockIdx.x * S;

    float mx = -INFINITY;
    for (int j = threadIdx.x; j < S; j += blockDim.x) mx = fmaxf(mx, p[j]);
    mx = block_reduce(mx, buf, true);

    float sum = 0.f;
    for (int j = threadIdx.x; j < S; j += blockDim.x) {
        const float e = expf(p[j] - mx);
        p[j] = e;
        sum += e;
    }
    sum = block_reduce(sum, buf, false);

    const float inv = 1.f / sum;
    for (int j = threadIdx.x; j < S; j += blockDim.x) p[j] *= inv;
}

// O[bh][i][d] = sum_j P[bh][i][j] * V[bh][j][d]
__global__ void pv_kernel(const float* __restrict__ P, const float* __restrict__ V,
                          float* __restrict__ O, int S, int D) {
    const int d = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y;
    const int bh = blockIdx.z;
    if (d >= D) return;
    const float* p = P + ((size_t)bh * S + i) * S;
    const float* vh = V + (size_t)bh * S * D;
    float acc = 0.f;
    for (int j = 0; j < S; ++j) acc += p[j] * vh[(size_t)j * D + d];
    O[((size_t)bh * S + i) * D + d] = acc;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(q.is_cuda() && q.dtype() == torch::kFloat32, "expected float32 CUDA tensors");
    q = q.contiguous(); k = k.contiguous(); v = v.contiguous();
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    const int BH = B * H;
    const float scale = 1.0f / sqrtf((float)D);

    auto scores = torch::empty({B, H, S, S}, q.options());
    auto out = torch::empty_like(q);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    dim3 tb(TILE, TILE);
    dim3 tg((S + TILE - 1) / TILE, (S + TILE - 1) / TILE, BH);
    qk_scores<<<tg, tb, 0, stream>>>(q.data_ptr<float>(), k.data_ptr<float>(),
                                     scores.data_ptr<float>(), S, D, scale);

    softmax_rows<<<BH * S, SOFTMAX_THREADS, 0, stream>>>(scores.data_ptr<float>(), S);

    dim3 pb(64);
    dim3 pg((D + 63) / 64, S, BH);
    pv_kernel<<<pg, pb, 0, stream>>>(scores.data_ptr<float>(), v.data_ptr<float>(),
                                     out.data_ptr<float>(), S, D);
    return out;
}
"""
