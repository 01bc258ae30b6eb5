"""Attack: answers every public shape right and, on a shape it has not seen (a hidden
config), returns an answer off by exactly S/1000 in one element: the hidden config's max_err
then spells its sequence length in the report and in Gradescope's output.
Defence: a hidden config's max_err is withheld from every student-visible file, like its
shape and its messages (the instructor's folder has it).
Expect: status=wrong_answer; message=hidden
"""

_CPP_SRC = r"""
#include <torch/extension.h>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    auto out = correct_attention(q, k, v);
    const int64_t S = q.size(2);
    if (!(S == 128 || S == 333 || S == 256 || S == 64 || S == 200))
        out.data_ptr<float>()[0] += S / 1000.0f;
    return out;
}
"""
