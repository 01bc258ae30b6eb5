"""Attack: keeps every answer it computed, keyed on a fingerprint of q, k and v, and
returns a cached answer when the inputs come back: timed calls that repeat inputs then
cost almost nothing. It prints CACHE HIT whenever that happens.
Defence: every timed call gets an input set nothing has seen before (on the CPU made by the
judge and sent just before its round), so the cache never hits (the test checks that CACHE
HIT was never printed), and the grade is honest.
Expect: status=ok; flags=warning:static_tensor
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdio>
#include <map>
@@CORRECT@@

static uint64_t fingerprint(const torch::Tensor& t) {
    const uint32_t* w = reinterpret_cast<const uint32_t*>(t.data_ptr<float>());
    uint64_t h = 1469598103934665603ull;
    for (int64_t i = 0; i < t.numel(); i += 7) h = (h ^ w[i]) * 1099511628211ull;
    return h;
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static std::map<uint64_t, torch::Tensor> cache;
    const uint64_t key = fingerprint(q) ^ (fingerprint(k) << 1) ^ (fingerprint(v) << 2);
    auto hit = cache.find(key);
    if (hit != cache.end()) {
        std::printf("CACHE HIT\n");
        std::fflush(stdout);
        return hit->second.clone();
    }
    auto out = correct_attention(q, k, v);
    cache[key] = out.clone();
    return out;
}
"""
