"""grader/analysis/numerics.py: the precision a kernel computed in, from its errors against float64."""
import torch

from grader.judge.check import make_inputs, truth
from grader.core.config import Shape
from grader.analysis.numerics import attention_in, errors_by_precision, likely_precision, round_mantissa


def test_round_mantissa_keeps_the_asked_bits():
    x = torch.tensor([1.0 + 2 ** -11, 1.0 + 2 ** -9, -3.0, 0.0])
    assert round_mantissa(x, 10).tolist() == [1.0, 1.0 + 2 ** -9, -3.0, 0.0]


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
    assert tf32["precision"].startswith("TF32") and "config 3" in tf32["lesson"]
    assert likely_precision(_judged(7), 1e-3)["precision"].startswith("bf16")


def test_no_precision_is_claimed_for_a_bug_and_mixed_is_said_as_such():
    bug = [dict(c, max_err=0.3, passed=False) for c in _judged(None)]
    assert likely_precision(bug, 1e-3) == {"precision": "", "evidence": "the error matches no precision's: a bug, "
                                           "not rounding", "lesson": ""}
    between = [dict(c, max_err=(c["errors"]["fp32"] * c["errors"]["TF32 or fp16 (10-bit mantissa)"]) ** 0.5,
                    passed=True) for c in _judged(None)[:2]]
    assert likely_precision(between, 1e-3)["precision"] == "mixed"
    assert likely_precision([], 1e-3) == {}


def test_an_error_far_below_fp32s_is_fp32_or_better_and_the_10_bit_lesson_names_storage():
    """h16 (every sum in double) was told "likely computed in fp32" at 25x below fp32's error;
    h08 (scores stored as fp16) was told about products only."""
    from grader.report.summary import numerics_line
    double = [dict(c, max_err=c["errors"]["fp32"] / 25) for c in _judged(None)]
    assert "fp32 or better" in numerics_line(likely_precision(double, 1e-3))
    assert "fp32 or better" not in numerics_line(likely_precision(_judged(None), 1e-3))
    lesson = likely_precision(_judged(10), 1e-3)["lesson"]
    assert "products" in lesson and "stored" in lesson, lesson
