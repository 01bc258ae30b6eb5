"""Triton submissions (issue 31), on the CPU: the contract, the allowlist, the backend
choice, and whole grades in Triton's interpreter (TRITON_INTERPRET=1 in the child).

The allowlist tests need no Triton; the grades need it installed (`pip install -e
'.[triton]'`, which CI does), and are skipped with that reason where it is not.
"""
import importlib.util
from dataclasses import asdict

import pytest

from conftest import REPO, SUBMISSIONS, TEMPLATE_DIR
from grader.analysis.diagnose import across_configs
from grader.isolation.options import GraderError
from grader.build.parse import parse, parse_python
from grader.run import choose_backend, grade
from grader.judge.tritonaudit import audit

HAS_TRITON = importlib.util.find_spec("triton") is not None
needs_triton = pytest.mark.skipif(not HAS_TRITON, reason="Triton is not installed: pip install -e '.[triton]'")
TRITON = SUBMISSIONS / "triton"
HEAD = "import math\nimport torch\nimport triton\nimport triton.language as tl\n"

# ---- the allowlist: every class of way round it, refused from the syntax tree ------------

ATTACKS = {
    # SDPA or torch's compute, named or hidden
    "getattr on a built name": "def attention(q, k, v):\n    return getattr(torch.nn.functional, 'scaled_' + 'dot')(q, k, v)",
    "module alias": "F = torch\ndef attention(q, k, v):\n    return F.softmax(q, -1)",
    "alias through a default": "def attention(q, k, v, t=torch):\n    return t.bmm(q, k)",
    "alias through walrus": "def attention(q, k, v):\n    return (t := torch).bmm(q, k)",
    "submodule as a value": "lang = triton.language\ndef attention(q, k, v):\n    return q",
    "import of torch.nn.functional": "import torch.nn.functional as F\ndef attention(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)",
    "from torch.nn import": "from torch.nn import functional\ndef attention(q, k, v):\n    return q",
    "torch.ops": "def attention(q, k, v):\n    return torch.ops.aten.mm(q, k)",
    "tensor methods": "def attention(q, k, v):\n    return (q.matmul(k.transpose(-1, -2)) / 8).softmax(-1).matmul(v)",
    "@ on the host": "def attention(q, k, v):\n    return q @ k",
    "a torch function off the list": "def attention(q, k, v):\n    return torch.cat([q])",
    "dunder attribute": "def attention(q, k, v):\n    return q.__class__.__matmul__(q, k)",
    "sum of a tensor": "def attention(q, k, v):\n    return sum(q)",
    # reaching the harness or the interpreter
    "__import__": "def attention(q, k, v):\n    return __import__('sys').modules",
    "a builtin rebound then used": "if False:\n    getattr = 1\ndef attention(q, k, v):\n    return getattr(torch, 'bmm')",
    "globals": "def attention(q, k, v):\n    return globals()['torch']",
    "__builtins__": "def attention(q, k, v):\n    return __builtins__",
    "str.format reaching dunders": "def attention(q, k, v):\n    return '{0.__class__}'.format(q)",
    "traceback frames": "def attention(q, k, v):\n    try:\n        raise ValueError()\n    except ValueError as e:\n        return e.args",
    "a class with hooks": "class A:\n    pass\ndef attention(q, k, v):\n    return q",
    "import os": "import os\ndef attention(q, k, v):\n    return q",
    "importlib": "import importlib\ndef attention(q, k, v):\n    return q",
    "open a file (the Triton cache)": "def attention(q, k, v):\n    open('/tmp/x', 'w')\n    return q",
    "a name the file never binds": "def attention(q, k, v):\n    return sys",
    # code at import, kernels from strings, Triton's runtime
    "own decorator": "def run(f):\n    return f\n@run\ndef attention(q, k, v):\n    return q",
    "lambda decorator": "@(lambda f: f)\ndef attention(q, k, v):\n    return q",
    "exec of a kernel string": "exec('x = 1')\ndef attention(q, k, v):\n    return q",
    "compile": "def attention(q, k, v):\n    return compile('1', 'f', 'eval')",
    "triton.runtime": "def attention(q, k, v):\n    return triton.runtime.driver",
    "triton.knobs hook": "triton.knobs.runtime.launch_enter_hook = None\ndef attention(q, k, v):\n    return q",
    "from triton.runtime": "from triton.runtime import driver\ndef attention(q, k, v):\n    return q",
    "tl.core": "def attention(q, k, v):\n    return tl.core",
    "tl.math as a value": "m = tl.math\ndef attention(q, k, v):\n    return q",
    "tl.math off its list": "def attention(q, k, v):\n    return tl.math.sys",
    "a side stream": "def attention(q, k, v):\n    s = torch.cuda.Stream()\n    return q",
    "with": "def attention(q, k, v):\n    with torch.no_grad():\n        return q",
    "global rebinding a module": "def attention(q, k, v):\n    global tl\n    tl = 1\n    return q",
    # found by a red-team pass over the first version (each ran to SDPA or to os/sys there)
    "a listed function's own attributes": "def attention(q, k, v):\n"
        "    b = tl.softmax.get_capture_scope()['__builtins__']\n    return b",
    "a value laundered through an attribute store": "def attention(q, k, v):\n    triton.jit.box = q\n"
        "    return triton.jit.box.matmul(k)",
    "patching torch from the file": "def nothing(*a):\n    return None\ntorch.cuda.synchronize = nothing\n"
        "def attention(q, k, v):\n    return q",
    "augmented attribute store": "def attention(q, k, v):\n    tl.softmax.fn += 1\n    return q",
    "a global the interpreter injects": "def unused():\n    inspect = 0\n    return inspect\n"
        "def attention(q, k, v):\n    return inspect.currentframe()",
    "a jit function called on the host": "@triton.jit\ndef f(q, k):\n    return q @ k\n"
        "def attention(q, k, v):\n    return f(q, k)",
    # the second pass: strings that Triton re-reads as kernels, names the interpreter fills in,
    # import order, rebound imports
    "a kernel hidden in a string": '@triton.jit\ndef kern(O):\n    doc = """\ndef kern(O):\n    import os\n"""\n'
        "    tl.store(O, 1.0)\ndef attention(q, k, v):\n    return q",
    "a kernel hidden in a decorator's string": '@triton.jit(repr="""\ndef kern(O):\n    pass""")\ndef kern(O):\n'
        "    tl.store(O, 1.0)\ndef attention(q, k, v):\n    return q",
    "a global bound only under if False": "if False:\n    np = None\n@triton.jit\ndef k(O):\n    np.ravel(O)\n"
        "def attention(q, k, v):\n    return q",
    "a global bound only in a for": "for inspect in ():\n    pass\ndef attention(q, k, v):\n    return inspect",
    "one name, two modules": "import torch as tl2\nimport triton.language as tl2\ndef attention(q, k, v):\n    return q",
    "an import under if": "if False:\n    import torch as tl\ndef attention(q, k, v):\n    return q",
    "a from-import rebound": "from triton import jit\njit = lambda f: {0: f}\ndef attention(q, k, v):\n    return q",
    "except as a module name": "def attention(q, k, v):\n    try:\n        pass\n    except Exception as torch:\n"
        "        pass\n    return q",
    "a jit function passed as a value": "@triton.jit\ndef f(q):\n    pass\n"
        "def attention(q, k, v):\n    g = f\n    return g(q)",
}


