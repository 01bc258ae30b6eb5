"""The static scan: calls fire, comments, strings and look-alike identifiers do not; and
the review flags from measurements."""
from pathlib import Path

import pytest

from grader.judge.integrity import fp32_peak_flops, scan, speed_flags, strip_comments
from grader.build.parse import Source
from conftest import REPO, TESTS


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
    from grader.core.config import Precision
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
    from grader.judge.integrity import audit_flags
    flags = audit_flags({"calls": 3, "flagged": {"aten.bmm": 6, "aten._softmax": 3, "aten.mul_": 3}})
    assert [(f.code, f.tier) for f in flags] == [("dispatched_compute", "strict"), ("dispatched_ops", "warning")]
    assert "aten.bmm x6" in flags[0].detail and "aten.mul_" not in flags[0].detail
    assert [f.tier for f in audit_flags({"flagged": {"aten.div_": 1}})] == ["warning"]
    assert audit_flags({"flagged": {}}) == []


# ---- the machine-code audit: every spelling of a syscall, and failing closed ----------------

def _shared_library(tmp_path, code: str, name: str = "k") -> bytes:
    import shutil
    import subprocess
    if not shutil.which("gcc") or not shutil.which("objdump"):
        pytest.skip("needs gcc and objdump")
    (tmp_path / f"{name}.c").write_text(code)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(tmp_path / f"{name}.so"), str(tmp_path / f"{name}.c")],
                   check=True)
    return (tmp_path / f"{name}.so").read_bytes()


def test_a_syscall_behind_an_instruction_prefix_is_counted(tmp_path):
    """objdump prints `rex.W syscall` and `ds syscall`: the audit matched only a bare one."""
    from grader.judge.linkaudit import raw_syscalls
    asm = 'long {f}(long n) {{ long r; __asm__ volatile("{p}syscall" : "=a"(r) : "a"(n) : "rcx","r11","memory"); return r; }}\n'
    code = "".join(asm.format(f=f, p=p) for f, p in (("a", "rex.W "), ("b", "ds "), ("c", "data16 "), ("d", "")))
    assert raw_syscalls(_shared_library(tmp_path, code)) == 4


def test_code_too_large_to_disassemble_fails_closed(tmp_path):
    """300 MB of NOPs before a syscall: objdump ran past its limit, the audit returned
    'nothing found', and the judge buffered gigabytes of disassembly."""
    from grader.judge.linkaudit import audit_library
    code = ('__attribute__((used)) void pad(void) { __asm__ volatile(".fill 80000000, 1, 0x90"); }\n'
            'long f(long n) { long r; __asm__ volatile("syscall" : "=a"(r) : "a"(n) : "rcx","r11","memory"); return r; }\n')
    flags = audit_library(_shared_library(tmp_path, code))
    assert [(f.code, f.tier) for f in flags] == [("unauditable", "strict")], flags
    assert "could not be audited" in flags[0].detail and "MiB of executable code" in flags[0].detail


@pytest.mark.parametrize("script, said", [("sleep 30", "ran past"), ("exit 3", "exit 3")])
def test_a_disassembler_that_does_not_finish_fails_closed(tmp_path, monkeypatch, script, said):
    import os
    from grader.judge import linkaudit
    data = _shared_library(tmp_path, "int f(int x) { return x + 1; }\n")
    fake = tmp_path / "bin" / "objdump"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho '   0:\tnop'\n{script}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(linkaudit, "DISASSEMBLY_TIMEOUT_S", 1.0)
    flags = linkaudit.audit_library(data)
    assert any(f.code == "unauditable" and f.tier == "strict" and said in f.detail for f in flags), flags


def test_a_demangler_that_fails_fails_the_audit_closed(tmp_path, monkeypatch):
    """A crafted name that crashes c++filt left every name mangled: none matched a rule, and a
    call of c10::Dispatcher was an unlisted warning."""
    import os
    from grader.judge import linkaudit
    fake = tmp_path / "bin" / "c++filt"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 139\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    flags = linkaudit._symbol_flags(["_ZN3c1010Dispatcher9singletonEv"], "k.py: ")
    assert [(f.code, f.tier) for f in flags] == [("unauditable", "strict")] and "c++filt failed" in flags[0].detail


