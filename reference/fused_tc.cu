// Reference FUSED attention, OPTIMISED: tensor cores in TF32 with a 3-term split.
//
//   out = softmax(q kᵀ / √D) v,   q, k, v, out: (batch, heads, seq, head_dim) float32
//
// Same algorithm as fused.cu (read that first): a block owns a tile of query rows,
// streams k/v tiles through shared memory, keeps the online-softmax state and the
// output in registers, writes the output once. What changes is who multiplies:
//
//   fused.cu       CUDA cores, fp32 FMA              peak ~67 TFLOP/s on an H100/H200
//   this file      tensor cores, mma.sync m16n8k8 TF32  peak 535 TFLOP/s dense at the
//                  1.98 GHz boost clock every course peak uses (the datasheet's 495 is at
//                  1.83 GHz); 3xTF32 a third of that, 178 TFLOP/s
//
// TF32 keeps 10 explicit mantissa bits: rounded to nearest an operand is off by up to
// 2^-11 ≈ 4.9e-4 of its value (truncated, 2^-10). One TF32 product per fp32 product
// passes the grading bar (max error < 1e-3) on configs 1-3 and fails config 4 on every
// seed, by tens of times: there q and k are scaled by 8, the scores are large, and their
// rounding error grows with them (the handout's precision table simulates it). So this
// reference, meant to match fp32, cannot use it.
// So every operand x is split into big = tf32(x) and small = tf32(x - big),
// and a·b is computed as big·big + big·small + small·big (3 tensor-core products).
// The dropped small·small term is at most 2^-22 of |a·b| per product (|small| <= 2^-11
// |x|): a few fp32 ulps, below the fp32 rounding of the D-term sum. Simulated, 3xTF32's
// error is fp32's (the handout's precision table: 3.9e-07 to 8.0e-05 against 4.2e-07 to
// 7.9e-05 for fp32). That is "3xTF32": fp32 accuracy at a third of the TF32 rate, still
// well above fp32 FMA.
//
// Work split: a block is Warps warps (8, or 4 for small problems: see Wide/Narrow);
// warp w owns 16 query rows (the M of one m16n8k8 product). Per tile of kKeys keys,
// each warp computes its 16×kKeys scores (kKeys/8 n-tiles × D/8 k-steps), does the
// online softmax on the accumulator fragments, feeds its P (16×kKeys) from those same
// registers to P·V as the A operand, and accumulates 16×D outputs (D/8 n-tiles) in
// registers. Shared memory holds only q and the current k/v tile.
//
// Split keys (flash-decoding, Dao et al. 2023). At (1, 8, 1024, 64) there are only
// 8 heads × 8 row tiles = 64 wide blocks for 132 SMs, far too few warps to hide the
// latency of shared memory and the tensor cores. So when the row tiles alone cannot
// fill every SM's resident slots, the key range is split too:
// block (row tile, head, split) runs the same loop over its share of the keys and
// writes its partial result (output divided by its own sum, plus the max m and sum l
// of each row), and a small second kernel merges the splits of each row:
//     out = Σ_i w_i o_i / Σ_i w_i,   w_i = l_i · 2^(m_i - max_j m_j)
// Extra traffic: splits × (S×D + 2S) floats per head written and read once (from L2
// when the merge runs right after; in a cold profile, where Nsight Compute flushes the
// caches before each kernel, the merge reads them from DRAM); the S×S matrix still
// never leaves the chip.
//
// Fragment layouts (PTX ISA, mma.m16n8k8 .tf32): lane = 4·g + t (g = lane/4, t = lane%4)
//   A (16×8, row): a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4], a3 = A[g+8][t+4]
//   B (8×8, col):  b0 = B[t][g], b1 = B[t+4][g]
//   C (16×8):      c0, c1 = C[g][2t], C[g][2t+1];  c2, c3 = C[g+8][2t], C[g+8][2t+1]
// Shared-memory rows are padded to D+4 floats so that each of these fragment loads
// touches 32 different banks.
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>   // C10_CUDA_CHECK, C10_CUDA_KERNEL_LAUNCH_CHECK
#include <c10/cuda/CUDAGuard.h>       // CUDAGuard: launch on the inputs' device
#include <c10/cuda/CUDAStream.h>      // getCurrentCUDAStream: run in order with torch's work

#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace {

constexpr float kLog2e = 1.4426950408889634f;

