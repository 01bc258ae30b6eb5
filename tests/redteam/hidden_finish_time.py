"""Attack: the hidden configs run last, so when a grade finishes depends on how long they took.
On a shape none of the public configs has, the kernel sleeps 40 ms per row of S before
answering: the time its grade finished, in batch.json or on its files' times, then tells the
hidden S to anyone who reads it (held-out set of 2026-11-28: S to within ±7 from `finished_at`,
and exactly from a finish second chosen modulo 14).
Defence: everything of the student's folder is stamped with the time the grade finished less
the hidden phase's seconds (grader/course/batch/outputs.py `write_submission`); the
instructor's copy keeps them. The check: the stamp is no later than the hidden phase's start.
Expect: status=ok
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <chrono>
#include <thread>
@@CORRECT@@

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const long S = q.size(2);
    const bool known = S == 64 || S == 128 || S == 200 || S == 256 || S == 333;
    if (!known)
        std::this_thread::sleep_for(std::chrono::milliseconds(40 * S));
    return correct_attention(q, k, v);
}
"""
