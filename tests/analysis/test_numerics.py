"""grader/analysis/numerics.py: the precision a kernel computed in, from its errors against float64."""
import math

import torch

from grader.core import config
from grader.judge.check import config_seed, make_inputs, truth
from grader.core.config import Shape
from grader.analysis.numerics import (PRECISIONS, attention_in, errors_by_precision, likely_precision,
                                      round_mantissa)

TRUNCATED = next(a.name for a in PRECISIONS if a.truncate)


def test_round_mantissa_keeps_the_asked_bits():
    x = torch.tensor([1.0 + 2 ** -11, 1.0 + 2 ** -9, -3.0, 0.0])
    assert round_mantissa(x, 10).tolist() == [1.0, 1.0 + 2 ** -9, -3.0, 0.0]
    # the H100's probe (reference/NOTES.md): truncated to TF32 it is 1.0, rounded 1 + 2^-10
    y = torch.tensor([1.0 + 2 ** -11 + 2 ** -13, -(1.0 + 2 ** -11 + 2 ** -13)])
    assert round_mantissa(y, 10, truncate=True).tolist() == [1.0, -1.0]
    assert round_mantissa(y, 10).tolist() == [1.0 + 2 ** -10, -(1.0 + 2 ** -10)]
    z = torch.randn(10_000) * 100
    assert torch.equal(round_mantissa(z, 10, truncate=True).float(), (z.view(torch.int32) & ~0x1FFF).view(torch.float32))


def _judged(bits_of_kernel):
    out = []
    for i, shape in enumerate([Shape(B=1, H=2, S=96, D=64), Shape(B=1, H=1, S=128, D=128),
                               Shape(B=1, H=1, S=128, D=64, qk_std=8.0)]):
        q, k, v = make_inputs(shape, 7 + i)
        want = truth(q, k, v)
        got = attention_in(q, k, v, bits_of_kernel)
        err = float((got - want).abs().max())
        out.append({"name": f"config {i + 1}", "max_err": err, "passed": err < 1e-3,
                    "errors": errors_by_precision(q, k, v, want)})
    return out


def test_each_precision_is_named_from_its_own_errors():
    assert likely_precision(_judged(None), 1e-3)["precision"] == "fp32"
    tf32 = likely_precision(_judged(10), 1e-3)
    assert tf32["precision"] == "TF32 or fp16 (10-bit mantissa)"
    assert "config 3 misses the tolerance 0.001 (TF32 is allowed, but it cannot pass config 3" in tf32["lesson"]
    assert "outside the precision policy" in likely_precision(_judged(10), 1e-3, allowed=("fp32",))["lesson"]
    assert likely_precision(_judged(7), 1e-3)["precision"].startswith("bf16")


def test_no_precision_is_claimed_for_a_bug_and_mixed_is_said_as_such():
    bug = [dict(c, max_err=0.3, passed=False) for c in _judged(None)]
    assert likely_precision(bug, 1e-3) == {"precision": "", "evidence": "the error matches no precision's: a bug, "
                                           "not rounding", "lesson": ""}
    between = [dict(c, max_err=(c["errors"]["fp32"] * c["errors"]["TF32 or fp16 (10-bit mantissa)"]) ** 0.5,
                    passed=True) for c in _judged(None)[:2]]
    assert likely_precision(between, 1e-3)["precision"] == "mixed"
    assert likely_precision([], 1e-3) == {}


def _tf32_kernel(q, k, v, rounded: bool):
    """A TF32 tensor-core kernel's output: q, k, then p, v rounded to TF32 (CUDA's cvt.rna) or,
    as Triton's default tl.dot on an H100, handed over as float32 bits whose low 13 mantissa
    bits the tensor cores drop; sums and softmax fp32."""
    t = lambda x: ((x.contiguous().view(torch.int32) + (0x1000 if rounded else 0)) & ~0x1FFF).view(torch.float32)  # noqa: E731
    p = torch.softmax((t(q) @ t(k).transpose(-1, -2)) / math.sqrt(q.shape[-1]), dim=-1)
    return (t(p) @ t(v)).double()


def _public(kernel):
    cfg = config.load()
    judged = []
    for i, shape in enumerate(cfg.configs):
        q, k, v = make_inputs(shape, config_seed(cfg.seed, i))        # the judge's public inputs
        want = truth(q, k, v)
        err = float((kernel(q, k, v) - want).abs().max())
        judged.append({"name": f"config {i + 1}", "max_err": err, "passed": err < cfg.tolerance,
                       "errors": errors_by_precision(q, k, v, want)})
    return judged, likely_precision(judged, cfg.tolerance)