@pytest.mark.parametrize("name", ATTACKS)
def test_the_allowlist_refuses(name):
    findings = audit(HEAD + ATTACKS[name])
    assert findings, f"{name}: not refused"
    assert all(f.code in ("torch_compute", "triton_allowlist") for f in findings)


def test_compute_is_named_as_such():
    found = audit(HEAD + ATTACKS["torch.ops"])
    assert found[0].code == "torch_compute" and "torch.ops" in found[0].what
    assert audit(HEAD + ATTACKS["tensor methods"])[0].code == "torch_compute"


@pytest.mark.parametrize("path", ["reference/naive.triton.py", "reference/fused.triton.py"])
def test_the_references_are_on_the_allowlist(path):
    assert audit((REPO / path).read_text()) == []


def test_what_a_triton_kernel_needs_is_allowed():
    ok = HEAD + '''
from triton import cdiv


@triton.heuristics({"EVEN": lambda args: args["S"] % 64 == 0})
@triton.jit
def _k(x, S, EVEN: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64)
    r = i * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(x + r[:, None] * BLOCK + r[None, :], mask=r[:, None] < S, other=0.0)
    b = a @ tl.trans(a)
    tl.store(x + r, b.max(axis=1) + tl.exp2(b.sum(axis=1)), mask=r < S)


def attention(q, k, v):
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    lse = torch.empty((B, H, S), device=q.device, dtype=torch.float32)
    grid = lambda meta: (cdiv(S, meta["BLOCK"]), B * H)
    _k[grid](out, S, BLOCK=max(16, triton.next_power_of_2(D)))
    assert q.is_contiguous() and q.stride(3) == 1, "contiguous inputs"
    return out
'''
    assert audit(ok) == []


