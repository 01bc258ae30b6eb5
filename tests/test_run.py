"""grader/run.py end to end: every known-good and known-bad submission gets its verdict.

Each case names the verdict and a phrase the message (or compile log) must contain,
so a grader that gives the right verdict for the wrong reason fails too.
"""
import pytest

from conftest import REPO, SUBMISSIONS, TEMPLATE_DIR

CASES = [
    # (fixture, verdict, phrase in message)
    ("pristine/attention.py", "not_implemented", "not implemented yet"),        # the template as shipped
    ("correct/scalar_loop.py", "ok", "correct on every config"),
    ("wrong/wrong_scaling.py", "wrong_answer", "max_err"),
    ("wrong/partial_tile_ignored.py", "wrong_answer", "config 2"),
    ("wrong/mutates_inputs.py", "wrong_answer", "modified its input q"),
    ("wrong/nan_output.py", "wrong_answer", "NaN/Inf"),
    ("wrong/uninitialised_read.py", "wrong_answer", "the kernel reads memory it never wrote"),
    ("wrong/state_between_heads.py", "wrong_answer", "carries state from one (batch, head) to the next"),
    ("wrong/batch_stride.py", "wrong_answer", "a batch/head offset (stride)"),
    ("wrong/tf32_products.py", "wrong_answer", "the rounding of a TF32 or fp16 (10-bit mantissa) computation"),
    # must-fail decoys (issue 32, item 4): each fails with its own diagnosis
    ("decoy/zeros.py", "wrong_answer", "an output of all zeros"),
    ("decoy/mean_of_v.py", "wrong_answer", "uniform weights"),
    ("decoy/wrong_axis.py", "wrong_answer", "a softmax over the wrong axis"),
    ("wrong/returns_input.py", "wrong_answer", "shares memory with input q"),
    ("wrong/wrong_shape.py", "wrong_answer", "shape"),
    ("crash/raises_error.py", "runtime_error", "only supports S < 200"),
    ("crash/segfault.py", "runtime_error", "SIGSEGV"),
    ("crash/infinite_loop.py", "timeout", "took longer than the"),
    ("invalid/compile_error.py", "compile_error", "did not compile"),
    ("invalid/wrong_signature.py", "compile_error", "did not compile"),
    ("invalid/no_source.py", "invalid_submission", "no _CPP_SRC or _CUDA_SRC"),
    ("invalid/syntax_error.py", "invalid_submission", "syntax error"),
    ("invalid/computed_source.py", "invalid_submission", "string literal"),
]


def _path(name):
    return TEMPLATE_DIR / name.split("/", 1)[1] if name.startswith("pristine/") else SUBMISSIONS / name


@pytest.mark.parametrize("name,verdict,phrase", CASES, ids=[c[0] for c in CASES])
def test_verdict(grade_cpu, name, verdict, phrase):
    result = grade_cpu(_path(name))
    assert result.verdict == verdict, result.message
    assert phrase in result.message


def test_partial_tile_passes_the_multiple_of_32_configs(grade_cpu):
    result = grade_cpu(SUBMISSIONS / "wrong" / "partial_tile_ignored.py")
    passed = {c.name: c.passed for c in result.checks}
    assert passed == {"config 1": True, "config 2": False, "config 3": True, "config 4": True}
    bad = next(c for c in result.checks if not c.passed)
    assert bad.mismatches and bad.mismatches[0].index[2] >= 320   # rows past the last full tile


def test_every_config_reports_max_err_when_wrong(grade_cpu):
    result = grade_cpu(SUBMISSIONS / "wrong" / "wrong_scaling.py")
    assert len(result.checks) == len(result.config["configs"]) == 4
    assert all(c.max_err is not None and c.max_err >= 1e-3 and not c.passed for c in result.checks)
    assert all(c.mismatches for c in result.checks)


def test_compile_error_log_points_at_the_py_file(grade_cpu):
    result = grade_cpu(SUBMISSIONS / "invalid" / "compile_error.py")
    assert "compile_error.py:10:" in result.compile.log


def test_segfault_keeps_what_was_learnt_before_the_crash(grade_cpu):
    result = grade_cpu(SUBMISSIONS / "invalid" / "compile_error.py")
    assert result.compile is not None and not result.compile.ok


def test_ok_submission_is_benchmarked_against_sdpa_and_references(grade_cpu, cfg):
    result = grade_cpu(SUBMISSIONS / "correct" / "scalar_loop.py", bench=True)
    assert result.verdict == "ok", result.message
    assert [b.S for b in result.bench] == [s.S for s in cfg.bench_shapes]
    for row in result.bench:
        assert row.student_ms > 0 and row.sdpa_ms > 0 and row.naive_ms > 0 and row.fused_ms > 0
        # SDPA's time, or 1.25x SDPA in the judge's own process when it ran slower beside the kernel
        capped = (row.judge_clock or {}).get("sdpa_capped_ms")
        if (row.interval or {}).get("adjusted"):     # time the judge's clock charged back: more, never less
            assert row.slowdown >= row.student_ms / (capped or row.sdpa_ms) * (1 - 1e-6)
        else:
            assert row.slowdown == pytest.approx(row.student_ms / (capped or row.sdpa_ms))
        assert capped is None or capped < row.sdpa_ms
        assert row.judge_clock["harness_ms"] > 0 and row.judge_clock["sdpa_ms"] > 0
        assert row.recheck_max_err < 1e-3
        assert row.timings["student"].reps >= cfg.min_reps
    assert result.timing["method"] == "cpu-perf_counter"
    assert result.system["threads"] >= 1 and result.system["torch"]


def test_wrong_answers_are_not_benchmarked(grade_cpu):
    assert grade_cpu(SUBMISSIONS / "wrong" / "wrong_scaling.py").bench == ()


