"""Fused attention, in the style of an educational FlashAttention-2 forward from a hobby
repository: Br = Bc = 32, the Q, K, V and O tiles and the score tile all in dynamic shared
memory, one thread per row for the online-softmax bookkeeping, launch checked with
cudaGetLastError.

Held-out set of 2026-11-27 (issue 32; written without the grader's diagnosis code,
graded on an H200 before it was added here). BUG: 70,016 B of dynamic shared memory at D = 128 without the cudaFuncSetAttribute opt-in; its own cudaGetLastError check raises "invalid argument".
EXPECTED: runtime_error, "48 KiB"."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

#define BR 32
#define BC 32
#define NTHREADS 128

__global__ void flash2_fwd(const float* __restrict__ Q, const float* __restrict__ K,
                           const float* __restrict__ V, float* __restrict__ O,
                           int S, int D, float scale) {
    extern __shared__ float sm[];
    float* Qs  = sm;                   // BR x D
    float* Ks  = Qs + BR * D;          // BC x D
    float* Vs  = Ks + BC * D;          // BC x D
    float* Os  = Vs + BC * D;          // BR x D
    float* Ss  = Os + BR * D;          // BR x (BC + 1), last column holds the rescale factor
    float* m_s = Ss + BR * (BC + 1);   // BR
    float* l_s = m_s + BR;             // BR

    const int tid = threadIdx.x;
    const size_t base = (size_t)blockIdx.y * S * D;
    const int q0 = blockIdx.x * BR;

    for (int idx = tid; idx < BR * D; idx += NTHREADS) {
        const int r = idx / D, c = idx % D;
        Qs[idx] = (q0 + r < S) ? Q[base + (size_t)(q0 + r) * D + c] * scale : 0.f;
        Os[idx] = 0.f;
    }
    if (tid < BR) { m_s[tid] = -INFINITY; l_s[tid] = 0.f; }
    __syncthreads();

    for (int k0 = 0; k0 < S; k0 += BC) {
        for (int idx = tid; idx < BC * D; idx += NTHREADS) {
            const int r = idx / D, c = idx % D;
            const bool in = (k0 + r) < S;
            const size_t g = base + (size_t)(k0 + r) * D + c;
            Ks[idx] = in ? K[g] : 0.f;
            Vs[idx] = in ? V[g] : 0.f;
        }
        __syncthreads();

        for (int idx = tid; idx < BR * BC; idx += NTHREADS) {
            const int r = idx / BC, c = idx % BC;
            float s = -INFINITY;
            if (k0 + c < S) {
                s = 0.f;
                for (int d = 0; d < D; ++d) s += Qs[r * D + d] * Ks[c * D + d];
            }
            Ss[r * (BC + 1) + c] = s;
        }
        __syncthreads();

        if (tid < BR) {
            float* srow = Ss + tid * (BC + 1);
            const float m_old = m_s[tid];
            float m_new = m_old;
            for (int c = 0; c < BC; ++c) m_new = fmaxf(m_new, srow[c]);
            const float corr = expf(m_old - m_new);
            float rsum = 0.f;
            for (int c = 0; c < BC; ++c) {
                const float p = expf(srow[c] - m_new);
                srow[c] = p;
                rsum += p;
            }
            l_s[tid] = l_s[tid] * corr + rsum;
            m_s[tid] = m_new;
            srow[BC] = corr;
        }
        __syncthreads();

        for (int idx = tid; idx < BR * D; idx += NTHREADS) {
            const int r = idx / D, c = idx % D;
            const float* prow = Ss + r * (BC + 1);
            float a = Os[idx] * prow[BC];
            for (int j = 0; j < BC; ++j) a += prow[j] * Vs[j * D + c];
            Os[idx] = a;
        }
        __syncthreads();
    }

    for (int idx = tid; idx < BR * D; idx += NTHREADS) {
        const int r = idx / D, c = idx % D;
        if (q0 + r < S) O[base + (size_t)(q0 + r) * D + c] = Os[idx] / l_s[r];
    }
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(q.device().is_cuda(), "q must be a CUDA tensor");
    const int B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto O = torch::empty_like(q);
    const float scale = 1.0f / sqrtf((float)D);

    const size_t smem_bytes =
        (size_t)(2 * BR * D + 2 * BC * D + BR * (BC + 1) + 2 * BR) * sizeof(float);
    dim3 grid((S + BR - 1) / BR, B * H);
    flash2_fwd<<<grid, NTHREADS, smem_bytes, at::cuda::getCurrentCUDAStream()>>>(
        q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), O.data_ptr<float>(),
        S, D, scale);
    cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "flash2_fwd launch failed: ", cudaGetErrorString(err));
    return O;
}
"""