def test_a_triton_default_kernel_is_named_truncated_tf32_not_a_bug():
    """Issue 28, B2: a kernel with Triton's default tl.dot (truncated TF32) fails every public
    config; the forensics names truncated TF32 and says to set input_precision (it said "a bug,
    not rounding" when only round-to-nearest TF32 was modelled). Rounded TF32 is told apart:
    it passes configs 1-3, and its lesson is the allowed-but-fails-config-4 one."""
    judged, found = _public(lambda q, k, v: _tf32_kernel(q, k, v, rounded=False))
    assert not any(c["passed"] for c in judged)
    assert found["precision"] == TRUNCATED, found
    assert "Triton's default TF32" in found["lesson"] and "input_precision" in found["lesson"]
    assert all(f"config {i + 1}" in found["lesson"] for i in range(len(judged)))
    judged, found = _public(lambda q, k, v: _tf32_kernel(q, k, v, rounded=True))
    assert [c["passed"] for c in judged] == [True, True, True, False]
    assert found["precision"] == "TF32 or fp16 (10-bit mantissa)", found
    assert "config 4 misses the tolerance 0.001 (TF32 is allowed, but it cannot pass config 4" in found["lesson"]


def test_an_error_far_below_fp32s_is_fp32_or_better_and_the_10_bit_lesson_names_storage():
    """h16 (every sum in double) was told "likely computed in fp32" at 25x below fp32's error;
    h08 (scores stored as fp16) was told about products only."""
    from grader.report.summary import numerics_line
    double = [dict(c, max_err=c["errors"]["fp32"] / 25) for c in _judged(None)]
    assert "fp32 or better" in numerics_line(likely_precision(double, 1e-3))
    assert "fp32 or better" not in numerics_line(likely_precision(_judged(None), 1e-3))
    lesson = likely_precision(_judged(10), 1e-3)["lesson"]
    assert "products" in lesson and "stored" in lesson, lesson


def _fp16_throughout(q, k, v):
    """Attention as a kernel in __half throughout computes it: products, exp() and every partial
    sum rounded to fp16 (the held-out cuda_half2_fast of 2026-11-27, emulated on the CPU)."""
    h = lambda t: t.to(torch.float16).to(torch.float32)  # noqa: E731
    q, k, v = h(q), h(k), h(v)
    B, H, S, D = q.shape
    scale = h(torch.tensor(1 / math.sqrt(D)))
    s = torch.zeros(B, H, S, S)
    for d in range(D):                                  # q·k summed in fp16
        s = h(s + h(q[..., :, d:d + 1] * k[..., :, d].unsqueeze(-2)))
    s = h(s * scale)
    p = h(torch.exp(h(s - s.amax(-1, keepdim=True))))
    den, acc = torch.zeros(B, H, S, 1), torch.zeros(B, H, S, D)
    for j in range(S):                                  # the row sum and p·v in fp16
        den = h(den + p[..., j:j + 1])
        acc = h(acc + h(p[..., j:j + 1] * v[..., j:j + 1, :]))
    return h(acc / den)


def test_a_kernel_in_fp16_throughout_is_told_as_16_bit_not_a_bug():
    """Held-out (2026-11-27): a kernel in __half throughout (sums and exp() too) was named "bf16"
    on the H200: its error is that size. The message names a 16-bit computation, fp16 included."""
    from grader.analysis.numerics import rounding_phrase
    out = []
    for i, shape in enumerate([Shape(B=1, H=1, S=96, D=64), Shape(B=1, H=1, S=128, D=128),
                               Shape(B=1, H=1, S=128, D=64, qk_std=8.0)]):
        q, k, v = make_inputs(shape, 7 + i)
        want = truth(q, k, v)
        err = float((_fp16_throughout(q, k, v).double() - want).abs().max())
        out.append({"name": f"config {i + 1}", "max_err": err, "passed": err < 1e-3,
                    "errors": errors_by_precision(q, k, v, want)})
    found = likely_precision(out, 1e-3)
    assert found["precision"].startswith("bf16"), (found, [c["max_err"] for c in out])
    phrase = rounding_phrase(found["precision"])
    assert "fp16 with its sums" in phrase and "16-bit" in phrase
    assert rounding_phrase(PRECISIONS[1].name) == f"the error is the rounding of a {PRECISIONS[1].name} computation (see numerics)"
