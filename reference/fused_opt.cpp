// Reference FUSED attention for the CPU, OPTIMISED: the algorithm of fused.cpp (read that
// first), with register-blocked micro-kernels for the two matrix products.
//
//   out = softmax(q kᵀ / √D) v,   q, k, v, out: (batch, heads, seq, head_dim) float32
//
// What this file demonstrates: the S×S matrix never has to exist. Each task owns a
// block of kRows query rows of one (batch, head) and walks over the keys in tiles of
// kKeys. For every tile it computes the block's scores (kRows × kKeys, in a small
// buffer that stays in L1), and folds them into a running result with the
// online-softmax rule (Milakov & Gimelshein 2018):
//
//   m_new = max(m, max_j s_j)                       running row maximum
//   l     = l · e^(m - m_new) + Σ_j e^(s_j - m_new) running denominator
//   acc   = acc · e^(m - m_new) + Σ_j e^(s_j - m_new) · v_j
//   out   = acc / l                                  once, after the last tile
//
// Memory traffic: q and out move once, k and v once per block of kRows = 32 query rows
// (S / 32 times): S²·D/16 floats per (batch, head), as many as the naive version's S×S
// tensors at D = 64. What fusion saves on the CPU is that those re-reads are of one
// head's K and V (S·D·8 bytes: 512 KiB at S = 1024), which stay in cache, where the S×S
// tensors (4 MiB a head at S = 1024, 32 MiB for eight heads) do not: only the traffic
// from DRAM is O(S·D).
//
// Speed notes (what makes it fast, in the order they matter):
// - Both products run in micro-kernels that keep a 4-row × 64-float block of results
//   in registers (16 vectors of 16 floats) and stream the other operand through:
//   per step, 4 vector loads feed 16 vector FMAs. A plain loop `s[j] += q·k[j]`
//   loads and stores its result on every multiply-add and runs 2-3x slower.
// - Vec16 is a GCC/Clang vector type: one AVX-512 register on the course machine,
//   two AVX2 registers or four NEON registers elsewhere; the same code everywhere.
// - K is transposed once per head (kt[d][j], zero-padded to whole tiles), so the
//   score micro-kernel reads 64 consecutive keys per d.
// - exp() is a vectorisable polynomial (fast_exp below): the libm call is scalar.
// - OpenMP over (batch·head, query block); partial blocks and tiles are handled by
//   zero padding (rows) and -inf scores (columns), so any S works.
#include <torch/extension.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr int64_t kRows = 32;   // query rows per task (a multiple of kMicro)
constexpr int64_t kKeys = 64;   // keys per tile: one micro-kernel row of scores
constexpr int64_t kMicro = 4;   // rows per micro-kernel: 4 x 4 vectors = 16 accumulators

// (Without AVX-512, GCC warns that passing such a vector changes the ABI: these functions
// are internal and inlined, so it does not matter.)
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float Vec16 __attribute__((vector_size(64)));   // 16 floats
typedef int32_t Int16 __attribute__((vector_size(64)));

inline Vec16 load(const float* p) { Vec16 v; std::memcpy(&v, p, sizeof v); return v; }
inline void store(float* p, Vec16 v) { std::memcpy(p, &v, sizeof v); }
inline Vec16 splat(float x) { return Vec16{} + x; }

