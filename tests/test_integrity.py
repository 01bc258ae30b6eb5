"""The static scan: calls fire, comments, strings and look-alike identifiers do not; and
the review flags from measurements."""
import pytest

from grader.integrity import fp32_peak_flops, scan, speed_flags, strip_comments
from grader.parse import Source


def _codes(text: str) -> set:
    src = Source(kind="cuda", text=text, file="attention.py", line_map=tuple(range(20, 20 + text.count("\n") + 1)))
    return {(f.code, f.tier) for f in scan(src)}


@pytest.mark.parametrize("text, flag", [
    ("auto s = at::matmul(q, k);", ("aten_compute", "strict")),
    ("auto s = torch::softmax(x, -1);", ("aten_compute", "strict")),
    ("auto s = q.bmm(k);", ("aten_compute", "strict")),
    ("return at::_scaled_dot_product_flash_attention_for_cpu(q, k, v);", ("aten_compute", "strict")),
    ("cublasSgemm(h, a, b);", ("cublas", "strict")),
    ("#include <cublas_v2.h>", ("cublas", "strict")),
    ('#include "cudnn.h"', ("cublas", "strict")),
    ('FILE* f = fopen("/etc/passwd", "r");', ("file_access", "strict")),
    ("std::ifstream in(path);", ("file_access", "strict")),
    ('auto p = std::getenv("HOME");', ("environment", "strict")),
    ('system("curl evil");', ("process", "strict")),
    ("int s = socket(2, 1, 0);", ("network", "strict")),
    ('void* h = dlopen("libcublas.so", 1);', ("dynamic_loading", "strict")),
    ("cudaStreamCreate(&s);", ("extra_streams", "warning")),
    ("auto t = std::chrono::steady_clock::now();", ("timing_calls", "warning")),
    ("long long c = clock64();", ("timing_calls", "warning")),
    ("static torch::Tensor cache;", ("static_tensor", "warning")),
])
def test_calls_are_flagged(text, flag):
    assert flag in _codes(text)


@pytest.mark.parametrize("text", [
    "// do not call cublasSgemm or at::matmul here",
    "/* torch::softmax(x) would be cheating */",
    'const char* msg = "at::matmul(q, k) is not allowed";',
    "__global__ void my_softmax_kernel(float* x) {}",
    "float my_system_time = 0; int socket_count = 0;",
    "auto o = q.clone(); auto e = torch::empty_like(q);",
    "std::bind(f, 1); x = std::max(a, b); y = fmaxf(a, b);",
    "softmax_rows<<<grid, block>>>(p, s);",
    'auto raw = R"(at::matmul(q, k))";',
])
def test_look_alikes_are_not_flagged(text):
    assert _codes(text) == set()


def test_lines_point_at_the_py_file():
    src = Source(kind="cpp", text="int a;\n// x\nauto s = at::mm(q, k);\n", file="attention.py",
                 line_map=(10, 11, 12, 13))
    (flag,) = scan(src)
    assert flag.detail.startswith("attention.py:12:")


def test_strip_keeps_line_numbers():
    text = 'a /* x\ny */ b "s\\"t" // c\nd'
    out = strip_comments(text)
    assert out.count("\n") == text.count("\n") and out.startswith("a") and out.endswith("d")


def test_speed_flags():
    system = {"sm_count": 132, "clock_sm_max_mhz": "1980"}
    assert 60e12 < fp32_peak_flops(system) < 70e12
    fast = {"S": 1024, "slowdown": 0.05, "student_ms": 1e-4, "flops": 2_147_483_648}
    codes = {f.code for f in speed_flags([fast], system)}
    assert codes == {"too_fast"}              # 21 PFLOP/s, but no capability: no tensor-core ceiling known
    assert speed_flags([{"S": 1024, "slowdown": 0.9, "student_ms": 0.1, "flops": 2_147_483_648}], system) == []


def test_beyond_roofline_uses_the_ceiling_of_the_fastest_allowed_precision():
    """An honest 3xTF32 kernel at 100 TFLOP/s on an H200 is above the FP32 FMA peak (66.9) but
    below the 3xTF32 ceiling (178): flagged only when the config allows fp32 alone."""
    from grader.config import Precision
    h200 = {"sm_count": 132, "clock_sm_max_mhz": "1980", "capability": "9.0"}
    row = lambda tflops: {"S": 1024, "slowdown": 0.5, "flops": 2_147_483_648,  # noqa: E731
                          "student_ms": 2_147_483_648 / (tflops * 1e12) * 1e3}
    assert speed_flags([row(100)], h200) == []                                   # the shipped policy allows tf32
    assert speed_flags([row(100)], h200, Precision(("fp32", "3xtf32"))) == []
    (flag,) = speed_flags([row(100)], h200, Precision(("fp32",)))
    assert flag.code == "beyond_roofline" and "100.0 TFLOP/s" in flag.detail and "FP32 FMA peak (66.9" in flag.detail
    (flag,) = speed_flags([row(200)], h200, Precision(("fp32", "3xtf32")))
    assert "3xTF32 tensor-core peak (178.4" in flag.detail
    assert [f.code for f in speed_flags([row(600)], h200)] == ["beyond_roofline"]   # above TF32's 535


def test_audit_tiers():
    from grader.integrity import audit_flags
    flags = audit_flags({"calls": 3, "flagged": {"aten.bmm": 6, "aten._softmax": 3, "aten.mul_": 3}})
    assert [(f.code, f.tier) for f in flags] == [("dispatched_compute", "strict"), ("dispatched_ops", "warning")]
    assert "aten.bmm x6" in flags[0].detail and "aten.mul_" not in flags[0].detail
    assert [f.tier for f in audit_flags({"flagged": {"aten.div_": 1}})] == ["warning"]
    assert audit_flags({"flagged": {}}) == []
