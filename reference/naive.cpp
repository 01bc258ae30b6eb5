// Reference NAIVE attention for the CPU: the handout's three steps as three passes.
//
//   out = softmax(q kᵀ / √D) v,   q, k, v, out: (batch, heads, seq, head_dim) float32
//
// What this file demonstrates: the straightforward way, which writes the whole S×S
// score matrix to memory and reads it back, twice.
//
//   Step 1  scores = q kᵀ / √D     reads q, k     writes scores (B·H·S·S floats)
//   Step 2  p = softmax(scores)    reads scores   writes p      (B·H·S·S floats)
//   Step 3  out = p v              reads p, v     writes out    (B·H·S·D floats)
//
// Memory traffic grows like S²: at B=1, H=8, S=1024 each S×S tensor is 32 MiB,
// bigger than the caches of a laptop CPU, so every pass streams it from DRAM.
// Compare with fused.cpp, which never stores an S×S matrix.
//
// Each pass is parallelised with OpenMP over (batch·head, row); the innermost loops
// run over contiguous memory so the compiler vectorises them (-O3 -march=native).
#include <torch/extension.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

// ---------------------------------------------------------------------------------
// Step 1: scores[i][j] = (q_i · k_j) / √D for every query row i and key row j.
static void scores_pass(const float* q, const float* k, float* scores,
                        int64_t BH, int64_t S, int64_t D, float scale) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t bh = 0; bh < BH; ++bh) {
        for (int64_t i = 0; i < S; ++i) {
            const float* qi = q + (bh * S + i) * D;
            const float* kb = k + bh * S * D;
            float* row = scores + (bh * S + i) * S;
            for (int64_t j = 0; j < S; ++j) {
                const float* kj = kb + j * D;
                float dot = 0.f;
                // a reduction: `omp simd` allows the compiler to reorder the sum
                // into vector lanes (plain -O3 may not, without -ffast-math)
                #pragma omp simd reduction(+ : dot)
                for (int64_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
                row[j] = dot * scale;
            }
        }
    }
}

// Step 2: p[i][:] = softmax(scores[i][:]), subtracting the row max first so that
// exp() never overflows (exp(89) is already inf in float32).
static void softmax_pass(const float* scores, float* p, int64_t rows, int64_t S) {
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* in = scores + r * S;
        float* out = p + r * S;
        float row_max = -INFINITY;
        for (int64_t j = 0; j < S; ++j) row_max = std::max(row_max, in[j]);
        float sum = 0.f;
        for (int64_t j = 0; j < S; ++j) {
            out[j] = std::exp(in[j] - row_max);
            sum += out[j];
        }
        const float inv_sum = 1.f / sum;
        for (int64_t j = 0; j < S; ++j) out[j] *= inv_sum;
    }
}

// Step 3: out[i][:] = Σ_j p[i][j] · v[j][:]. The loop over d is innermost so each
// step is a contiguous, vectorised multiply-add of a row of v into the output row.
static void weighted_sum_pass(const float* p, const float* v, float* out,
                              int64_t BH, int64_t S, int64_t D) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t bh = 0; bh < BH; ++bh) {
        for (int64_t i = 0; i < S; ++i) {
            const float* pi = p + (bh * S + i) * S;
            const float* vb = v + bh * S * D;
            float* oi = out + (bh * S + i) * D;
            for (int64_t d = 0; d < D; ++d) oi[d] = 0.f;
            for (int64_t j = 0; j < S; ++j) {
                const float w = pi[j];
                const float* vj = vb + j * D;
                #pragma omp simd
                for (int64_t d = 0; d < D; ++d) oi[d] += w * vj[d];
            }
        }
    }
}

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
    const int64_t BH = B * H;
    const float scale = 1.f / std::sqrt(static_cast<float>(D));

    // The two S×S intermediates this version is about.
    auto scores = torch::empty({B, H, S, S}, q.options());
    auto p = torch::empty({B, H, S, S}, q.options());
    auto out = torch::empty_like(q);

    scores_pass(q.data_ptr<float>(), k.data_ptr<float>(), scores.data_ptr<float>(), BH, S, D, scale);
    softmax_pass(scores.data_ptr<float>(), p.data_ptr<float>(), BH * S, S);
    weighted_sum_pass(p.data_ptr<float>(), v.data_ptr<float>(), out.data_ptr<float>(), BH, S, D);
    return out;
}