def test_the_scan_turns_findings_into_strict_flags_at_the_students_line():
    from grader.judge.integrity import STRICT, scan
    text = '"""doc"""\n\n_TRITON_SRC = r"""\n' + HEAD + 'def attention(q, k, v):\n    return q.bmm(k)\n"""\n'
    sub = parse_python(text, REPO / "attention.py", "s")
    flags = scan(sub.sources["triton"])
    assert [(f.code, f.tier) for f in flags] == [("torch_compute", STRICT)]
    assert flags[0].detail.startswith("attention.py:9: `.bmm`")


# ---- the contract: parse and the backend ------------------------------------------------------

def test_a_bare_triton_file_is_a_triton_source():
    sub = parse(REPO / "reference" / "fused.triton.py")
    assert sub.ok and list(sub.sources) == ["triton"] and sub.name == "fused"
    assert sub.sources["triton"].file_line(40) == 40


def test_backend_choice(monkeypatch):
    import grader.run as run
    monkeypatch.setattr(run, "gpu_present", lambda: False)
    template = parse(TEMPLATE_DIR / "attention.py")
    assert choose_backend(template, "auto")[0] == "cpu"              # the untouched template: as before
    backend, why = choose_backend(template, "triton")
    assert backend == "triton" and "interpreter" in why
    only = parse(TRITON / "missing_scale.py")
    assert choose_backend(only, "auto") == ("triton", "_TRITON_SRC is the implemented source" + run.TRITON_ON_CPU)
    with pytest.raises(GraderError, match="--backend triton"):
        choose_backend(only, "cpu")
    with pytest.raises(GraderError, match="no _TRITON_SRC"):
        choose_backend(parse(SUBMISSIONS / "correct" / "scalar_loop.py"), "triton")
    # a template whose Triton source is written and whose C++ stays the stub: Triton
    written = (TEMPLATE_DIR / "attention.py").read_text().replace(
        (REPO / "grader" / "pristine" / "attention.py").read_text().split('_TRITON_SRC = r"""')[1].split('"""')[0],
        (REPO / "reference" / "fused.triton.py").read_text())
    sub = parse_python(written, REPO / "attention.py", "s")
    assert choose_backend(sub, "auto")[0] == "triton"
    monkeypatch.setattr(run, "gpu_present", lambda: True)
    assert choose_backend(sub, "auto") == ("triton", "_TRITON_SRC is the implemented source; a CUDA GPU is present")


# ---- whole grades in the interpreter ------------------------------------------------------------

@pytest.fixture(scope="module")
def grade_triton(cfg):
    """Grades in Triton's interpreter, on a GPU machine too (TRITON_INTERPRET=1 asks for it)."""
    memo = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITON_INTERPRET", "1")

        def run(path):
            if str(path) not in memo:
                memo[str(path)] = grade(path, cfg, backend="triton")
            return memo[str(path)]
        yield run


@needs_triton
def test_the_template_is_not_implemented(grade_triton):
    result = grade_triton(TEMPLATE_DIR)
    assert result.verdict == "not_implemented", result.message
    assert "write your kernel in _TRITON_SRC" in result.message


@needs_triton
@pytest.mark.parametrize("name", ["naive", "fused"])
def test_the_reference_kernels_are_ok_and_not_timed(grade_triton, name):
    result = grade_triton(REPO / "reference" / f"{name}.triton.py")
    assert result.verdict == "ok", result.message
    assert "not timed" in result.message and "interpreter" in result.message
    assert result.bench == () and not result.flags
    assert all(c.passed and c.max_err < 1e-4 for c in result.checks)
    assert result.compile.tier == "triton"


@needs_triton
def test_the_tail_bug_is_named(grade_triton):
    result = grade_triton(TRITON / "tail_dropped.py")
    assert result.verdict == "wrong_answer"
    assert [c.passed for c in result.checks] == [True, False, True, True]
    assert "never written" in result.checks[1].message and "s=320..332" in result.checks[1].message


