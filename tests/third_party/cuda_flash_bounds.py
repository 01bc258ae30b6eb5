"""Third-party style: a FlashAttention-2 style forward from a re-implementation repository
(query tile per block, K/V tiles streamed through shared memory with bounds checks and
masking, the running max/sum in registers, the shared memory sized from the device's
properties; see MANIFEST.toml). Written here for the grader's tests; licence: the project's."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>

#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x " must be a CUDA tensor")
#define CHECK_FLOAT(x) TORCH_CHECK(x.scalar_type() == at::kFloat, #x " must be float32")

// Block (query tile, batch*head): BLOCK_M threads, one query row each. For every K/V tile
// of BLOCK_N rows: scores in registers, the online-softmax rescale, the accumulator in
// shared memory. Rows and keys past seq_len are skipped or masked with -inf.
template <int BLOCK_M, int BLOCK_N>
__global__ void flash_attn_fwd_kernel(const float* __restrict__ q, const float* __restrict__ k,
                                      const float* __restrict__ v, float* __restrict__ o,
                                      const int seq_len, const int head_dim, const float softmax_scale) {
    extern __shared__ float smem[];
    float* q_s = smem;                               // BLOCK_M x head_dim
    float* acc_s = q_s + BLOCK_M * head_dim;         // BLOCK_M x head_dim
    float* k_s = acc_s + BLOCK_M * head_dim;         // BLOCK_N x head_dim
    float* v_s = k_s + BLOCK_N * head_dim;           // BLOCK_N x head_dim

    const size_t bh_offset = (size_t)blockIdx.y * seq_len * head_dim;
    const int tid = threadIdx.x;
    const int row = blockIdx.x * BLOCK_M + tid;
    const bool row_valid = row < seq_len;

    for (int c = 0; c < head_dim; ++c) {
        q_s[tid * head_dim + c] = row_valid ? q[bh_offset + (size_t)row * head_dim + c] : 0.0f;
        acc_s[tid * head_dim + c] = 0.0f;
    }
    float m_i = -INFINITY;   // running max of the row
    float l_i = 0.0f;        // running sum of exp(score - m_i)

    for (int start_n = 0; start_n < seq_len; start_n += BLOCK_N) {
        __syncthreads();     // every thread is done with the previous tile
        for (int idx = tid; idx < BLOCK_N * head_dim; idx += BLOCK_M) {
            const int n = start_n + idx / head_dim;
            const int c = idx % head_dim;
            const bool in_range = n < seq_len;
            k_s[idx] = in_range ? k[bh_offset + (size_t)n * head_dim + c] : 0.0f;
            v_s[idx] = in_range ? v[bh_offset + (size_t)n * head_dim + c] : 0.0f;
        }
        __syncthreads();
        if (!row_valid) continue;

        float qk[BLOCK_N];
        float m_ij = -INFINITY;
        for (int j = 0; j < BLOCK_N; ++j) {
            float s = -INFINITY;                     // masked: a key past seq_len
            if (start_n + j < seq_len) {
                s = 0.0f;
                for (int c = 0; c < head_dim; ++c) s += q_s[tid * head_dim + c] * k_s[j * head_dim + c];
                s *= softmax_scale;
            }
            qk[j] = s;
            m_ij = fmaxf(m_ij, s);
        }
        const float m_new = fmaxf(m_i, m_ij);
        const float alpha = __expf(m_i - m_new);    // 0 on the first tile (m_i = -inf)
        float l_ij = 0.0f;
        for (int j = 0; j < BLOCK_N; ++j) {
            qk[j] = __expf(qk[j] - m_new);           // 0 for masked keys
            l_ij += qk[j];
        }
        for (int c = 0; c < head_dim; ++c) {
            float pv = 0.0f;
            for (int j = 0; j < BLOCK_N; ++j) pv += qk[j] * v_s[j * head_dim + c];
            acc_s[tid * head_dim + c] = acc_s[tid * head_dim + c] * alpha + pv;
        }
        l_i = l_i * alpha + l_ij;
        m_i = m_new;
    }
    if (row_valid) {
        for (int c = 0; c < head_dim; ++c) o[bh_offset + (size_t)row * head_dim + c] = acc_s[tid * head_dim + c] / l_i;
    }
}

torch::Tensor flash_attn_forward(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    CHECK_CUDA(q); CHECK_CUDA(k); CHECK_CUDA(v);
    CHECK_FLOAT(q); CHECK_FLOAT(k); CHECK_FLOAT(v);
    const at::cuda::CUDAGuard device_guard(q.device());
    q = q.contiguous(); k = k.contiguous(); v = v.contiguous();

    const int batch = q.size(0), heads = q.size(1), seq_len = q.size(2), head_dim = q.size(3);
    auto o = torch::empty_like(q);

    constexpr int BLOCK_M = 32, BLOCK_N = 32;
    const size_t smem_bytes = (2 * BLOCK_M + 2 * BLOCK_N) * head_dim * sizeof(float);
    const cudaDeviceProp* props = at::cuda::getCurrentDeviceProperties();
    TORCH_CHECK(smem_bytes <= props->sharedMemPerBlockOptin, "head_dim ", head_dim, " needs ", smem_bytes,
                " bytes of shared memory, the device has ", props->sharedMemPerBlockOptin);
    auto kernel = flash_attn_fwd_kernel<BLOCK_M, BLOCK_N>;
    AT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes));

    const dim3 grid((seq_len + BLOCK_M - 1) / BLOCK_M, batch * heads);
    const float softmax_scale = 1.0f / sqrtf((float)head_dim);
    kernel<<<grid, BLOCK_M, smem_bytes, at::cuda::getCurrentCUDAStream()>>>(
        q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), o.data_ptr<float>(),
        seq_len, head_dim, softmax_scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return o;
}

// ---- glue: the grader's entry point ----
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    return flash_attn_forward(q, k, v);
}
"""