// The shape of a block: head dim D, Warps warps (16 query rows each), Keys keys per
// k/v tile, and its shared-memory layout (floats; strides padded for conflict-free
// fragment loads).
template <int D_, int Warps, int Keys, int MinBlocks = 1>
struct Block {
    static constexpr int D = D_, kRows = 16 * Warps, kKeys = Keys, kThreads = 32 * Warps;
    static constexpr int kMinBlocks = MinBlocks;   // per SM: caps registers at 64K / (kThreads · MinBlocks)
    static constexpr int q_stride = D + 4, k_stride = D + 4, v_stride = D + 4;
    static constexpr int q = 0;
    static constexpr int k = q + kRows * q_stride;
    static constexpr int v = k + kKeys * k_stride;
    static constexpr size_t bytes = (v + kKeys * v_stride) * sizeof(float);
};
// The two block shapes launched (measured in reference/NOTES.md, section 3):
//   Wide:   8 warps (128 rows) share each 64-key tile: half the tile loads per row.
//           68 KiB of shared memory at D = 64, two blocks per SM (so at most 128
//           registers a thread); 132 KiB at D = 128, one block per SM.
//           For grids that fill the GPU.
//   Narrow: 4 warps (64 rows), 64-key tiles (32 at D = 128: 66 KiB, three blocks per SM):
//           more, smaller blocks, for problems too small to fill 132 SMs with wide ones.
template <int D> using Wide = Block<D, 8, 64, D <= 64 ? 2 : 1>;
template <int D> using Narrow = Block<D, 4, D <= 64 ? 64 : 32>;

// ---- tensor-core helpers ------------------------------------------------------------

constexpr uint32_t kTf32Mask = 0xffffe000u;   // sign, exponent, 10 mantissa bits

// x = big + small, both TF32. big: x rounded to the nearest TF32 (add half of the 13
// dropped bits, clear them: 2 integer ops; cvt.rna.tf32.f32 compiles to 4 because it
// also handles inf and NaN, which never reach here). small = x - big is exact in fp32
// (|small| ≤ 2^-11 |x|); truncating it to TF32 costs at most 2^-22 |x|.
__device__ __forceinline__ void split(float x, uint32_t& big, uint32_t& small) {
    big = (__float_as_uint(x) + 0x1000u) & kTf32Mask;
    small = __float_as_uint(x - __uint_as_float(big)) & kTf32Mask;
}

// c += a·b for one 16×8×8 tile (TF32 inputs, fp32 accumulation)
__device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// c += a·b with fp32 accuracy: the two correction products first, then the main one
__device__ __forceinline__ void mma_3xtf32(float (&c)[4], const uint32_t (&a_big)[4], const uint32_t (&a_small)[4],
                                           const float (&b)[2]) {
    uint32_t b_big[2], b_small[2];
    split(b[0], b_big[0], b_small[0]);
    split(b[1], b_big[1], b_small[1]);
    mma(c, a_small, b_big);
    mma(c, a_big, b_small);
    mma(c, a_big, b_big);
}

// The A fragment of rows [row0, row0+16) and columns [col0, col0+8) of a row-major
// shared array, split into big and small parts.
__device__ __forceinline__ void load_a(const float* s, int stride, int row0, int col0, int g, int t,
                                       uint32_t (&big)[4], uint32_t (&small)[4]) {
    const float a[4] = {s[(row0 + g) * stride + col0 + t], s[(row0 + g + 8) * stride + col0 + t],
                        s[(row0 + g) * stride + col0 + t + 4], s[(row0 + g + 8) * stride + col0 + t + 4]};
    #pragma unroll
    for (int i = 0; i < 4; ++i) split(a[i], big[i], small[i]);
}