@needs_triton
def test_the_missing_scale_is_named(grade_triton):
    result = grade_triton(TRITON / "missing_scale.py")
    assert result.verdict == "wrong_answer"
    assert all("a missing 1/√D scale" in c.message for c in result.checks)
    assert across_configs([asdict(c) for c in result.checks]) is None    # each config names it already


@needs_triton
def test_the_missing_max_shift_is_named(grade_triton):
    result = grade_triton(TRITON / "no_max_shift.py")
    assert [c.passed for c in result.checks] == [True, True, True, False]
    assert "a softmax without the max shift" in result.checks[3].message


@needs_triton
@pytest.mark.parametrize("name,flag", [("sdpa_getattr", "triton_allowlist"), ("sdpa_alias", "triton_allowlist"),
                                       ("sdpa_ops", "torch_compute")])
def test_sdpa_hidden_three_ways_is_caught(grade_triton, name, flag):
    result = grade_triton(TRITON / f"{name}.py")
    assert result.verdict == "cheat_suspected", result.message
    codes = {f["code"] for f in result.flags if f["tier"] == "strict"}
    assert flag in codes
    # the second net: the operation audit saw SDPA run in the checked calls
    assert "dispatched_compute" in codes or name == "sdpa_ops", codes
    assert result.verdict_without_flags in ("ok", "runtime_error")


@needs_triton
def test_torch_arithmetic_on_the_host_is_strict_at_run_time(grade_triton):
    """What the syntax tree cannot refuse (`*`, `+`, pow on tensors in attention()): the
    operation audit sees ATen compute in a checked call; in a Triton submission any is strict."""
    result = grade_triton(TRITON / "host_arithmetic.py")
    assert result.verdict == "cheat_suspected", result.message      # (without the flags: wrong on config 4)
    assert "aten.mul" in result.message and not [f for f in result.flags if f["code"] == "triton_allowlist"]


