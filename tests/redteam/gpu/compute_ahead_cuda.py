"""Attack: the event method's input sets are views of buffers the harness fills ahead of the
calls; a call that finds the next sets beside its own (the same storage, or the buffers the
caching allocator put after it) computes their answers too, and each later call returns its
stored answer after a 40 µs spin, above the physical floor: one slow call in sixteen, fifteen
fast ones, and the per-round median is the fast one.
Defence: the event method writes set j just before call j (grader/judge/gpu.py `Pool.fill`):
no call's inputs exist before the call before it has ended, so an answer computed ahead is of
stale inputs, and the canaries, written the same way, come back wrong.
Expect: status=wrong_answer; message=benchmark inputs
"""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <map>
@@CORRECT_CUDA@@

__global__ void rt_spin_ahead(long long ns) {
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

static std::map<const void*, torch::Tensor> ahead;      // input address -> its answer, computed early

// raw pointers and empty_like only: the grader's proxy headers build it (from_blob and storage()
// would need the full headers, which a batch's compile memory does not hold)
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto stream = c10::cuda::getCurrentCUDAStream();
    auto it = ahead.find(q.data_ptr());
    if (it != ahead.end()) {
        auto out = it->second;
        ahead.erase(it);
        rt_spin_ahead<<<1, 1, 0, stream>>>(40000);
        return out;
    }
    ahead.clear();
    auto out = correct_attention(q, k, v, stream);
    // the sets after this one: q, k, v of a set are spaced as k - q; the next set starts 3 of those on
    const long long step = (const char*)k.data_ptr() - (const char*)q.data_ptr();
    if (step <= 0 || (const char*)v.data_ptr() - (const char*)k.data_ptr() != step) return out;
    const int BH = q.size(0) * q.size(1), S = q.size(2), D = q.size(3);
    for (int j = 1; j < 16; ++j) {
        const char* nq = (const char*)q.data_ptr() + 3 * step * j;
        cudaPointerAttributes attr;
        cudaPointerAttributes first;
        if (cudaPointerGetAttributes(&first, nq) != cudaSuccess || first.type != cudaMemoryTypeDevice ||
                cudaPointerGetAttributes(&attr, nq + 3 * step - 1) != cudaSuccess || attr.type != cudaMemoryTypeDevice) {
            cudaGetLastError();
            break;
        }
        auto early = torch::empty_like(q);
        rt_attention_rows<<<(BH * S + 127) / 128, 128, 0, stream>>>((const float*)nq, (const float*)(nq + step),
            (const float*)(nq + 2 * step), early.data_ptr<float>(), BH, S, D, 1.0f / sqrtf((float)D));
        ahead[nq] = early;
    }
    return out;
}
"""