__device__ __forceinline__ float quad_max(float x) {   // over the 4 lanes that share a row
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// ---- the kernel ---------------------------------------------------------------------

// Block (row tile x, head y, key split z): rows [x·kRows, (x+1)·kRows) against keys
// [z·keys_per_split, (z+1)·keys_per_split). With one split it writes `out`; with
// several, its partial rows go to part_o (divided by its own l) and part_ml (m, l).
template <class L>
__global__ void __launch_bounds__(L::kThreads, L::kMinBlocks)
fused_tc_kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                float* __restrict__ out, int S, float q_scale, int keys_per_split,
                float* __restrict__ part_o, float2* __restrict__ part_ml) {
    constexpr int D = L::D, kRows = L::kRows, kKeys = L::kKeys, kThreads = L::kThreads;
    constexpr int kDimTiles = D / 8;          // n-tiles of the output
    extern __shared__ float smem[];
    float* q_s = smem + L::q;
    float* k_s = smem + L::k;
    float* v_s = smem + L::v;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int row0 = blockIdx.x * kRows, wrow = warp * 16;     // wrow: the warp's rows in q_s
    const size_t head = static_cast<size_t>(blockIdx.y) * S * D;

    // q rows, pre-scaled by log2(e)/√D so the softmax works in base 2; 16-byte loads
    for (int idx = tid; idx < kRows * D / 4; idx += kThreads) {
        const int r = idx / (D / 4), c = (idx % (D / 4)) * 4;
        float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
        if (row0 + r < S) {
            x = *reinterpret_cast<const float4*>(q + head + static_cast<size_t>(row0 + r) * D + c);
            x.x *= q_scale; x.y *= q_scale; x.z *= q_scale; x.w *= q_scale;
        }
        *reinterpret_cast<float4*>(q_s + r * L::q_stride + c) = x;
    }

    float o[kDimTiles][4] = {};               // output rows g and g+8, dims 8n + 2t, +1
    float m[2] = {-INFINITY, -INFINITY};      // running max of rows g, g+8 (base 2)
    float l[2] = {0.f, 0.f};                  // running denominators

    const int key_begin = blockIdx.z * keys_per_split, key_end = min(S, key_begin + keys_per_split);
    for (int c0 = key_begin; c0 < key_end; c0 += kKeys) {
        // k and v tiles, 16-byte loads; keys past this split's end are zeros (and masked below)
        for (int idx = tid; idx < kKeys * D / 4; idx += kThreads) {
            const int r = idx / (D / 4), c = (idx % (D / 4)) * 4;
            float4 kx = make_float4(0.f, 0.f, 0.f, 0.f), vx = kx;
            if (c0 + r < key_end) {
                const size_t off = head + static_cast<size_t>(c0 + r) * D + c;
                kx = *reinterpret_cast<const float4*>(k + off);
                vx = *reinterpret_cast<const float4*>(v + off);
            }
            *reinterpret_cast<float4*>(k_s + r * L::k_stride + c) = kx;
            *reinterpret_cast<float4*>(v_s + r * L::v_stride + c) = vx;
        }
        __syncthreads();   // tiles (and q on the first pass) complete

        // scores s = q kᵀ for the warp's 16 rows × 64 keys: 8 n-tiles of 8 keys
        float s[kKeys / 8][4] = {};
        #pragma unroll
        for (int kk = 0; kk < D / 8; ++kk) {
            uint32_t a_big[4], a_small[4];
            load_a(q_s, L::q_stride, wrow, kk * 8, g, t, a_big, a_small);
            #pragma unroll
            for (int n = 0; n < kKeys / 8; ++n) {
                // B[d][key] = k[key][d]: b0 = k_s[key 8n+g][d 8kk+t], b1 = ... [d + 4]
                const float b[2] = {k_s[(n * 8 + g) * L::k_stride + kk * 8 + t],
                                    k_s[(n * 8 + g) * L::k_stride + kk * 8 + t + 4]};
                mma_3xtf32(s[n], a_big, a_small, b);
            }
        }

        // online softmax on the fragments: this lane holds kKeys/4 scores of row g (s[n][0..1])
        // and as many of row g+8 (s[n][2..3]); the row's others are in the 3 lanes of its quad.
        // Each score is replaced by its p = 2^(s - m) in place: P stays in registers.
        #pragma unroll
        for (int half = 0; half < 2; ++half) {
            float tile_max = -INFINITY;
            #pragma unroll
            for (int n = 0; n < kKeys / 8; ++n)
                #pragma unroll
                for (int j = 0; j < 2; ++j) {
                    if (c0 + n * 8 + 2 * t + j >= key_end) s[n][2 * half + j] = -INFINITY;   // past the end
                    tile_max = fmaxf(tile_max, s[n][2 * half + j]);
                }
            const float m_new = fmaxf(m[half], quad_max(tile_max));
            const float correction = exp2f(m[half] - m_new);     // 0 on the first tile
            float tile_sum = 0.f;
            #pragma unroll
            for (int n = 0; n < kKeys / 8; ++n)
                #pragma unroll
                for (int j = 0; j < 2; ++j) {
                    s[n][2 * half + j] = exp2f(s[n][2 * half + j] - m_new);
                    tile_sum += s[n][2 * half + j];
                }
            l[half] = l[half] * correction + quad_sum(tile_sum);
            m[half] = m_new;
            #pragma unroll
            for (int n = 0; n < kDimTiles; ++n) {
                o[n][2 * half] *= correction;
                o[n][2 * half + 1] *= correction;
            }
        }
        // o += P v, P (16 × kKeys) straight from the score registers as the A operand.
        // The scores' C layout gives this lane keys 2t and 2t+1 of each 8-key step, but
        // the A layout wants columns t and t+4. The sum over keys does not care about their
        // order, so step kk takes its keys in the order (0, 2, 4, 6, 1, 3, 5, 7): column t
        // is key 2t, column t+4 is key 2t+1, and the B operand (v) takes its rows in the
        // same order. No shuffles, no trip through shared memory.
        #pragma unroll
        for (int kk = 0; kk < kKeys / 8; ++kk) {
            const float p[4] = {s[kk][0], s[kk][2], s[kk][1], s[kk][3]};   // A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]
            uint32_t a_big[4], a_small[4];
            #pragma unroll
            for (int i = 0; i < 4; ++i) split(p[i], a_big[i], a_small[i]);
            #pragma unroll
            for (int n = 0; n < kDimTiles; ++n) {
                // B[key][d] = v[key][d]: b0 = v_s[key 8kk+2t][d 8n+g], b1 = v_s[key 8kk+2t+1][...]
                const float b[2] = {v_s[(kk * 8 + 2 * t) * L::v_stride + n * 8 + g],
                                    v_s[(kk * 8 + 2 * t + 1) * L::v_stride + n * 8 + g]};
                mma_3xtf32(o[n], a_big, a_small, b);
            }
        }
        __syncthreads();   // everyone is done with k_s, v_s before the next tile
    }

    // normalise and write rows g and g+8 of the warp: 8-byte stores of dims 8n+2t, +1
    // (to `out`, or to this split's slice of part_o, with m and l beside it)
    const size_t split_offset = static_cast<size_t>(blockIdx.z) * gridDim.y * S;   // rows before this split
    #pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int row = row0 + wrow + g + 8 * half;
        if (row >= S) continue;
        const float inv_l = 1.f / l[half];
        float* dst = gridDim.z == 1 ? out + head + static_cast<size_t>(row) * D
                                    : part_o + (split_offset * D + head) + static_cast<size_t>(row) * D;
        #pragma unroll
        for (int n = 0; n < kDimTiles; ++n)
            *reinterpret_cast<float2*>(dst + n * 8 + 2 * t) =
                make_float2(o[n][2 * half] * inv_l, o[n][2 * half + 1] * inv_l);
        if (gridDim.z > 1 && t == 0)
            part_ml[split_offset + static_cast<size_t>(blockIdx.y) * S + row] = make_float2(m[half], l[half]);
    }
}