def test_the_physical_floor():
    """A call faster than its FLOPs at the fastest allowed peak is impossible: flagged for
    review (the perf tier gives that size nothing)."""
    from grader.judge.integrity import floor_flags, floor_ms
    flops = 4 * 1 * 8 * 1024 * 1024 * 64
    h200 = {"sm_count": 132, "clock_sm_max_mhz": 1980, "capability": "9.0"}
    gpu = floor_ms(flops, "cuda", h200, None)
    assert 0.003 < gpu < 0.005                        # 2.1 GFLOP at ~535 TFLOP/s (TF32): ~4 µs
    assert floor_ms(flops, "cpu", {}, {"peak_flop_per_s": 2e11}) == pytest.approx(flops / 4e11 * 1e3)
    assert floor_ms(flops, "cpu", {}, None) is None and floor_ms(flops, "cuda", {}, None) is None
    row = {"S": 1024, "student_ms": 0.9, "floor_ms": gpu,
           "timings": {"student": {"median_ms": 0.9, "min_ms": 0.0012}}}
    [flag] = floor_flags([row])
    assert flag.code == "below_physical_floor" and flag.tier == "review" and "fastest call 1.2 µs" in flag.detail
    assert floor_flags([{**row, "timings": {"student": {"median_ms": 0.9, "min_ms": 0.8}}}]) == []


@pytest.mark.parametrize("text, flagged", [
    ("static torch::Tensor cache;", True),
    ("    static std::map<uint64_t, torch::Tensor> cache;", True),
    ("static std::vector<at::Tensor> kept;", True),
    ("static torch::Tensor correct_attention(const torch::Tensor& q) { return q; }", False),
    ("static const at::Tensor& pick(int i);", False),
    # static functions returning containers of tensors (x_static_tuple_helper.py, issue 32 held-out)
    ("static std::tuple<torch::Tensor, torch::Tensor> row_stats(const torch::Tensor& s) {", False),
    ("static std::vector<torch::Tensor> flat_views(torch::Tensor q) {", False),
    ("static std::vector<torch::Tensor>& views();", False),
    ("static std::tuple<torch::Tensor, torch::Tensor> kept;", True),
])
def test_static_tensor_means_a_tensor_kept_not_a_static_function(text, flagged):
    """`static torch::Tensor f(...)`, a static function, raised the cached-answer warning."""
    assert any(f.code == "static_tensor" for f in scan(Source("cpp", text, "a.py", (1,)))) == flagged


# ---- the timed calls' operators, counted natively (grader/build/dispatch.cpp) -----------------------

def test_compute_dispatched_only_in_timed_calls_is_counted(cfg, tmp_path):
    """A kernel honest under the dispatch mode (the checked calls, the audited untimed call)
    that calls SDPA through the dispatcher in every other call: the binding module's operator
    observer counts it in the warm-up and timed calls (the Python dispatch mode, ~30 us a call,
    is not used there), and the operation audit's strict flag names it."""
    from grader.run import grade
    src = (TESTS / "redteam" / "dispatcher_sdpa.py").read_text()
    correct = (TESTS / "redteam" / "_correct.inc").read_text()
    sub = tmp_path / "timed_sdpa.py"
    sub.write_text(src.replace("@@CORRECT@@", correct))
    result = grade(sub, cfg, backend="cpu", bench=True)
    codes = {(f["code"], f["tier"]) for f in result.flags}
    assert ("dispatched_compute", "strict") in codes and ("dispatcher", "strict") in codes, result.flags
    (flag,) = [f for f in result.flags if f["code"] == "dispatched_compute"]
    assert "scaled_dot_product" in flag["detail"], flag
    assert result.verdict == "cheat_suspected" and result.verdict_without_flags == "ok"


def test_an_honest_kernels_timed_calls_add_no_operator_flag(cfg):
    """The reference CPU kernel: its timed calls' operators (allocation only) add no flag, and
    the observer ran (no op_observation review)."""
    from grader.run import grade
    result = grade(REPO / "reference" / "fused.cpp", cfg, backend="cpu", bench=True)
    assert result.verdict == "ok", result.message
    assert not [f for f in result.flags if f["code"] in ("dispatched_compute", "dispatched_ops", "op_observation")], \
        result.flags