@needs_triton
def test_a_syntax_error_and_a_missing_attention_are_compile_errors(cfg, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    bad = tmp_path / "syntax.py"
    bad.write_text('"""x"""\n\n_TRITON_SRC = r"""\nimport triton\ndef attention(q, k, v)\n    return q\n"""\n')
    result = grade(bad, cfg, backend="triton")
    assert result.verdict == "compile_error" and "syntax.py:5: Python syntax error" in result.compile.log
    none = tmp_path / "none.py"
    none.write_text('_TRITON_SRC = r"""\nimport triton\ndef attend(q, k, v):\n    return q\n"""\n')
    result = grade(none, cfg, backend="triton")
    assert result.verdict == "compile_error" and "no top-level `def attention(q, k, v)`" in result.compile.log


@needs_triton
def test_module_level_code_that_raises_names_the_students_line(cfg, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    sub = tmp_path / "loads.py"
    sub.write_text('"""x"""\n\n_TRITON_SRC = r"""\nimport triton\nBLOCK = 64 // 0\n\n\ndef attention(q, k, v):\n'
                   '    return q\n"""\n')
    result = grade(sub, cfg, backend="triton")
    assert result.verdict == "runtime_error"
    assert "loads.py:5: loading the Triton source raised ZeroDivisionError" in result.message


# ---- on a GPU: compiled, timed like CUDA --------------------------------------------------------

@pytest.mark.gpu
@needs_triton
@pytest.mark.parametrize("name", ["naive", "fused"])
def test_the_triton_references_are_compiled_and_timed_on_the_gpu(cfg, name, monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    result = grade(REPO / "reference" / f"{name}.triton.py", cfg, backend="triton")
    assert result.verdict == "ok", result.message
    assert result.backend == "triton" and "not timed" not in result.message
    assert [b.S for b in result.bench] == [s.S for s in cfg.bench_shapes]
    assert all(b.student_ms > 0 and b.slowdown > 0 for b in result.bench)
    assert result.system.get("gpu") and not [f for f in result.flags if f["tier"] == "strict"]
    # the launches observed are the file's own Triton kernels (and allocation), on one stream
    assert {e["class"] for e in result.launches["kernels"].values()} <= {"own", "allocation"}, result.launches
    assert result.launches["without_own"] == 0 and not [f for f in result.flags if f["code"].endswith("kernel")]


def test_make_profile_picks_the_triton_source_and_says_it_needs_a_gpu(tmp_path, monkeypatch):
    import grader.evidence.profile as prof
    from grader.core.config import load
    assert not prof.triton_profile(parse(TEMPLATE_DIR), "auto")          # the template: as before
    assert prof.triton_profile(parse(TEMPLATE_DIR), "triton")
    assert prof.triton_profile(parse(REPO / "reference" / "fused.triton.py"), "auto")
    assert not prof.triton_profile(parse(REPO / "reference" / "fused.triton.py"), "cpu")
    monkeypatch.setattr(prof, "_find_ncu", lambda: None)
    with pytest.raises(prof.ProfileError, match="a Triton kernel is profiled with Nsight Compute on a GPU"):
        prof.profile(REPO / "reference" / "fused.triton.py", load(), "after")


def test_a_profile_of_the_triton_reference_earns_nothing():
    """Provenance (grader/evidence/exports.py) knows the Triton references' digests too."""
    from grader.evidence.exports import provenance, reference_digests
    ref = (REPO / "reference" / "fused.triton.py").read_text()
    digest = next(d for d, name in reference_digests().items() if name == "fused.triton.py")
    mine = parse(TRITON / "missing_scale.py").sources["triton"].text
    records = [{"profile": "after", "nvtx": "student_S128", "source": digest, "kernel": "_attention", "profiler": "ncu"}]
    bad, problems = provenance({"triton": mine}, records)
    assert bad == {"after"} and "fused.triton.py" in problems[0]
    own = [{**records[0], "source": ""}]              # an export without digests: by the function names
    assert provenance({"triton": mine}, own) == (set(), [])
    assert ref


def test_check_compile_checks_the_triton_allowlist(capsys):
    from grader.cli import main
    assert main(["check-compile", str(TRITON / "sdpa_ops.py")]) == 16
    assert "sdpa_ops.py:12: `torch.ops`" in capsys.readouterr().out
    assert main(["check-compile", str(REPO / "reference" / "fused.triton.py"), "--only", "triton"]) == 0


def test_reading_tensor_values_into_python_is_torch_work_in_a_triton_submission():
    """Attention in plain Python on the host (float(x) of every element, loops): no computing
    ATen operation, only value reads, which a Triton submission's audit counts, strictly."""
    import torch

    from grader.judge.integrity import ALLOWED_OPS, VALUE_READS, OpAudit, audit_flags
    audit = OpAudit(ALLOWED_OPS - VALUE_READS)
    audit.call(lambda q: torch.full((1,), float(q[0, 0]) * 2.0), torch.ones(2, 2))
    assert "aten._local_scalar_dense" in str(audit.flagged)
    assert [f.tier for f in audit_flags(audit.as_dict(), every_op_strict=True)] == ["strict"]
    lenient = OpAudit()                     # C++ and CUDA glue: as before
    lenient.call(lambda q: torch.full((1,), float(q[0, 0])), torch.ones(2, 2))
    assert lenient.flagged == {}


# The digest in the H100 Triton exports (tests/fixtures/ncu/README.md): reference/fused.triton.py
# as it was when they were made, at commit PROFILED_AT; comments edited since change the digest.
PROFILED_TRITON_DIGEST, PROFILED_AT = "45a67283e8da", "b358663924ebafbfe3a4b5d83258d634d1fac2a7"


def _profiled_is_todays_code(today: str) -> None:
    """The file the export was made from has today's code: only comment lines differ."""
    import subprocess
    from grader.build.parse import source_digest
    old = subprocess.run(["git", "show", f"{PROFILED_AT}:reference/fused.triton.py"], cwd=REPO,
                         capture_output=True, text=True)
    if old.returncode != 0:
        pytest.skip("no git history here: the profiled version of fused.triton.py cannot be read")
    code = lambda text: [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]  # noqa: E731
    assert source_digest(old.stdout) == PROFILED_TRITON_DIGEST
    assert code(old.stdout) == code(today), "reference/fused.triton.py's code changed: re-take the H100 exports"


def test_a_real_triton_export_reads_with_its_kernels_and_provenance():
    """Nsight Compute on the H100 (tests/fixtures/ncu/README.md): the Triton kernels keep their
    function names, both caches read, and the digest is the Triton reference's."""
    from grader.evidence.exports import provenance
    from grader.analysis.ncu import read_files
    fixtures = REPO / "tests" / "fixtures" / "ncu"
    cold = read_files([fixtures / "triton_h100_details.csv", fixtures / "triton_h100_raw.csv"])
    warm = read_files([fixtures / "triton_h100_warm_details.csv", fixtures / "triton_h100_warm_raw.csv"])
    names = {(p.nvtx.rsplit("_S", 1)[0], p.kernel) for p in cold}
    assert names == {("student", "_attention"), ("fused", "_attention"), ("naive", "_scores"),
                     ("naive", "_softmax"), ("naive", "_pv")}
    assert {p.cache for p in cold} == {"cold"} and {p.cache for p in warm} == {"warm"}
    assert all(p.duration_us and p.duration_us > 0 for p in cold + warm)
    ref = parse(REPO / "reference" / "fused.triton.py").sources["triton"]
    assert {p.source for p in cold if p.nvtx.startswith("student")} == {PROFILED_TRITON_DIGEST}
    _profiled_is_todays_code(ref.text)
    # a borrowed export of today's reference (make profile records today's digest) earns nothing
    records = [{**p.to_json(), "profile": "after", "source": ref.digest if p.source else ""} for p in cold]
    bad, problems = provenance({"triton": parse(TRITON / "missing_scale.py").sources["triton"].text}, records)
    assert bad == {"after"} and "fused.triton.py" in problems[0]     # the course's own kernel: earns nothing


IDIOMS = """from __future__ import annotations
import math
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

CONFIGS = [triton.Config({"BLOCK": b}, num_warps=4) for b in (32, 64)]


def prune(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] <= 64]


@triton.autotune(configs=CONFIGS, key=["S"], prune_configs_by={"early_config_prune": prune})
@triton.jit
def _k(Out, S, BLOCK: tl.constexpr):
    '''Docstring
    @ with a line like this
    '''
    r = tl.arange(0, BLOCK)
    x = tl.load(Out + r, mask=r < S, other=0.0)
    y = tl.extra.cuda.libdevice.exp2(x) + libdevice.exp(x) + tl.math.exp2(x)
    tl.store(Out + r, y.to(Out.dtype.element_ty), mask=r < S)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    '''The host side.'''
    B, H, S, D = q.shape
    assert q.device.type == "cuda" or q.get_device() == -1
    out = torch.empty_like(q).to(q.dtype).float()
    lo = torch.finfo(q.dtype).min
    sizes = []
    sizes.append(S)
    _k[(1,)](out, S)
    return out


if __name__ == "__main__":
    print("self test")
"""


def test_idioms_of_the_tutorials_and_of_honest_students_are_allowed():
    """False positives a review found in the first allowlist (each made an honest kernel
    cheat_suspected): type hints, __future__, libdevice, Out.dtype.element_ty, .to/.float, finfo,
    device.type, list.append, Config.kwargs in a prune function, `if __name__`, an `@` line in a
    docstring."""
    assert audit(IDIOMS) == []


def test_a_source_too_deep_to_audit_is_refused_not_a_crash():
    from grader.judge.judge import triton_problem
    deep = HEAD + "def attention(q, k, v):\n    x = " + "+".join(["1"] * 600) + "\n    return q\n"
    assert [f.code for f in audit(deep)] == ["triton_allowlist"]       # Python parses it; the audit cannot
    deeper = deep.replace("+".join(["1"] * 600), "+".join(["1"] * 5000))
    src = parse_python('_TRITON_SRC = r"""\n' + deeper + '"""\n', REPO / "deep.py", "deep").sources["triton"]
    assert "cannot be compiled" in triton_problem(src)                  # Python cannot: a compile_error


@needs_triton
def test_a_triton_draft_beside_a_graded_cpp_kernel_is_not_this_grades(cfg, tmp_path):
    """The Triton source is audited when it is the one graded; a half-written draft beside a
    C++ kernel graded on the CPU never runs and flags nothing."""
    text = (SUBMISSIONS / "correct" / "scalar_loop.py").read_text()
    sub = tmp_path / "both.py"
    sub.write_text(text + '\n_TRITON_SRC = r"""\nimport os\ndef attention(q, k, v):\n    return q\n"""\n')
    result = grade(sub, cfg, backend="cpu", bench=False)
    assert result.verdict == "ok" and not [f for f in result.flags if f["code"].startswith(("triton", "torch_"))]
    assert grade(sub, cfg, backend="triton", bench=False).verdict == "cheat_suspected"
