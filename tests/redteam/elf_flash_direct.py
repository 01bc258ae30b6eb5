"""Attack: SDPA's own CPU flash kernel called straight through at::cpu:: (no dispatcher:
nothing for the operator observer or the dispatch mode), its address found at run time by
walking libtorch_cpu's dynamic symbol table in memory from at::get_num_threads (allowed): no
compute symbol linked, the mangled name a string (the static scan blanks strings).
It got `ok` and full performance points (slowdown 1.08) when first written.
Defence: the judge samples the child's instruction pointers from outside its process while the
timed rounds run (perf_event_open, grader/judge/cpusample.py): none of the samples landed in the
kernel's own library while its calls took their time, so its compute ran elsewhere.
Expect: status=cheat_suspected; without=ok; flags=strict:foreign_cpu_time
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdlib>
#include <optional>
#include <tuple>
@@ELF_LOOKUP@@
using FlashFn = std::tuple<at::Tensor, at::Tensor> (*)(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                       double, bool, const std::optional<at::Tensor>&,
                                                       std::optional<double>);
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    static FlashFn fn = (FlashFn)rt_lookup((const void*)&at::get_num_threads,
        "_ZN2at3cpu43_scaled_dot_product_flash_attention_for_cpuERKNS_6TensorES3_S3_dbRKSt8optionalIS1_ES4_IdE");
    TORCH_CHECK(fn != nullptr, "kernel setup failed");
    auto r = fn(q, k, v, 0.0, false, std::nullopt, std::nullopt);
    return std::get<0>(r).contiguous();
}
"""