# ---- torch's C++ API: allowed by name, not by namespace (grader/judge/linkaudit.py TENSOR_API) --------

# the torch symbols honest builds call beyond their header baseline, measured on the CPU
# references, the CPU third-party corpus and the known-good submission (torch 2.13)
HONEST_TORCH_SYMBOLS = """
at::TensorBase::__dispatch_contiguous(c10::MemoryFormat) const
at::TensorBase::mutable_data_ptr<float>() const
at::TensorMaker::make_tensor()
at::_ops::clone::call(at::Tensor const&, std::optional<c10::MemoryFormat>)
at::_ops::empty_memory_format::call(c10::ArrayRef<c10::SymInt>, std::optional<c10::ScalarType>)
at::_ops::flatten_using_ints::call(at::Tensor const&, long, long)
at::_ops::zeros::call(c10::ArrayRef<c10::SymInt>, std::optional<c10::ScalarType>)
at::_ops::zeros_like::call(at::Tensor const&, std::optional<c10::ScalarType>)
at::get_num_threads()
at::get_thread_num()
at::in_parallel_region()
at::init_num_threads()
at::internal::set_thread_num(int)
c10::NotImplementedError::NotImplementedError(c10::SourceLocation, std::string)
c10::ParallelGuard::ParallelGuard(bool)
c10::ParallelGuard::~ParallelGuard()
c10::SymBool::guard_bool(char const*, long) const
c10::SymBool::guard_or_false(char const*, long) const
c10::SymbolicShapeMeta::init_is_contiguous() const
c10::TensorImpl::incref_pyobject() const
c10::detail::torchInternalAssertFail(char const*, char const*, unsigned int, char const*, char const*)
caffe2::TypeMeta::error_unsupported_typemeta(caffe2::TypeMeta)
c10::cuda::getCurrentCUDAStream(signed char)
c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, unsigned int, bool)
at::cuda::getCurrentDeviceProperties()
""".strip().splitlines()


def test_the_tensor_api_a_kernel_needs_is_allowed_and_the_rest_of_torch_is_looked_at():
    from grader.judge.linkaudit import classify
    assert [n for n in HONEST_TORCH_SYMBOLS if classify(n) is not None] == []
    # beyond the tensor API: no rule names them, so they were allowed by namespace
    for name in ("at::globalContext()", "torch::autograd::Function::apply()", "at::Tensor::backward(at::Tensor const&) const",
                 "c10::impl::OperatorEntry::lookup(c10::DispatchKeySet) const", "at::vec::exp(float)",
                 "torch::nn::functional::detail::softmax(at::Tensor const&, long)"):
        hit = classify(name)
        assert hit is not None and hit[1] in ("warning", "strict"), (name, hit)
    assert classify("at::globalContext()")[0] == "torch_internals"
    assert classify("c10::cuda::getStreamFromPool(bool, signed char)")[0] == "extra_streams"
    assert classify("c10::Dispatcher::singleton()")[:2] == ("dispatcher", "strict")


def test_every_spelling_of_a_computing_operator_is_strict():
    """Held-out attack of 2026-11-27: `at::_ops::baddbmm_::call` (in place) did both products and got
    only a warning (aten.baddbmm_ was not STRICT_OPS). In place, _out, overloads and the other
    product spellings are strict; elementwise and allocation operators stay warnings."""
    from grader.judge.integrity import STRICT_OPS
    for op in ("baddbmm_", "addmm_", "addbmm_", "addmv", "addr", "outer", "_addmm_activation",
               "_native_multi_head_attention", "_convolution", "baddbmm_.default", "mm.out", "mm_out"):
        assert STRICT_OPS.match(f"aten.{op}"), op
    for op in ("mul_", "add_", "copy_", "empty", "zeros_like", "clone", "fill_", "contiguous",
               "max_pool2d.default", "sum_to_size"):
        assert not STRICT_OPS.match(f"aten.{op}"), op