// Merge the key splits of every row (see the header): one thread per 4 output values.
template <int D>
__global__ void merge_splits_kernel(const float* __restrict__ part_o, const float2* __restrict__ part_ml,
                                    float* __restrict__ out, int rows, int splits) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = idx / (D / 4), c = (idx % (D / 4)) * 4;   // row of all heads, first of 4 dims
    if (row >= rows) return;
    float m_max = -INFINITY;
    for (int i = 0; i < splits; ++i) m_max = fmaxf(m_max, part_ml[static_cast<size_t>(i) * rows + row].x);
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    float total = 0.f;
    for (int i = 0; i < splits; ++i) {
        const size_t r = static_cast<size_t>(i) * rows + row;
        const float w = part_ml[r].y * exp2f(part_ml[r].x - m_max);
        const float4 o = *reinterpret_cast<const float4*>(part_o + r * D + c);
        acc.x += w * o.x; acc.y += w * o.y; acc.z += w * o.z; acc.w += w * o.w;
        total += w;
    }
    const float inv = 1.f / total;
    *reinterpret_cast<float4*>(out + static_cast<size_t>(row) * D + c) =
        make_float4(acc.x * inv, acc.y * inv, acc.z * inv, acc.w * inv);
}

int sm_count() {
    int device, sms;
    C10_CUDA_CHECK(cudaGetDevice(&device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
}

// How many key splits: enough blocks to fill every SM's resident slots (no more: a
// second wave of blocks would run on a mostly idle GPU), at least one tile each.
template <class L>
int key_splits(int row_blocks, int key_tiles) {
    static int slots = 0;                  // resident blocks on the whole GPU, asked once
    if (slots == 0) {
        int per_sm;
        C10_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_tc_kernel<L>, L::kThreads,
                                                                     L::bytes));
        slots = sm_count() * per_sm;
    }
    const int wanted = std::max(1, std::min(slots / row_blocks, key_tiles));
    const int tiles_per_split = (key_tiles + wanted - 1) / wanted;
    return (key_tiles + tiles_per_split - 1) / tiles_per_split;   // no split left empty
}