def test_grade_picks_up_profiles_and_notes_bad_ones(tmp_path, cfg):
    import shutil

    from grader.run import grade
    from conftest import TESTS
    folder = tmp_path / "student42"
    (folder / "profiles").mkdir(parents=True)
    shutil.copy(SUBMISSIONS / "invalid" / "no_source.py", folder / "attention.py")   # parse-level verdict: fast
    shutil.copy(TESTS / "fixtures" / "ncu" / "raw_base.csv", folder / "profiles" / "after_raw.csv")
    (folder / "profiles" / "broken.csv").write_text("not,a,profile\n")
    result = grade(folder, cfg, backend="cpu")
    assert result.verdict == "invalid_submission"           # the profiles do not change the verdict
    assert result.profiles == ()                            # ... and an invalid file gets no evidence read
    shutil.copy(SUBMISSIONS / "invalid" / "compile_error.py", folder / "attention.py")
    result = grade(folder, cfg, backend="cpu")
    kernels = {p["kernel"].split("(")[0] for p in result.profiles}
    assert "qk_kernel" in kernels and all(p["profile"] == "after" for p in result.profiles)
    assert len(result.profile_notes) == 1 and "broken.csv" in result.profile_notes[0]


def test_a_child_started_ahead_waits_for_its_gate(cfg, tmp_path):
    """Batch mode starts a GPU child before its device is free (RunOptions.gate): the child
    loads Python, torch and the binding module, then runs nothing of the student's until
    the gate returns (with the environment that picks its GPU: the GPU batch test)."""
    import time

    from grader.run import RunOptions, grade
    calls = []

    def gate():
        time.sleep(1.0)          # a device is busy for a while
        calls.append(time.monotonic())
        return {"OMP_NUM_THREADS": "1"}
    result = grade(SUBMISSIONS / "correct" / "scalar_loop.py", cfg, backend="cpu", bench=False,
                   options=RunOptions(workdir=tmp_path / "w", gate=gate))
    assert result.verdict == "ok", result.message
    assert len(calls) == 1
    assert result.stage_seconds["ready"] >= 1.0            # the wait is recorded as such ...
    assert result.stage_seconds["check"] < 30              # ... and not charged to a timed stage
    assert result.system["threads"] >= 1


def _template_with_cpu_kernel(tmp_path):
    """The handout's flow: the student writes _CPP_SRC in the template and keeps the CUDA stub."""
    text = (TEMPLATE_DIR / "attention.py").read_text()
    stub = 'TORCH_CHECK(false, "attention: not implemented yet (write your kernel in _CPP_SRC)");\n    return torch::empty_like(q);'
    assert stub in text
    path = tmp_path / "attention.py"
    path.write_text(text.replace(stub, "return at::zeros_like(q);  // my kernel (wrong, but written)"))
    return path


def test_auto_picks_the_implemented_source_not_the_templates_stub(tmp_path, monkeypatch):
    """Issue 32, item 7: on a GPU machine, `auto` grades the CPU kernel the student wrote when
    _CUDA_SRC is still the template's stub, and says which source it graded and why."""
    from grader import run
    from grader.build.parse import parse
    monkeypatch.setattr(run, "gpu_present", lambda: True)       # a GPU machine, as seen by `auto`
    backend, why = run.choose_backend(parse(_template_with_cpu_kernel(tmp_path)), "auto")
    assert backend == "cpu" and "_CUDA_SRC is still the template's stub" in why and "--backend cuda" in why
    both_stubs = parse(TEMPLATE_DIR / "attention.py")
    assert run.choose_backend(both_stubs, "auto")[0] == "cuda"          # nothing written: as before
    assert run.choose_backend(parse(_template_with_cpu_kernel(tmp_path)), "cuda")[0] == "cuda"   # asked for


def test_the_pristine_template_is_the_committed_one():
    import subprocess
    from conftest import REPO
    for name in ("attention.py", "report.md"):
        shipped = subprocess.run(["git", "show", f"HEAD:student_template/{name}"], cwd=REPO,
                                 capture_output=True, text=True)
        if shipped.returncode != 0:
            pytest.skip("not a git checkout")
        assert (REPO / "grader" / "pristine" / name).read_text() == shipped.stdout, name


def test_a_kernel_right_only_at_the_public_sizes_fails_on_the_benchmark_sizes(grade_cpu, cfg):
    """Decoy: passes every public config, wrong (zeros) at every other S: every timed output is
    checked, so the benchmark sizes catch it (and hidden configs would)."""
    result = grade_cpu(SUBMISSIONS / "decoy" / "public_sizes_only.py", bench=True)
    assert all(c.passed for c in result.checks)
    assert result.verdict == "wrong_answer" and "wrong on the benchmark inputs" in result.message, result.message


def test_numerics_names_the_precision_a_kernel_computed_in(grade_cpu):
    """Issue 32, item 5: fp32 for a correct fp32 kernel; TF32 for one that rounds its products'
    inputs to 10 bits, passing the ordinary configs and failing the large-score one."""
    assert grade_cpu(SUBMISSIONS / "correct" / "scalar_loop.py").numerics["precision"] == "fp32"
    tf32 = grade_cpu(SUBMISSIONS / "wrong" / "tf32_products.py")
    assert [c.passed for c in tf32.checks] == [True, True, True, False]
    assert tf32.numerics["precision"].startswith("TF32 or fp16")
    assert "TF32 is allowed, but it cannot pass config 4" in tf32.numerics["lesson"]      # B16: allowed, not outside
    assert grade_cpu(SUBMISSIONS / "wrong" / "missing_scale.py").numerics["precision"] == ""    # a bug
