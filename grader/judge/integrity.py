"""Integrity checks, layered; every finding is a flag in the result, never silent.

1. Static scan of the kernel source (`scan`): comments and string literals are blanked
   first, and patterns match calls and qualified names, not substrings, so a comment
   "do not call cublasSgemm" or a function named `my_softmax_kernel` does not fire.
   - strict tier (verdict `cheat_suspected`): cuBLAS / cuDNN / CUTLASS, ATen compute
     calls (`at::matmul`, `torch::softmax`, `x.bmm(...)`, ...), reading files or the
     environment, processes, sockets, dynamic loading, raw syscalls.
   - warning tier (flag only, for a human to look at): extra CUDA streams or events,
     timing calls, sleeping, a `static` tensor (an answer cached between calls?).
2. Operation audit (`OpAudit`): while the student's `attention` runs on a check input,
   a `TorchDispatchMode` records every ATen operation it dispatches, also those called
   from C++. Allocation, view and copy operations are allowed; attention's own work
   (mm, bmm, _softmax, exp, sum/amax, the SDPA kernels, ...) is strict: the kernel must
   compute attention itself; other operations (an elementwise mul_) are a warning.
3. Review flags from the measurements (`speed_flags`): a kernel more than 10x faster
   than SDPA, or above the device's peak for the fastest arithmetic the config allows
   ([precision] allowed: TF32 on the tensor cores by default, not the FP32 FMA peak), is
   flagged for a human to review.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.sourcetext import strip_comments   # (grader.judge.integrity.strip_comments, its old home, still works)

STRICT, WARNING, REVIEW = "strict", "warning", "review"


@dataclass(frozen=True)
class Flag:
    code: str        # short id: "cublas", "aten_compute", "file_access", "dispatched_compute", ...
    tier: str        # strict (verdict cheat_suspected) | warning | review
    detail: str      # one sentence, with the .py line where there is one

    def as_dict(self) -> dict:
        return {"code": self.code, "tier": self.tier, "detail": self.detail}


# ---- 1. static scan -------------------------------------------------------------------

_ATEN_COMPUTE = (r"matmul|mm|bmm|baddbmm|addmm|addbmm|einsum|tensordot|dot|mv|linear|softmax|"
                 r"_softmax|log_softmax|scaled_dot_product_attention|_scaled_dot_product_\w+|"
                 r"_flash_attention_\w+|_efficient_attention_\w+|exp|exp_|sum|amax|max|"
                 r"logsumexp|mul|div|add|sub|baddbmm_|matmul_out|mm_out|bmm_out")
_METHOD_COMPUTE = r"matmul|mm|bmm|baddbmm|addmm|softmax|log_softmax|logsumexp|einsum"

def _free(names: str, std: bool = True) -> str:
    """A call of a free function (optionally std:: or :: qualified), not a method:
    `q.clone()` or `std::bind(...)` are not `clone(` / `bind(`."""
    qualified = r"(?:std\s*::\s*|::\s*)?" if std else r"(?:::\s*)?"
    return rf"(?<![\w.>:]){qualified}(?:{names})\s*\("


# (code, tier, regex on code with comments and strings blanked, what it means)
_CODE_RULES = [
    ("cublas", STRICT, r"\b(?:cublas|cudnn)\w*\s*\(|\b(?:cutlass|cute)\s*::",
     "calls a vendor library (cuBLAS/cuDNN/CUTLASS) instead of its own kernel"),
    ("aten_compute", STRICT, rf"\b(?:at|torch|at::native|torch::nn::functional|F)\s*::\s*(?:{_ATEN_COMPUTE})\s*\(",
     "calls an ATen compute function"),
    ("aten_compute", STRICT, rf"\.\s*(?:{_METHOD_COMPUTE})\s*\(",
     "calls a tensor compute method"),
    ("file_access", STRICT, _free("fopen|freopen|open|openat|creat|opendir|readdir|scandir|"
           "readlink|stat|lstat|access|unlink|rename") + r"|\bstd\s*::\s*[io]?fstream\b|\bFILE\s*\*",
     "opens or inspects files"),
    ("environment", STRICT, _free("getenv|secure_getenv|setenv|putenv") + r"|\benviron\b",
     "reads the environment"),
    ("process", STRICT, _free(r"system|popen|fork|vfork|clone|execl\w*|execv\w*|posix_spawn\w*|"
                             "kill|ptrace|syscall"), "starts processes or makes raw system calls"),
    ("network", STRICT, _free("socket|connect|bind|sendto|recvfrom|getaddrinfo", std=False),
     "opens network connections"),
    ("dynamic_loading", STRICT, _free("dlopen|dlsym|dlmopen|dlvsym"),
     "loads code at run time"),
    # the link audit's names (grader/judge/linkaudit.py), seen in the source too
    ("python_api", STRICT, r"\b_?Py[A-Z][A-Za-z]*_\w+\s*\(|\bPy_(?:Initialize|Finalize|Exit|DecRef|IncRef)\w*\s*\(|"
     r"\bpybind11\s*::|#\s*include\s*[<\"]Python\.h",
     "uses the Python C API (the grader's own process)"),
    ("aten_compute", STRICT, r"\bat\s*::\s*(?:cpu|native|redispatch|_ops)\s*::",
     "calls ATen's compute kernels directly"),
    ("blas", STRICT, r"\b(?:cblas_\w+|[sdcz]gemm_?|[sdcz]gemv_?|mkl_\w+|dnnl_\w+|LAPACKE_\w+)\s*\(",
     "calls a BLAS / LAPACK / oneDNN routine instead of computing"),
    ("global_settings", STRICT, r"\b(?:at|torch)\s*::\s*set_num(?:_interop)?_threads\s*\(|\bset(?:SDPUse|UserEnabled|"
     r"AllowTF32|Float32MatmulPrecision|FlushDenormal)\w*\s*\(|\bglobalContext\s*\(\s*\)\s*\.\s*set\w*\s*\(",
     "changes torch's global settings (threads, SDP backends, TF32: SDPA's speed depends on them)"),
    ("runtime_compile", STRICT, r"\b(?:nvrtc\w+|cuModuleLoad\w*|cuLinkCreate\w*)\s*\(",
     "compiles or loads GPU code at run time"),
    ("own_threads", WARNING, r"\bpthread_create\s*\(|\bstd\s*::\s*(?:thread|jthread|async)\b",
     "starts its own threads (left running, they would slow what is timed next)"),
    ("thread_settings", WARNING, r"\bomp_set_(?:num_threads|dynamic|nested|max_active_levels)\s*\(",
     "changes OpenMP's thread settings (shared with torch; SDPA is timed with torch's put back)"),
    ("extra_streams", WARNING, r"\b(?:cudaStreamCreate\w*|getStreamFromPool|cudaStreamBeginCapture)\b",
     "creates its own CUDA streams (timing covers the current stream only)"),
    ("timing_calls", WARNING, r"\b(?:cudaEvent\w+|clock|clock64|globaltimer|gettimeofday|"
     r"clock_gettime|__nanosleep|usleep|nanosleep|sleep_for)\b\s*\(|\bstd\s*::\s*chrono\b",
     "reads clocks or sleeps"),
    # a static tensor, or a static container of them (std::map<key, torch::Tensor>); not a static
    # function that returns one (`static torch::Tensor f(...)`, `static std::tuple<torch::Tensor,
    # torch::Tensor> f(...)`: no `name(` after the tensor type, nor after the template holding it)
    ("static_tensor", WARNING, r"\bstatic\s+(?:const\s+)?(?:std\s*::\s*\w+\s*<[^;{()]*?)?(?:torch|at)\s*::\s*"
     r"Tensor\b(?!\s*&?\s*\w+\s*\()(?![^;{()]*>\s*[&*]?\s*\w+\s*\()",
     "keeps a tensor between calls (cached answers?)"),
    ("device_sync", WARNING, r"\bcudaDeviceSetLimit\b|\bcudaDeviceReset\b|\bcudaSetDevice\b",
     "changes device state"),
]
_INCLUDE_RULES = [
    ("cublas", STRICT, r"cublas|cudnn|cutlass|cute/|cub/device|thrust/|cusparse|cufft",
     "includes a vendor math library"),
    ("file_access", STRICT, r"^(?:fstream|dirent\.h|sys/stat\.h|fcntl\.h|filesystem)$",
     "includes file-system headers"),
    ("network", STRICT, r"sys/socket\.h|netinet/|arpa/inet\.h|netdb\.h", "includes socket headers"),
    ("dynamic_loading", STRICT, r"^dlfcn\.h$", "includes the dynamic loader"),
    ("process", STRICT, r"^(?:unistd\.h|spawn\.h|sys/syscall\.h|sys/ptrace\.h)$",
     "includes process-control headers"),
]
_COMPILED = [(c, t, re.compile(p), m) for c, t, p, m in _CODE_RULES]
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def scan(src) -> list[Flag]:
    """Static flags of one kernel source (`grader.build.parse.Source`), lines of the .py file."""
    if src.kind == "triton":
        from .tritonaudit import audit
        return [Flag(f.code, STRICT, f"{src.file}:{src.file_line(f.line)}: {f.what}") for f in audit(src.text)]
    flags: list[Flag] = []
    seen = set()
    code = strip_comments(src.text)
    no_comments = strip_comments(src.text, strings_too=False)

    def add(code_: str, tier: str, line: int, what: str, snippet: str) -> None:
        key = (code_, snippet)
        if key in seen:
            return
        seen.add(key)
        flags.append(Flag(code_, tier, f"{src.file}:{src.file_line(line)}: {what} (`{snippet}`)"))
    for m in _INCLUDE.finditer(no_comments):
        for code_, tier, pattern, what in _INCLUDE_RULES:
            if re.search(pattern, m[1]):
                add(code_, tier, no_comments.count("\n", 0, m.start()) + 1, what, f"#include {m[1]}")
    for code_, tier, pattern, what in _COMPILED:
        for m in pattern.finditer(code):
            snippet = re.sub(r"\s+", " ", m[0]).strip()
            add(code_, tier, code.count("\n", 0, m.start()) + 1, what, snippet)
    return flags


# ---- 2. operation audit ------------------------------------------------------------------

# ATen operations a kernel may dispatch: allocation, views, copies, metadata.
ALLOWED_OPS = frozenset("""
empty empty_like empty_strided empty_permuted new_empty new_empty_strided zeros zeros_like
ones ones_like full full_like new_zeros new_ones new_full fill_ fill zero_ scalar_tensor
copy_ copy clone _to_copy to contiguous _copy_from _copy_from_and_resize resize_ resize_as_
view view_as _unsafe_view reshape _reshape_alias as_strided as_strided_ transpose transpose_ t
permute expand expand_as select slice slice_tensor narrow unsqueeze squeeze unsqueeze_ squeeze_
detach detach_ alias lift_fresh unbind split split_with_sizes chunk unflatten flatten movedim
cat stack constant_pad_nd record_stream set_ is_same_size sym_size sym_stride sym_numel
sym_storage_offset _local_scalar_dense item is_nonzero _has_compatible_shallow_copy_type
""".split())


# Operations that read a tensor's values into Python (`float(x)`, `x.item()`): harmless in
# C++ glue, but in a Triton submission they are how attention is computed in plain Python
# on the host, elementwise, with no computing ATen operation (grader/judge/tritonaudit.py).
VALUE_READS = frozenset({"_local_scalar_dense", "item", "is_nonzero"})


# Operators torch's observer (RecordFunction) sees that the Python dispatch mode does not: the
# composite ones an allowed call goes through (`reshape` -> `_reshape_alias`, `matmul`'s
# views and conjugate checks). Harmless names only; a composite that computes (`matmul`,
# `linear`, `einsum`) is in STRICT_OPS and counted.
NATIVE_BENIGN = frozenset("""
resolve_conj resolve_neg _unsafe_view lift_fresh_copy _reshape_alias as_strided result_type
is_floating_point is_complex is_signed size stride numel dim is_contiguous _shape_as_tensor
_nested_tensor_size _conj _neg_view conj _to_dense
""".split())


class OpAudit:
    """Count the non-allowed ATen operations dispatched inside `call(...)` (the checked calls:
    torch's Python dispatch mode), and those the kernel's other calls dispatched (`unaudited`:
    the warm-up and timed calls, counted natively by the grader's binding module, whose
    operator observer costs ~0.1 us an operator where the dispatch mode costs ~30 us a call)."""

    def __init__(self, allowed: frozenset = ALLOWED_OPS):
        self.flagged: dict[str, int] = {}
        self.calls = 0
        self.allowed = allowed
        self.unaudited_calls = 0            # calls outside the dispatch mode whose operators were counted
        self.unaudited_observed: bool | None = None    # None: no such calls yet; False: could not count

    def unaudited(self, calls: int | None, ops: dict | None, every_op: bool = False) -> None:
        """Merge what the binding module counted over calls made outside the dispatch mode
        ({"aten::mm": 160}): operators that compute attention (STRICT_OPS; any non-allowed
        one when `every_op`, a Triton submission) join `flagged`; other operators, which the
        checked calls' audit already reports, are left out (composite names differ there).
        `calls` None: the counter could not run (said in the audit, never read as clean)."""
        if calls is None:
            self.unaudited_observed = False
            return
        self.unaudited_observed = self.unaudited_observed is not False
        self.unaudited_calls += int(calls)
        for name, n in (ops or {}).items():
            op = str(name).replace("::", ".", 1)[:200]
            base = op.split(".", 1)[-1]
            if op.startswith("aten.") and (base in self.allowed or base in NATIVE_BENIGN):
                continue                       # (a custom operator of the same name is not ATen's)
            if every_op or STRICT_OPS.match(op):
                self.flagged[op] = self.flagged.get(op, 0) + int(n)

    def call(self, kernel, *args):
        from torch.utils._python_dispatch import TorchDispatchMode
        flagged, allowed = self.flagged, self.allowed

        class _Mode(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls) -> bool:
                # torch wraps a mode's __torch_dispatch__ so that torch.compile skips its
                # frames, and that wrapper's first call imports torch._dynamo: 1.5-3 s in every
                # child, twice a submission. Nothing is compiled here: no wrapper.
                return False

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                name = func.overloadpacket.__name__
                if name not in allowed:
                    key = str(func.overloadpacket)
                    flagged[key] = flagged.get(key, 0) + 1
                return func(*args, **(kwargs or {}))
        self.calls += 1
        with _Mode():
            return kernel(*args)

    def as_dict(self) -> dict:
        out = {"calls": self.calls, "flagged": dict(self.flagged)}
        if self.unaudited_observed is not None:
            out["unaudited_calls"] = self.unaudited_calls
            out["unaudited_observed"] = self.unaudited_observed
        return out


# Dispatched operations that compute (part of) attention: products, softmax, its
# exponential and reductions, the SDPA kernels. Any of them is strict; other
# non-allowed operations (an elementwise `q.mul_(2)`) are a warning.
# Each in every spelling: in place (`baddbmm_`: a held-out attack of 2026-11-27 reached it
# through the operator's symbol and got only a warning), `_out`, an overload (`.default`).
STRICT_OPS = re.compile(r"^aten\.(_?(mm|bmm|matmul|addmm|addbmm|baddbmm|addmv|addr|outer|ger|inner|mv|dot|vdot|"
                        r"linear|einsum|tensordot|_addmm_activation|_?native_multi_head_attention|"
                        r"softmax|_softmax|_safe_softmax|log_softmax|_log_softmax|logsumexp|exp|exp2|"
                        r"sum|amax|max|mean)_?(_out)?|_?scaled_dot_product\w*|_flash_attention\w*|"
                        r"_efficient_attention\w*|_cudnn_attention\w*|_?convolution\w*)(\.\w+)?$")


def audit_flags(audit: dict | None, every_op_strict: bool = False) -> list[Flag]:
    """The operation audit's flags. `every_op_strict`: a Triton submission, whose torch is for
    allocation and shapes only: any computing operation is strict, an `x * y` on the host too."""
    unobserved = [Flag("op_observation", REVIEW, "the operators of the kernel's timed calls could not be "
                       "counted (the grader's operator observer did not run): dispatched compute there is "
                       "unseen")] if audit and audit.get("unaudited_observed") is False else []
    if not audit or not audit.get("flagged"):
        return unobserved
    strict = {op: n for op, n in audit["flagged"].items() if every_op_strict or STRICT_OPS.match(op)}
    other = {op: n for op, n in audit["flagged"].items() if op not in strict}
    fmt = lambda ops: ", ".join(f"{op} x{n}" for op, n in sorted(ops.items()))  # noqa: E731
    flags = []
    if strict:
        flags.append(Flag("dispatched_compute", STRICT, "while computing attention the kernel dispatched "
                          f"PyTorch compute operations: {fmt(strict)}"))
    if other:
        flags.append(Flag("dispatched_ops", WARNING, f"the kernel dispatched PyTorch operations: {fmt(other)} "
                          "(not attention's products or softmax, but work done outside the kernel)"))
    return flags + unobserved


# ---- 3. review flags from the measurements ----------------------------------------------

SUSPICIOUS_SPEEDUP = 10.0
PRECISION_NAMES = {"fp32": "FP32 FMA", "3xtf32": "3xTF32 tensor-core", "tf32": "TF32 tensor-core"}


def precision_peaks(system: dict) -> dict:
    """precision -> peak FLOP/s of the grading GPU (grader/analysis/roofline.py: precision_ceilings, at
    the maximum SM clock); {} when the results do not say which GPU."""
    from ..analysis.roofline import precision_ceilings
    try:
        sm_count, clock = int(system["sm_count"]), float(system["clock_sm_max_mhz"]) * 1e6
    except (KeyError, TypeError, ValueError):
        return {}
    peaks = precision_ceilings(sm_count, clock, str(system.get("capability") or ""))
    if "fp32" not in peaks and not system.get("capability"):
        peaks["fp32"] = sm_count * 128 * 2 * clock      # results without a capability: 128 FP32 lanes
    return peaks


def fp32_peak_flops(system: dict) -> float | None:
    """fp32 FMA peak of the GPU (SMs x FP32 lanes x 2 FLOPs x max clock), None when unknown."""
    return precision_peaks(system).get("fp32")


def state_flags(changes: list) -> list[Flag]:
    """Flags of torch's global state found changed before an SDPA measurement (bench.StateGuard;
    put back each time). A thread count a kernel set (omp_set_num_threads changes torch's too)
    is a warning; SDP backends, TF32, matmul precision or denormal flushing, which an
    attention kernel has no reason to touch, are strict."""
    if not changes:
        return []
    threads = [c for c in changes if str(c).startswith(("num_threads", "num_interop_threads"))]
    other = [c for c in changes if c not in threads]
    flags = []
    if other:
        flags.append(Flag("global_state", STRICT, "torch's global settings changed while the kernel ran (put back "
                          f"before every SDPA measurement): {'; '.join(map(str, other))[:400]}"))
    if threads:
        flags.append(Flag("thread_count", WARNING, "torch's thread count changed while the kernel ran (put back "
                          f"before every SDPA measurement): {'; '.join(map(str, threads))[:200]}"))
    return flags


CPU_FLOOR_MARGIN = 2.0    # the CPU's peak is measured (a busy machine measures less): room for that


def floor_ms(flops: int, device: str, system: dict, ceilings: dict | None, precision=None) -> float | None:
    """The physical floor of one call (ms): the shape's FLOPs at the fastest peak the
    assignment allows on this device (the GPU's tensor-core peak of the fastest allowed
    precision, at its maximum clock; the CPU's measured FMA peak, with CPU_FLOOR_MARGIN of
    room). No honest call is faster; None when the device's peak is unknown."""
    if device == "cpu":
        peak = (ceilings or {}).get("peak_flop_per_s")
        return flops / (peak * CPU_FLOOR_MARGIN) * 1e3 if peak else None
    from ..core.config import load_precision
    policy = precision or load_precision()
    peak = precision_peaks(system).get(policy.fastest)
    return flops / peak * 1e3 if peak else None


def floor_flags(bench: list) -> list[Flag]:
    """A review flag for every size where a figure of the kernel (its median, its fastest
    call) is below the physical floor (`floor_ms`): a time no kernel can take was reported
    or measured, and that size scores nothing (grader/analysis/perf_tier.py). Not strict: a kernel
    that returns garbage fast is below it too, and its verdict must stay wrong_answer."""
    from ..analysis.perf_tier import below_floor
    flags = []
    for row in bench:
        low = below_floor(row)
        if low:
            flags.append(Flag("below_physical_floor", REVIEW, f"S={row['S']}: {low}, below the physical floor "
                              f"of {row['floor_ms'] * 1e3:.1f} µs (its FLOPs at the fastest allowed peak)"))
    return flags


def speed_flags(bench: list, system: dict, precision=None) -> list[Flag]:
    """Review flags from the timings. FLOP/s use the grader's one convention (the bench
    rows' `flops`, 4·B·H·S²·D). `beyond_roofline`: faster than the fastest precision the
    config allows ([precision] allowed, grader/core/config.py) can go on this GPU; an honest
    3xTF32 kernel is above the FP32 FMA peak but below its own ceiling."""
    from ..core.config import load_precision
    policy = precision or load_precision()
    peaks = precision_peaks(system)
    ceiling = peaks.get(policy.fastest)
    flags = []
    for row in bench:
        slowdown, ms = row.get("slowdown"), row.get("student_ms")
        if slowdown and slowdown < 1 / SUSPICIOUS_SPEEDUP:
            flags.append(Flag("too_fast", REVIEW, f"S={row['S']}: {1 / slowdown:.1f}x faster than SDPA "
                              f"(more than {SUSPICIOUS_SPEEDUP:g}x): please check by hand"))
        rate = row["flops"] / (ms * 1e-3) if ms else None          # FLOP/s
        if ceiling and rate and rate > ceiling:
            others = ", ".join(f"{PRECISION_NAMES[k]} {v / 1e12:.1f}" for k, v in peaks.items() if k != policy.fastest)
            flags.append(Flag("beyond_roofline", REVIEW, f"S={row['S']}: {rate / 1e12:.1f} "
                              f"TFLOP/s is above this GPU's {PRECISION_NAMES[policy.fastest]} peak "
                              f"({ceiling / 1e12:.1f} TFLOP/s), the fastest arithmetic the assignment allows "
                              f"({', '.join(policy.allowed)}){f'; other peaks, TFLOP/s: {others}' if others else ''}: "
                              "please check by hand"))
    return flags