template <class L>
void launch(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, torch::Tensor& out,
            cudaStream_t stream) {
    constexpr int D = L::D, kKeys = L::kKeys, kThreads = L::kThreads;
    const int B = q.size(0), H = q.size(1), S = q.size(2);
    const size_t bytes = L::bytes;
    C10_CUDA_CHECK(cudaFuncSetAttribute(fused_tc_kernel<L>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
    const int row_tiles = (S + L::kRows - 1) / L::kRows, key_tiles = (S + kKeys - 1) / kKeys;
    const int splits = key_splits<L>(row_tiles * B * H, key_tiles);
    const int keys_per_split = (key_tiles + splits - 1) / splits * kKeys;
    const dim3 grid(row_tiles, B * H, splits);
    const float q_scale = kLog2e / std::sqrt(static_cast<float>(D));
    if (splits == 1) {
        fused_tc_kernel<L><<<grid, kThreads, bytes, stream>>>(
            q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), out.data_ptr<float>(), S, q_scale,
            keys_per_split, nullptr, nullptr);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        return;
    }
    // partial results: splits × rows × D outputs, then splits × rows (m, l) pairs
    const int rows = B * H * S;
    auto part = torch::empty({static_cast<int64_t>(splits) * rows * (D + 2)}, q.options());
    float* part_o = part.data_ptr<float>();
    float2* part_ml = reinterpret_cast<float2*>(part_o + static_cast<size_t>(splits) * rows * D);
    fused_tc_kernel<L><<<grid, kThreads, bytes, stream>>>(
        q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), out.data_ptr<float>(), S, q_scale,
        keys_per_split, part_o, part_ml);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    const int threads = 256, merge_blocks = (rows * (D / 4) + threads - 1) / threads;
    merge_splits_kernel<D><<<merge_blocks, threads, 0, stream>>>(part_o, part_ml, out.data_ptr<float>(), rows,
                                                                 splits);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Wide blocks when they can give every SM at least one block (splitting keys as
// finely as one tile each), else narrow ones.
template <int D>
void launch_for(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, torch::Tensor& out,
                cudaStream_t stream) {
    const int64_t S = q.size(2), BH = q.size(0) * q.size(1);
    const int64_t wide_blocks = (S + Wide<D>::kRows - 1) / Wide<D>::kRows * BH * ((S + Wide<D>::kKeys - 1) / Wide<D>::kKeys);
    if (wide_blocks >= sm_count()) launch<Wide<D>>(q, k, v, out, stream);
    else launch<Narrow<D>>(q, k, v, out, stream);
}

}  // namespace

// ---------------------------------------------------------------------------------
// Entry point: the assignment's contract.
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(q.is_cuda() && k.is_cuda() && v.is_cuda(), "q, k, v must be CUDA tensors");
    TORCH_CHECK(q.dim() == 4 && k.sizes() == q.sizes() && v.sizes() == q.sizes(),
                "q, k, v must all have shape (batch, heads, seq, head_dim)");
    TORCH_CHECK(q.scalar_type() == torch::kFloat32 && k.scalar_type() == torch::kFloat32 &&
                v.scalar_type() == torch::kFloat32, "q, k, v must be float32");
    TORCH_CHECK(q.is_contiguous() && k.is_contiguous() && v.is_contiguous(),
                "q, k, v must be contiguous");
    const c10::cuda::CUDAGuard guard(q.device());
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    auto out = torch::empty_like(q);
    switch (q.size(3)) {
        case 64: launch_for<64>(q, k, v, out, stream); break;
        case 128: launch_for<128>(q, k, v, out, stream); break;
        default: TORCH_CHECK(false, "the fused reference kernel supports head_dim 64 and 128, got ", q.size(3));
    }
    return out;
}