// e^x for x <= 0, 16 at a time (Cephes expf): x = n·ln2 + r with |r| <= ln2/2, e^r by a
// degree-7 polynomial, 2^n by writing n into the float's exponent bits. Relative error
// ~2e-7, below float32 rounding of the sums it feeds.
inline Vec16 fast_exp(Vec16 x) {
    const Vec16 lo = splat(-87.3f);                      // e^-87.3 ~ 1e-38: the smallest normal float
    x = x < lo ? lo : x;
    const Vec16 big = splat(12582912.f);                 // 1.5·2^23: adding it rounds to an integer
    const Vec16 n = (x * 1.44269504f + big) - big;       // round(x / ln2)
    Vec16 r = x - n * 0.693359375f;                      // ln(2) split in two parts so
    r = r + n * 2.12194440e-4f;                          // n·ln2 is exact enough
    Vec16 p = splat(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const Int16 bits = (__builtin_convertvector(n, Int16) + 127) << 23;   // 2^n as floats
    return p * reinterpret_cast<const Vec16&>(bits);
}

// s[i][0..64) = Σ_d q[i][d] · kt[d][0..64) for 4 rows i: the scores of a 4 × 64 block.
// q is the task's scaled, zero-padded copy of its queries (row stride D).
inline void scores_4x64(const float* q, const float* kt, int64_t kt_stride, int64_t D, float* s) {
    Vec16 acc[kMicro][4] = {};
    for (int64_t d = 0; d < D; ++d) {
        const float* kd = kt + d * kt_stride;
        const Vec16 k0 = load(kd), k1 = load(kd + 16), k2 = load(kd + 32), k3 = load(kd + 48);
        for (int i = 0; i < kMicro; ++i) {
            const Vec16 qi = splat(q[i * D + d]);
            acc[i][0] += qi * k0; acc[i][1] += qi * k1; acc[i][2] += qi * k2; acc[i][3] += qi * k3;
        }
    }
    for (int i = 0; i < kMicro; ++i)
        for (int c = 0; c < 4; ++c) store(s + i * kKeys + 16 * c, acc[i][c]);
}

// acc[i][d0..d0+64) = acc[i][..] · correction[i] + Σ_j p[i][j] · v[j][d0..d0+64) for 4 rows:
// the tile's weighted values, added to the running output.
inline void pv_4x64(const float* p, const float* v, int64_t D, int64_t cols, const float* correction,
                    float* acc) {
    Vec16 o[kMicro][4];
    for (int i = 0; i < kMicro; ++i)
        for (int c = 0; c < 4; ++c) o[i][c] = load(acc + i * D + 16 * c) * correction[i];
    for (int64_t j = 0; j < cols; ++j) {
        const float* vj = v + j * D;
        const Vec16 v0 = load(vj), v1 = load(vj + 16), v2 = load(vj + 32), v3 = load(vj + 48);
        for (int i = 0; i < kMicro; ++i) {
            const Vec16 pij = splat(p[i * kKeys + j]);
            o[i][0] += pij * v0; o[i][1] += pij * v1; o[i][2] += pij * v2; o[i][3] += pij * v3;
        }
    }
    for (int i = 0; i < kMicro; ++i)
        for (int c = 0; c < 4; ++c) store(acc + i * D + 16 * c, o[i][c]);
}

// One task: rows [r0, r0 + rows) of one (batch, head). kt is the head's transposed,
// zero-padded keys (D rows, kt_stride apart); q, v, out point at the head.
void attend_block(const float* q, const float* kt, int64_t kt_stride, const float* v, float* out,
                  int64_t S, int64_t D, int64_t r0, int64_t rows, float scale,
                  float* qs, float* s, float* acc, float* m, float* l, float* corr) {
    // 1. the block's queries, scaled by 1/√D, padded with zero rows to kRows
    for (int64_t i = 0; i < kRows; ++i)
        for (int64_t d = 0; d < D; ++d) qs[i * D + d] = i < rows ? q[(r0 + i) * D + d] * scale : 0.f;
    std::fill(acc, acc + kRows * D, 0.f);
    std::fill(m, m + kRows, -INFINITY);
    std::fill(l, l + kRows, 0.f);
    const int64_t row_blocks = (rows + kMicro - 1) / kMicro;

    for (int64_t c0 = 0; c0 < S; c0 += kKeys) {
        const int64_t cols = std::min(kKeys, S - c0);   // the last tile may be partial

        // 2. scores of the tile, 4 rows at a time
        for (int64_t b = 0; b < row_blocks; ++b)
            scores_4x64(qs + b * kMicro * D, kt + c0, kt_stride, D, s + b * kMicro * kKeys);

        // 3. online softmax on each row: new max, rescale factor, p = e^(s - max)
        const int64_t padded_rows = row_blocks * kMicro;
        for (int64_t i = 0; i < padded_rows; ++i) {             // 3a. the new running maxima
            float* si = s + i * kKeys;
            for (int64_t j = cols; j < kKeys; ++j) si[j] = -INFINITY;   // keys past S: weight 0
            Vec16 mx = load(si);
            for (int c = 1; c < 4; ++c) { const Vec16 x = load(si + 16 * c); mx = mx > x ? mx : x; }
            float tile_max = mx[0];
            for (int t = 1; t < 16; ++t) tile_max = std::max(tile_max, mx[t]);
            corr[i] = m[i];                                     // the old maximum, for 3b
            m[i] = std::max(m[i], tile_max);
        }
        for (int64_t i = 0; i < padded_rows; i += 16) {         // 3b. rescale factors, 16 rows at once
            const Vec16 e = fast_exp(load(corr + i) - load(m + i));   // e^-inf = 0 on the first tile
            store(corr + i, e);
        }
        for (int64_t i = 0; i < padded_rows; ++i) {             // 3c. p = e^(s - m), row sums
            float* si = s + i * kKeys;
            const float m_new = m[i];
            Vec16 sum{};
            for (int c = 0; c < 4; ++c) {
                const Vec16 e = fast_exp(load(si + 16 * c) - m_new);
                store(si + 16 * c, e);
                sum += e;
            }
            float tile_sum = 0.f;
            for (int t = 0; t < 16; ++t) tile_sum += sum[t];
            l[i] = l[i] * corr[i] + tile_sum;
        }

        // 4. acc = acc · correction + p · v_tile, 4 rows × 64 dims at a time
        for (int64_t b = 0; b < row_blocks; ++b)
            for (int64_t d0 = 0; d0 < D; d0 += 64)
                pv_4x64(s + b * kMicro * kKeys, v + c0 * D + d0, D, cols, corr + b * kMicro,
                        acc + b * kMicro * D + d0);
    }
    // 5. normalise once and write the block's output: the only write to memory
    for (int64_t i = 0; i < rows; ++i) {
        const float inv_l = 1.f / l[i];
        float* oi = out + (r0 + i) * D;
        for (int64_t d = 0; d < D; ++d) oi[d] = acc[i * D + d] * inv_l;
    }
}

}  // namespace

