// The CPU's own roofline ceilings, measured: an FMA-bound loop and a STREAM-style triad.
//
// fma_gflops: every thread keeps kChains independent vectors of 16 floats (one AVX-512
// register each) and applies x = x * a + b to them: kChains chains hide the FMA
// latency (4 cycles, 2 FMA ports -> at least 8 chains in flight), nothing touches memory.
// triad_gbytes: a[i] = b[i] + s * c[i] over arrays far larger than the caches; bytes
// counted as STREAM does (3 arrays x 4 B per element; write-allocate traffic not counted).
// Plain C++ with C entry points (no torch, no pybind11): built with `c++ -shared` in a
// second and called through ctypes (grader/analysis/roofline.py).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>
#include <omp.h>

namespace {
constexpr int kChains = 12;
constexpr int kLanes = 16;
double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

extern "C" double fma_gflops(int threads, int64_t iterations) {
    double best = 0.0;
    for (int rep = 0; rep < 3; ++rep) {
        float sink = 0.f;
        const double t0 = now();
        #pragma omp parallel num_threads(threads) reduction(+ : sink)
        {
            float x[kChains][kLanes];
            for (int c = 0; c < kChains; ++c)
                for (int l = 0; l < kLanes; ++l) x[c][l] = 1.0f + 1e-3f * (c + l + omp_get_thread_num());
            const float a = 0.999999f, b = 1e-7f;
            for (int64_t it = 0; it < iterations; ++it)
                for (int c = 0; c < kChains; ++c) {
                    #pragma omp simd
                    for (int l = 0; l < kLanes; ++l) x[c][l] = x[c][l] * a + b;
                }
            for (int c = 0; c < kChains; ++c)
                for (int l = 0; l < kLanes; ++l) sink += x[c][l];
        }
        const double secs = now() - t0;
        const double flops = 2.0 * kChains * kLanes * static_cast<double>(iterations) * threads;
        if (sink != 12345.f) best = std::max(best, flops / secs / 1e9);   // use sink: no dead code
    }
    return best;
}

extern "C" double triad_gbytes(int threads, int64_t n) {
    std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
    const float s = 3.0f;
    double best = 0.0;
    for (int rep = 0; rep < 5; ++rep) {
        const double t0 = now();
        #pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
        const double secs = now() - t0;
        best = std::max(best, 3.0 * 4.0 * static_cast<double>(n) / secs / 1e9);
    }
    return best + 0.0 * a[n / 2];
}
