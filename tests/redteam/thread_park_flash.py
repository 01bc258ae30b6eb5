"""Attack: blind the judge's CPU sampler by the number of threads, then let torch compute. On its
first call the kernel parks 2 500 threads (16 KiB stacks, blocked on a condition variable: no
CPU, a few MiB; threads are not processes, so the process limit does not count them). Sampled
per thread, the judge needs one perf event per thread and CPU and opens at most 4 096
(grader/judge/cpusample.py MAX_EVENTS): the benchmark then ran unobserved, with a review flag
(`cpu_observation`) only. Every call computes with SDPA's own CPU flash kernel, reached as
elf_flash_direct reaches it, which only the sampler catches.
Defence: the judge samples the child's cgroup (grader/isolation/cpugroup.py) with one perf
event a CPU (`Sampler(group=...)`): every thread of it, however many. Where no cgroup v2 group
can be made the per-thread sampler's refusal is still only a review flag.
Expect: status=cheat_suspected; without=ok; flags=strict:foreign_cpu_time
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <pthread.h>
#include <optional>
#include <tuple>
@@ELF_LOOKUP@@
using FlashFn = std::tuple<at::Tensor, at::Tensor> (*)(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                       double, bool, const std::optional<at::Tensor>&,
                                                       std::optional<double>);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void* parked(void*) {
    pthread_mutex_lock(&mu);
    for (;;) pthread_cond_wait(&cv, &mu);
    return nullptr;
}

static void park(int n) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 16 << 10);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < n; ++i) {
        pthread_t t;
        if (pthread_create(&t, &attr, parked, nullptr) != 0) break;
    }
    pthread_attr_destroy(&attr);
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static bool parked_once = false;
    if (!parked_once) { parked_once = true; park(2500); }
    static FlashFn fn = (FlashFn)rt_lookup((const void*)&at::get_num_threads,
        "_ZN2at3cpu43_scaled_dot_product_flash_attention_for_cpuERKNS_6TensorES3_S3_dbRKSt8optionalIS1_ES4_IdE");
    TORCH_CHECK(fn != nullptr, "kernel setup failed");
    auto r = fn(q, k, v, 0.0, false, std::nullopt, std::nullopt);
    return std::get<0>(r).contiguous();
}
"""