// ---------------------------------------------------------------------------------
// Entry point: the assignment's contract.
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(q.dim() == 4 && k.sizes() == q.sizes() && v.sizes() == q.sizes(),
                "q, k, v must all have shape (batch, heads, seq, head_dim)");
    TORCH_CHECK(q.scalar_type() == torch::kFloat32 && k.scalar_type() == torch::kFloat32 &&
                v.scalar_type() == torch::kFloat32, "q, k, v must be float32");
    TORCH_CHECK(q.is_contiguous() && k.is_contiguous() && v.is_contiguous(),
                "q, k, v must be contiguous");
    const int64_t B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    TORCH_CHECK(D % 64 == 0, "this kernel handles head_dim = 64, 128, ... (a multiple of 64)");
    const int64_t BH = B * H, blocks = (S + kRows - 1) / kRows;
    const int64_t S_pad = (S + kKeys - 1) / kKeys * kKeys;
    // kᵀ's row stride: S_pad plus one cache line. Rows exactly 2 or 4 KiB apart (S = 512,
    // 1024) would all map to the same L1 sets, and the score micro-kernel reads 64 of them
    // per tile: conflict misses.
    const int64_t kt_stride = S_pad + 16;
    const float scale = 1.f / std::sqrt(static_cast<float>(D));
    auto out = torch::empty_like(q);
    const float *qp = q.data_ptr<float>(), *kp = k.data_ptr<float>(), *vp = v.data_ptr<float>();
    float* op = out.data_ptr<float>();
    std::vector<float> kt(BH * D * kt_stride);   // every head's kᵀ, zero-padded to whole tiles

    #pragma omp parallel
    {
        #pragma omp for schedule(static)
        for (int64_t bh = 0; bh < BH; ++bh) {
            float* kth = kt.data() + bh * D * kt_stride;
            const float* kh = kp + bh * S * D;
            for (int64_t d = 0; d < D; ++d)
                for (int64_t j = 0; j < kt_stride; ++j) kth[d * kt_stride + j] = j < S ? kh[j * D + d] : 0.f;
        }
        // per-thread scratch, allocated once: scaled queries, scores, accumulator, m, l
        std::vector<float> qs(kRows * D), s(kRows * kKeys), acc(kRows * D), m(kRows), l(kRows), corr(kRows);
        #pragma omp for collapse(2) schedule(static)
        for (int64_t bh = 0; bh < BH; ++bh) {
            for (int64_t blk = 0; blk < blocks; ++blk) {
                const int64_t r0 = blk * kRows, rows = std::min(kRows, S - r0);
                const int64_t head = bh * S * D;
                attend_block(qp + head, kt.data() + bh * D * kt_stride, kt_stride, vp + head, op + head, S, D, r0,
                             rows, scale, qs.data(), s.data(), acc.data(), m.data(), l.data(), corr.data());
            }
        }
    }
    return out;
}
