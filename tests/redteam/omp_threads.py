"""Attack: (or an honest tuning a student may try) omp_set_num_threads(1) after its own
parallel loop; OpenMP's setting is shared with torch, so SDPA would run on one core.
Defence: the state guard puts torch's thread count back before every SDPA measurement; it
is a warning, not a verdict (an honest kernel may set its own threads).
Expect: status=ok; flags=warning:thread_count,warning:thread_settings
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <omp.h>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto out = correct_attention(q, k, v);
    omp_set_num_threads(1);
    return out;
}
"""
