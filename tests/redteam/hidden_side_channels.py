"""Attack: on a shape that is not a public config (a hidden one) it prints exactly S bytes
and dispatches S cheap PyTorch operations, then computes the right answer: the judge
published the bytes printed (isolation.output_bytes), the hidden phase's stage time and
the operation audit's per-op counts of every call, so the hidden S stood in the student's
results.json ("output_bytes": 173, "aten.neg x173") for the next submission to special-case.
Defence: nothing the student sees is measured on hidden work: output bytes count the
public phase only, the hidden stage time and the hidden calls' audit go to the
instructor's copy (OUT/instructor/<id>.json), and batch.json's time leaves the hidden
phase out; a strict finding there would reach the verdict as one flag without counts.
Expect: status=ok
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdio>
#include <string>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t S = q.size(2);
    const bool known = S == 128 || S == 333 || S == 256 || S == 64 || S == 200;
    if (!known) {
        std::fputs(std::string((size_t)S, 'x').c_str(), stdout);
        std::fflush(stdout);
        for (int64_t i = 0; i < S; ++i) {
            auto t = q.neg();
        }
    }
    return correct_attention(q, k, v);
}
"""
