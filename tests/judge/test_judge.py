"""The judge (grader/run.py) and its side of the trust boundary, on the CPU path: what the
child sends is only data, failures keep what was learnt, hidden configs stay hidden."""
import json
import os
from pathlib import Path

import pytest

from conftest import REPO, SUBMISSIONS, TESTS
from grader.isolation.channel import ChannelError, Endpoint
from grader.judge.judge import Judge
from grader.run import finish, grade, public_config


def test_configs_before_a_crash_keep_their_results_and_the_message_its_last_words(cfg):
    """A SIGABRT on config 3 after two passing configs: both keep their results (and so
    their points), the crashed one is a failed row, the message has the assert's text, and
    config 4 still runs (in a fresh child) and counts."""
    result = grade(SUBMISSIONS / "crash" / "abort_on_d128.py", cfg, backend="cpu", bench=False)
    assert result.verdict == "runtime_error", result.message
    assert "SIGABRT" in result.message and "keeps one row of 64 dims" in result.message, result.message
    assert [c.passed for c in result.checks] == [True, True, False, True]
    assert "crashed" in result.checks[2].message
    from grader.core.config import load_rubric
    from grader.score.gradebook import score_items
    rubric, _ = load_rubric(cfg.source)
    items = {i.name.split(" (")[0]: i.score for i in score_items(result.to_json(), rubric)}
    assert items["correctness: config 1"] == 10 and items["correctness: config 2"] == 15
    assert items["correctness: config 3"] == 0 and items["correctness: config 4"] == 10


def test_unwritten_output_is_counted_exactly_on_the_cpu(cfg):
    """The CPU path poisons the kernel's allocations (0xFF: a NaN no arithmetic makes), so
    the rows a kernel never wrote are counted exactly, not as stale values."""
    result = grade(SUBMISSIONS / "wrong" / "tail_never_written.py", cfg, backend="cpu", bench=False)
    bad = [c for c in result.checks if not c.passed]
    assert [c.name for c in bad] == ["config 2"], result.message
    assert "4992 of 127872 output elements were never written" in bad[0].message, bad[0].message
    assert "rows s=320..332" in bad[0].message and "b=0, h=0" in bad[0].message


def test_the_child_never_gets_the_seed_or_the_hidden_configs(cfg):
    from dataclasses import replace
    from grader.core.config import Shape
    secret = replace(cfg, seed=987654321, seed_is_secret=True, hidden_configs=(Shape(1, 2, 173, 64),))
    shown = public_config(secret).to_json()
    assert shown["seed"] == 0 and shown["hidden_configs"] == [] and not shown["seed_is_secret"]
    assert "987654321" not in json.dumps(shown) and "173" not in json.dumps(shown)


def test_hidden_configs_run_last_and_reveal_nothing(cfg, tmp_path):
    """A kernel that prints and raises with the shape of anything it has not seen: the
    hidden config fails with its text withheld, and its print is not in the public output."""
    from dataclasses import replace
    from grader.core.config import Shape
    from grader.run import Judge, RunOptions
    from grader.build.parse import parse
    import sys
    sys.path.insert(0, str(REPO / "tools"))
    import redteam
    text = (redteam.ATTACKS / "hidden_shape_leak.py").read_text().replace("@@CORRECT@@", redteam._correct_source())
    (tmp_path / "leak.py").write_text(text)
    secret = replace(cfg, seed=424242, seed_is_secret=True, hidden_configs=(Shape(1, 2, 173, 64),))
    sub = parse(tmp_path / "leak.py")
    judge = Judge(sub, secret, "cpu", "test", RunOptions(references=False), bench=True)
    assert judge.compile()
    judge.run_device()
    result = finish(judge)
    assert result.verdict == "runtime_error" and result.message.startswith("hidden 1:"), result.message
    hidden = [c for c in result.checks if c.hidden]
    assert hidden and hidden[0].config is None and hidden[0].max_err is None and "withheld" in hidden[0].message
    assert "173" not in judge.output_public and "HIDDEN SHAPE" in judge.output_private
    assert [c.name for c in result.checks if not c.hidden] == ["config 1", "config 2", "config 3", "config 4"]
    assert result.bench, "the benchmark ran before the hidden configs"
    assert "424242" not in json.dumps(result.to_json())
    # nothing measured on the hidden work in what the student sees: its time, its bytes
    assert "hidden" not in result.stage_seconds and judge.private["stage_seconds_hidden"] > 0
    assert result.isolation["output_bytes"] == len(judge.output_public.encode())
    assert judge.private["output_bytes_hidden"] > 0


def test_the_hidden_calls_audit_is_the_instructors(cfg):
    """S PyTorch operations dispatched on a hidden config put the hidden S in the student's
    flags ("aten.neg x173"); a strict one reaches the verdict as a flag without counts."""
    from dataclasses import replace
    from grader.core.config import Shape
    judge = Judge.__new__(Judge)
    judge.backend = "cpu"
    judge.state, judge.private = {"audit": {"calls": 9, "flagged": {"aten.neg": 173, "aten.bmm": 2}},
                                  "judge_flags": []}, {}
    judge._withhold_hidden_audit({"calls": 5, "flagged": {"aten.bmm": 2}})
    assert judge.state["audit"] == {"calls": 5, "flagged": {"aten.bmm": 2}}
    assert judge.private["audit_hidden"] == {"aten.neg": 173} and judge.state["judge_flags"] == []
    judge.state["audit"] = {"calls": 9, "flagged": {"aten.neg": 173, "aten.bmm": 3}}
    judge._withhold_hidden_audit({"calls": 5, "flagged": {"aten.bmm": 2}})
    [flag] = judge.state["judge_flags"]
    assert flag["code"] == "dispatched_compute" and flag["tier"] == "strict" and "173" not in flag["detail"]
    # a Triton submission's torch is for allocation and shapes only: any operation added on a
    # hidden config is strict (an elementwise aten.neg too)
    judge.backend, judge.state["judge_flags"] = "triton", []
    judge.state["audit"] = {"calls": 9, "flagged": {"aten.neg": 173, "aten.bmm": 2}}
    judge._withhold_hidden_audit({"calls": 5, "flagged": {"aten.bmm": 2}})
    assert [f["tier"] for f in judge.state["judge_flags"]] == ["strict"]


# ---- the judge's clock (CPU) -----------------------------------------------------------------

def test_a_round_that_reports_more_time_than_it_took_is_implausible():
    from grader.judge.bench import ImplausibleTimings
    from grader.judge.judge import round_samples
    assert round_samples({"student": 1.0, "sdpa": 2.0}, ["student", "sdpa"], 3.5, 0) == {"student": 1.0, "sdpa": 2.0}
    for bad, match in (({"student": 1.0, "sdpa": 2.6}, "more than the 3.500 ms"), ({"student": 1.0}, "every kernel"),
                       ({"student": -1.0, "sdpa": 1.0}, "reported -1.0"), ({"student": True, "sdpa": 1.0}, "True"),
                       ({"student": float("nan"), "sdpa": 1.0}, "nan")):
        with pytest.raises(ImplausibleTimings, match=match):
            round_samples(bad, ["student", "sdpa"], 3.5, 0)
    # a call of its own (every CPU call is a request): SDPA's, handed time the kernel hid, no longer fits
    assert round_samples({"sdpa": 0.5}, ["sdpa"], 0.9, 3) == {"sdpa": 0.5}
    with pytest.raises(ImplausibleTimings, match="call of sdpa took 20.500 ms by the process's timer, more than "
                                                 "the 0.900 ms its request took"):
        round_samples({"sdpa": 20.5}, ["sdpa"], 0.9, 3)


def test_time_missing_from_the_reported_calls_is_flagged_and_a_slowed_baseline_capped():
    from grader.judge.bench import summarize
    from grader.core.config import Shape
    from grader.judge.judge import cap_baseline, clock_flags
    shape = Shape(1, 8, 1024, 64)
    timings = {"student": summarize([10.0] * 5), "sdpa": summarize([20.0] * 5)}
    honest = {"unaccounted_ms": 9.2, "harness_ms": 9.1, "sdpa_ms": 19.0}
    assert clock_flags(shape, timings, honest) == []
    review = clock_flags(shape, timings, {**honest, "unaccounted_ms": 20.0})
    assert [(f["code"], f["tier"]) for f in review] == [("forged_timings", "review")]
    strict = clock_flags(shape, timings, {**honest, "unaccounted_ms": 180.0})
    assert [(f["code"], f["tier"]) for f in strict] == [("forged_timings", "strict")]
    slowed = clock_flags(shape, timings, {**honest, "sdpa_ms": 2.0})
    assert [(f["code"], f["tier"]) for f in slowed] == [("baseline_slowed", "review")]
    assert "at most 1.25x the judge's SDPA" in slowed[0]["detail"] and "busy" not in slowed[0]["detail"]
    # on a machine other processes kept busy the cap is off and the flags say why it may be load
    # (a fresh walkthrough: an honest naive kernel was told it "slowed the baseline", and that
    # a cap applied that was not)
    busy = clock_flags(shape, timings, {**honest, "sdpa_ms": 2.0, "unaccounted_ms": 20.0}, busy=True)
    assert [f["code"] for f in busy] == ["forged_timings", "baseline_slowed"]
    assert all("the machine was busy" in f["detail"] for f in busy)
    assert "not capped" in busy[1]["detail"] and "at most 1.25x" not in busy[1]["detail"]
    row = {"student_ms": 10.0, "sdpa_ms": 20.0, "slowdown": 0.5, "judge_clock": {**honest, "sdpa_ms": 2.0}}
    capped = cap_baseline(row)
    assert capped["slowdown"] == pytest.approx(4.0) and capped["judge_clock"]["sdpa_capped_ms"] == pytest.approx(2.5)
    assert cap_baseline({**row, "judge_clock": honest}) == {**row, "judge_clock": honest}
    # time left out of the reported calls beyond the review line (1.5 x 9.1 + 1.5 = 15.15 ms) is the kernel's
    hidden = cap_baseline({**row, "judge_clock": {**honest, "unaccounted_ms": 40.0}})
    assert hidden["judge_clock"]["charged_ms"] == pytest.approx(24.85)
    assert hidden["slowdown"] == pytest.approx((10.0 + 24.85) / 20.0)


def _pair():
    """(judge side, child side) of a one-way pipe: the child writes, the judge reads."""
    r, w = os.pipe()
    judge = Endpoint(r, os.open(os.devnull, os.O_WRONLY), nonblocking=True)
    child = Endpoint(os.open(os.devnull, os.O_RDONLY), w)
    return judge, child, w


@pytest.mark.parametrize("raw, error", [
    (b"\xff\xff\xff\x7f", "header of"),                        # a 2 GiB header
    (b"\x05\x00\x00\x00[1,2]", "not a JSON object"),
    (b"\x04\x00\x00\x00nope", "not JSON"),
    (b"\x0e\x00\x00\x00{\"nbytes\": -1}", "bad payload size"),
])
def test_a_malformed_frame_is_a_protocol_error(raw, error):
    import time
    judge, _, w = _pair()
    os.write(w, raw)
    with pytest.raises(ChannelError, match=error):
        judge.recv(deadline=time.monotonic() + 5)


@pytest.mark.parametrize("depth", [33, 900, 50_000])
def test_a_frame_nested_too_deep_is_a_protocol_error_not_a_crash_of_the_judge(depth):
    """50 000 levels made json.loads raise RecursionError in the judge (a grader_error row,
    the batch's exit 70); 900 parse, and would sink whatever walks the object next."""
    import struct
    import threading
    import time
    judge, _, w = _pair()
    body = b'{"a": ' * depth + b"1" + b"}" * depth
    threading.Thread(target=lambda: os.write(w, struct.pack("<I", len(body)) + body), daemon=True).start()
    with pytest.raises(ChannelError, match="nested more than 32"):
        judge.recv(deadline=time.monotonic() + 5)


def test_the_nesting_scan_is_linear_in_the_frame():
    """A frame of unterminated escapes ('"\\' pairs) made a string-matching pattern backtrack
    for minutes (1 MiB: about 50 min, holding the GIL of a whole batch)."""
    import struct
    import threading
    import time
    judge, _, w = _pair()
    body = b'"\\' * (1 << 19)
    threading.Thread(target=lambda: os.write(w, struct.pack("<I", len(body)) + body), daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(ChannelError, match="not JSON"):
        judge.recv(deadline=time.monotonic() + 30)
    assert time.monotonic() - t0 < 5


def test_brackets_inside_strings_do_not_count_as_nesting():
    import time
    judge, child, _ = _pair()
    child.send({"text": "[[[{{{" * 100 + '\\"]'}, None)
    header, _ = judge.recv(deadline=time.monotonic() + 5)
    assert header["text"].startswith("[[[{{{")


def test_a_payload_larger_than_asked_for_is_refused_before_it_is_read():
    """Sizes are capped before anything is read: a child cannot make the judge allocate or
    wait for a payload it did not expect."""
    import time
    judge, child, _ = _pair()
    child.send({"ok": True}, b"x" * 100)
    with pytest.raises(ChannelError, match="at most 10"):
        judge.recv(deadline=time.monotonic() + 5, max_payload=10)


def test_a_child_that_stalls_mid_frame_times_out():
    import time
    from grader.isolation.channel import ChannelTimeout
    judge, _, w = _pair()
    os.write(w, b"\x40\x00\x00\x00{")                       # 64 bytes announced, 1 sent
    t0 = time.monotonic()
    with pytest.raises(ChannelTimeout):
        judge.recv(deadline=time.monotonic() + 0.5)
    assert time.monotonic() - t0 < 3


def test_a_crash_on_the_last_public_config_still_lets_the_hidden_ones_run(cfg):
    """Where a crash happens changes nothing else: after a SIGABRT on the last public config
    (D = 128) the hidden config (D = 64) runs in a fresh child and passes, privately."""
    from dataclasses import replace
    from grader.core.config import Shape
    from grader.build.parse import parse
    from grader.run import Judge, RunOptions
    last = replace(cfg, configs=(cfg.configs[0], Shape(1, 2, 64, 128)), seed=31337, seed_is_secret=True,
                   hidden_configs=(Shape(1, 2, 96, 64),))
    judge = Judge(parse(SUBMISSIONS / "crash" / "abort_on_d128.py"), last, "cpu", "test",
                  RunOptions(references=False), bench=False)
    assert judge.compile()
    judge.run_device()
    result = finish(judge)
    assert result.verdict == "runtime_error" and "SIGABRT" in result.message, result.message
    assert [(c.name, c.passed) for c in result.checks] == [("config 1", True), ("config 2", False), ("hidden 1", True)]
    assert judge.restarts == 1 and judge.private["hidden_checks"][0]["max_err"] < 1e-3


def test_a_worker_that_cannot_start_is_a_grader_error_with_its_reason(cfg, monkeypatch):
    """A failure before the build (the worker's start) keeps its own message: the compile
    phase's error handling must not trip over state the build had not made yet."""
    from grader.judge.child import ChildFailed
    from grader.build.parse import parse
    from grader.run import Judge, RunOptions

    def no_start(self, gpu_nodes=()):
        raise ChildFailed("grader_error", "the grader could not start its worker: no bwrap today")
    monkeypatch.setattr(Judge, "_spawn", no_start)
    judge = Judge(parse(SUBMISSIONS / "correct" / "scalar_loop.py"), cfg, "cpu", "test",
                  RunOptions(references=False), bench=False)
    assert not judge.compile()
    assert judge.verdict == "grader_error" and "no bwrap today" in judge.message, judge.message


# what the GPU image's GCC (static parts of libstdc++: iostream's file buffers) links into
# every library, the do-nothing baseline included (measured there: tools/gpu_session.sh's
# `system` phase prints the whole list, 143 names on 2026-11-24; `write`, `read` and `close`
# among them cost protocol_garbage its raw_io warning in the H200's red team)
GPU_IMAGE_TOOLCHAIN = frozenset({"open", "open64", "fopen64", "fdopen", "secure_getenv", "write", "close", "read"})


@pytest.fixture
def gpu_image_toolchain(monkeypatch):
    """The library audit's baseline as on the GPU image: GPU_IMAGE_TOOLCHAIN's calls excused."""
    import grader.judge.linkaudit as la
    real = la.header_baseline
    monkeypatch.setattr(la, "header_baseline", lambda *a, **k: real(*a, **k) | GPU_IMAGE_TOOLCHAIN)


def test_a_call_the_toolchain_links_everywhere_is_still_the_kernels_own(cfg, gpu_image_toolchain, tmp_path):
    """On a toolchain that links `open` into every library (so into the baseline library,
    whose calls are excused), a kernel's own `open` is still cheat_suspected: its object file
    names it (seen on the H200: the escapes were graded runtime_error, unflagged)."""
    src = (SUBMISSIONS / "escape" / "read_other.py").read_text().replace("@@TARGET@@", str(tmp_path / "x"))
    (tmp_path / "read_other.py").write_text(src)
    result = grade(tmp_path / "read_other.py", cfg, backend="cpu", bench=False)
    assert result.verdict == "cheat_suspected", result.message
    flags = {f["code"]: f["detail"] for f in result.flags if f["tier"] == "strict"}
    assert "file_access" in flags and "compiled code" in flags["file_access"] and ": open" in flags["file_access"], flags


# three ways around an object audit, found by a review (each opens a file through libc's
# `open` while the GPU image's baseline excuses `open` in the library)
_OPEN_BODY = """
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    int fd = %s("/etc/hostname", 0);
    TORCH_CHECK(fd < 0, "opened a file");
    return q;
}
"""
_HEAD = '#include <torch/extension.h>\n#define CAT(a, b) a##b\n'      # names the source scan cannot see
HIDDEN_OPENS = {
    # a version alias: the object's undefined name is open@GLIBC_2.2.5
    "symver": _HEAD + 'extern "C" int real_open(const char*, int, ...);\n'
                      '__asm__(".symver real_open, " "op" "en@GLIBC_2.2.5");\n' + _OPEN_BODY % "real_open",
    # the kernel defines `open` itself: its calls still reach libc's (the loader binds them first)
    "defined": _HEAD + 'extern "C" int CAT(op, en)(const char*, int, ...) { return -1; }\n'
               + _OPEN_BODY % "CAT(op, en)",
    # 66 000 sections: the object uses extended section numbering (e_shnum 0)
    "many_sections": _HEAD + 'extern "C" int CAT(op, en)(const char*, int, ...);\n'
                     + r'''__asm__(".altmacro\n.macro pad n\n.section .rodata.pad\\n,\"a\"\n.byte 0\n.endm\n'''
                     + r'''.set i,0\n.rept 66000\npad %i\n.set i,i+1\n.endr\n.text");''' + "\n"
                     + _OPEN_BODY % "CAT(op, en)",
}


@pytest.mark.parametrize("how", sorted(HIDDEN_OPENS))
def test_an_open_hidden_from_the_object_audit_is_still_flagged(cfg, gpu_image_toolchain, tmp_path, how):
    (tmp_path / "attention.py").write_text(f'_CPP_SRC = r"""\n{HIDDEN_OPENS[how]}\n"""\n')
    result = grade(tmp_path / "attention.py", cfg, backend="cpu", bench=False)
    assert result.verdict == "cheat_suspected", (result.verdict, result.message, result.compile.log[-500:])
    strict = {f["code"] for f in result.flags if f["tier"] == "strict"}
    assert strict & {"file_access", "unauditable"}, result.flags


_WRITE_DEFINED = _HEAD + """extern "C" long CAT(wri, te)(int, const void*, unsigned long) { return 0; }
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    CAT(wri, te)(2, "x", 1);
    return q;
}
"""


@pytest.mark.parametrize("how", ["called", "defined"])
def test_a_warning_the_toolchain_excuses_is_still_the_kernels_own(cfg, gpu_image_toolchain, tmp_path, how):
    """The same for a warning: a kernel's own `write` to the judge's pipes is `raw_io` on
    every toolchain, the GPU image's too (there its library's `write` is the baseline's),
    and so is a `write` the kernel defines itself (its calls still reach libc's)."""
    src = (TESTS / "redteam" / "protocol_garbage.py").read_text() if how == "called" \
        else f'_CPP_SRC = r"""\n{_WRITE_DEFINED}\n"""\n'
    (tmp_path / "protocol_garbage.py").write_text(src)
    result = grade(tmp_path / "protocol_garbage.py", cfg, backend="cpu", bench=False)
    raw = [f["detail"] for f in result.flags if f["code"] == "raw_io"]
    assert raw and "compiled code" in raw[0] and "write" in raw[0], result.flags


def test_a_correct_kernel_is_not_flagged_by_its_object_files(cfg):
    """The object audit adds nothing for a kernel that calls nothing it should not: what the
    headers' inline code calls is in the baseline objects too."""
    result = grade(SUBMISSIONS / "correct" / "scalar_loop.py", cfg, backend="cpu", bench=False)
    assert result.verdict == "ok" and not [f for f in result.flags if f["tier"] == "strict"], \
        result.flags


def test_object_symbols_reads_a_relocatable_objects_calls(tmp_path):
    import shutil
    import subprocess
    from grader.judge.linkaudit import ElfError, object_symbols
    if not shutil.which("gcc"):
        pytest.skip("needs gcc")
    (tmp_path / "a.c").write_text("int open(const char*, int, ...);\nint mine(void) { return open(\"x\", 0); }\n")
    subprocess.run(["gcc", "-c", "-o", str(tmp_path / "a.o"), str(tmp_path / "a.c")], check=True)
    undefined, defined = object_symbols((tmp_path / "a.o").read_bytes())
    assert "open" in undefined and "mine" in defined and "mine" not in undefined
    for bad in (b"\x7fELF", (tmp_path / "a.o").read_bytes()[:80], b"\x7fELF\x02\x01" + b"\0" * 200):
        with pytest.raises(ElfError):
            object_symbols(bad)


# libc's other doors to the same calls (a second review: each linked and worked here, and
# was only an "unlisted" warning): a shell through wordexp, a file through a GLIBC_PRIVATE open
LIBC_BACK_DOORS = {
    "wordexp": ("process", '#include <wordexp.h>\nstatic int door() { wordexp_t w; int r = CAT(word, exp)'
                           '("$(id)", &w, 0); return r; }\n'),
    "open_nocancel": ("file_access", 'extern "C" int CAT(__open64, _nocancel)(const char*, int, ...);\n'
                                     'static int door() { return CAT(__open64, _nocancel)("/etc/hostname", 0); }\n'),
}


@pytest.mark.parametrize("how", sorted(LIBC_BACK_DOORS))
def test_libcs_back_doors_are_strict(cfg, tmp_path, how):
    code, text = LIBC_BACK_DOORS[how]
    src = (_HEAD + text + "torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {\n"
           "    TORCH_CHECK(door() < -100, \"door\");\n    return q;\n}\n")
    (tmp_path / "attention.py").write_text(f'_CPP_SRC = r"""\n{src}\n"""\n')
    result = grade(tmp_path / "attention.py", cfg, backend="cpu", bench=False)
    assert result.verdict == "cheat_suspected", (result.verdict, result.message, result.compile.log[-500:])
    assert code in {f["code"] for f in result.flags if f["tier"] == "strict"}, result.flags


def test_a_gpu_baseline_slowed_beside_the_kernel_is_capped_to_the_clean_one(cfg):
    """grader/judge/baseline.py: SDPA timed again in a clean process on the same GPU; SDPA beside the
    kernel counts for at most 1.10x that (the slowdown and its interval move), above 1.20x it is
    flagged; on a GPU found busy the cap is not applied; a failed measurement is said."""
    from grader.judge.baseline import GPU_SDPA_CAP
    import contextlib
    judge = Judge.__new__(Judge)
    judge.cfg, judge._device_env, judge.stage = cfg, {}, lambda *a: None
    judge.child = type("Idle", (), {"paused": staticmethod(contextlib.nullcontext), "deadline": 0.0})()
    judge._waited = 0.0
    judge._bench_kernels = ["sdpa", "naive", "fused"]
    S = cfg.bench_shapes[0].S

    class Measured:                    # what the clean process measured (its protocol: below, for real)
        def __init__(self, ms):
            self.ms, self.why = ms, ""

        def ready(self):
            return True

        def measure(self, uuid, sizes, env=None, beside=(), config=""):
            assert uuid == "GPU-x" and sizes == [{"shape": cfg.bench_shapes[0].as_dict(), "method": "events"}]
            # like with like: SDPA beside the references the child timed it with, the student's kernel apart
            assert list(beside) == ["naive", "fused"] and config == cfg.source
            return {str(S): self.ms}, ""

        def close(self):
            pass

    def fresh(ms, quality="clean"):
        judge._clean_process = Measured(ms)
        judge.state = {"timing": {"method_by_S": {S: "events"}}, "system": {"gpu_uuid": "GPU-x"},
                       "bench_quality": {"status": quality}, "judge_flags": []}
        return [{"S": S, "student_ms": 2.0, "sdpa_ms": 1.5, "slowdown": 2.0 / 1.5,
                 "interval": {"low": 1.3, "high": 1.36, "rounds": 50}}]
    rows = fresh(1.0)
    judge._clean_sdpa(rows)
    assert rows[0]["slowdown"] == 2.0 / GPU_SDPA_CAP and rows[0]["judge_clock"]["sdpa_capped_ms"] == GPU_SDPA_CAP
    assert rows[0]["interval"]["adjusted"] and rows[0]["interval"]["low"] < rows[0]["slowdown"] < rows[0]["interval"]["high"]
    assert [f["code"] for f in judge.state["judge_flags"]] == ["baseline_slowed"]
    assert judge.state["timing"]["clean_sdpa"]["sdpa_ms_by_S"] == {str(S): 1.0}
    assert judge.state["timing"]["clean_sdpa"]["beside"] == ["naive", "fused"]
    rows = fresh(1.0, "noisy")
    judge._clean_sdpa(rows)
    assert rows[0]["slowdown"] == 2.0 / 1.5 and [f["code"] for f in judge.state["judge_flags"]] == ["baseline_slowed"]
    # an honest baseline (within 1.10x of the clean one) is left as it is
    rows = fresh(1.45)
    judge._clean_sdpa(rows)
    assert rows[0]["slowdown"] == 2.0 / 1.5 and judge.state["judge_flags"] == []
    # the real process, no GPU here: it gets ready (torch imported), then its measurement fails, said
    rows = fresh(1.0)
    judge._clean_process = None
    judge._clean_sdpa(rows)
    assert rows[0]["slowdown"] == 2.0 / 1.5 and "failed" in judge.state["timing"]["clean_sdpa"]["error"], \
        judge.state["timing"]["clean_sdpa"]


def test_the_childs_processes_are_stopped_while_the_judge_measures():
    """A kernel can leave threads or processes spinning so that the judge's own figures (SDPA in
    its process, the harness's cost, the clean GPU SDPA) come out slower and loosen the cap:
    Child.paused stops every process of the tree (SIGSTOP) for the measurement, then continues it."""
    import subprocess
    import sys
    import time

    from grader.judge.child import Child
    spin = "import os, time\nif os.fork() == 0:\n    while True: pass\nwhile True: pass\n"
    proc = subprocess.Popen([sys.executable, "-c", spin], start_new_session=True)
    holder = type("Holder", (), {"proc": proc})()
    try:
        time.sleep(0.5)

        def states():
            from grader.isolation.sandbox import tree_members
            out = []
            for pid, _, _ in tree_members(proc.pid):
                with open(f"/proc/{pid}/stat") as f:
                    out.append(f.read().rsplit(")", 1)[1].split()[0])
            return out
        assert len(states()) == 2 and "T" not in states()
        with Child.paused(holder):
            time.sleep(0.1)
            assert states() == ["T", "T"]
        time.sleep(0.1)
        assert "T" not in states()
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()


class _HarnessChild:
    """A child that answers the GPU harness's requests as grader/judge/gpu.py's does (timings,
    per-round figures, a commitment to every timed output, the drawn outputs on `reveal`, the
    watched round): the judge's side of the CUDA benchmark, driven on a machine without a GPU
    (its own side runs on the GPU machine: tests/judge/test_gpu.py). `wrong`: the fraction of
    calls whose output is zeros; `rewrite`: every output committed as zeros, and the drawn ones
    sent back right (outputs rewritten once the checked calls are known)."""

    def __init__(self, wrong: float = 0.0, rewrite: bool = False):
        import os
        import random
        self.proc = type("P", (), {"pid": os.getpid()})()
        self.requests: list[dict] = []
        self.wrong, self.rewrite, self.rng = wrong, rewrite, random.Random(11)
        self.kept: tuple | None = None

    def _output(self, shape, key, slot, zeros=False):
        import torch
        import torch.nn.functional as F

        from grader.judge.gpu import counter_inputs
        out = F.scaled_dot_product_attention(*counter_inputs(shape, key, slot))
        return (torch.zeros_like(out) if zeros else out).contiguous().numpy().tobytes()

    def request(self, header, payload=None, timeout=60.0, max_payload=0, on_note=None):
        from grader.core.config import Shape
        from grader.judge.gpu import CALLS, ROUNDS, digest, event_slots
        self.requests.append(header)
        if header["op"] == "reveal":
            shape, key, outs = self.kept
            sent = [self._output(shape, key, s) if self.rewrite else outs[s] for s in header["slots"]]
            return {"returned": [True] * len(sent)}, b"".join(sent)
        assert header["op"] == "bench", header
        shape = Shape(**header["shape"])
        outs = {s: self._output(shape, header["key"], s, zeros=self.rewrite or self.rng.random() < self.wrong)
                for s in range(event_slots())}
        self.kept = (shape, header["key"], outs)
        commit = [[s, digest(o)] for s, o in outs.items()]
        rounds = ROUNDS - 1 - (1 if header.get("watch") is not None else 0)
        student, sdpa = [0.020 + 0.0001 * r for r in range(rounds)], [0.010 + 0.0001 * r for r in range(rounds)]
        beside = [n for n in header["kernels"] if n != "sdpa"]
        if beside:                  # SDPA interleaved with the references: slower than beside the student alone
            sdpa = [0.012 + 0.0001 * r for r in range(rounds)]

        def timing(v):
            import statistics
            v = sorted(v)
            return {"median_ms": statistics.median(v), "min_ms": v[0], "max_ms": v[-1], "iqr_ms": 0.001,
                    "reps": len(v) * CALLS}
        extra = {"rounds": {"student": student, "sdpa": sdpa}, "wall_probe_ms": 0.02, "sdpa_backend": "FLASH",
                 "l2_persisting_reset": True}
        own = "void fused_attention_kernel<64>(float const*, float const*, float const*, float*, int, float)"
        if header.get("watch") is not None:
            extra["watched"] = {"round": header["watch"], "error": None, "truncated": False,
                                "event_ms": [0.02] * CALLS,
                                "kernels": [{"name": own, "stream": 7, "us": 15.0} for _ in range(CALLS)]}
        reply = {"timings": {"student": timing(student), "sdpa": timing(sdpa),
                             **{n: timing([0.03] * rounds) for n in beside}}, "reps": rounds * CALLS,
                 "method": "events", "state_changes": [], "commit": commit, "extra": extra,
                 "audit": {"calls": 1, "flagged": {}},
                 "launches": [{"kernels": [{"name": own, "stream": 7, "us": 15.0}], "error": None}] * 2}
        return reply, None


def _gpu_judge(cfg, child):
    from grader.build.parse import parse
    judge = Judge.__new__(Judge)
    judge.cfg, judge.child, judge.device, judge.backend = cfg, child, "cuda", "cuda"
    judge.observe, judge.jit_s, judge.stage = True, 0.0, lambda *a: None
    judge.state = {"checks": [], "bench": [], "system": {}, "judge_flags": []}
    judge._launches, judge._untimed_reports, judge._watched = {False: [], True: []}, {}, []
    judge.source = parse(REPO / "reference" / "fused.cu").sources["cuda"]
    return judge


def test_the_gpu_benchmark_asks_for_canaries_a_watched_round_and_checks_what_comes_back(cfg):
    """The judge's side of a CUDA size (grader/judge/judge.py `_bench_size`), driven by a child that
    answers as the harness does: CANARIES event canaries in every request, made while the
    previous request ran; one watched round a size, in one of the first MIN_REQUESTS requests;
    every canary checked; the watched round read into `launches.timed`."""
    import random

    from grader.analysis.confidence import MIN_REQUESTS
    from grader.judge.gpu import CANARIES, event_slots
    shape = cfg.bench_shapes[-1]
    child = _HarnessChild()
    judge = _gpu_judge(cfg, child)
    got = judge._bench_size(shape, ["sdpa"], random.Random(3))
    assert got is not None and got["recheck"] is not None and got["recheck"] < 1e-4, got["recheck"]
    requests = [h for h in child.requests if h["op"] == "bench"]
    assert len(requests) >= MIN_REQUESTS
    # where the size's seconds went (timing.bench_seconds_by_S), on the judge's clock
    seconds = got["seconds"]
    assert seconds["sent"] == len(requests) and 0 < seconds["requests"] <= seconds["total"], seconds
    # a request says nothing of which calls are checked: they are drawn after its reply, one
    # reveal a request, of the method that ran (events here: no graph call drawn)
    assert all(not {"canaries", "slots"} & set(h) and type(h["key"]) is int for h in requests)
    ops = [h["op"] for h in child.requests]
    assert ops == ["bench", "reveal"] * len(requests), ops
    reveals = [h for h in child.requests if h["op"] == "reveal"]
    assert all(len(h["slots"]) == CANARIES and max(h["slots"]) < event_slots() for h in reveals)
    # nor under any other name: no value of a request holds its later reveal's slots
    for h, reveal in zip(requests, reveals):
        values = [v for v in h.values() if isinstance(v, (list, tuple, dict, str))]
        assert not any(len(set(reveal["slots"]) & set(v if not isinstance(v, dict) else v.values())) >= 3
                       for v in values if not isinstance(v, str)), h
    assert got["checked_calls"] == CANARIES * len(requests)
    watched = [h for h in requests if h.get("watch") is not None]
    assert len(watched) == 1 and requests.index(watched[0]) < MIN_REQUESTS and 1 <= watched[0]["watch"] < 11
    assert all(h["observe"] is True for h in requests)
    judge._judge_launches()
    timed = judge.state["launches"]["timed"]
    assert timed["rounds"] == 1 and timed["by_S"][str(shape.S)][0]["own_launches"] == 16, timed
    assert not [f for f in judge.state["judge_flags"] if f["code"] in ("timed_launches", "untimed_work")]


def test_a_kernel_wrong_on_a_tenth_of_its_gpu_timed_calls_is_caught(cfg):
    import math
    import random
    shape = cfg.bench_shapes[-1]
    judge = _gpu_judge(cfg, _HarnessChild(wrong=0.1))
    got = judge._bench_size(shape, ["sdpa"], random.Random(4))
    assert got["recheck"] is not None and (got["recheck"] > 0.01 or math.isnan(got["recheck"])), got["recheck"]
    assert not [f for f in judge.state["judge_flags"] if f["code"] == "changed_outputs"]


def test_gpu_outputs_rewritten_once_the_checked_calls_are_known_are_flagged_not_checked(cfg):
    """The canary-aware attack after commit-reveal: garbage on every timed call, committed, then
    the drawn calls' outputs recomputed right before they are sent. Their digests differ from
    the commitments: strict `changed_outputs`, and no output counts as checked."""
    import random
    shape = cfg.bench_shapes[-1]
    judge = _gpu_judge(cfg, _HarnessChild(rewrite=True))
    got = judge._bench_size(shape, ["sdpa"], random.Random(6))
    assert got["recheck"] is None
    flags = [f for f in judge.state["judge_flags"] if f["code"] == "changed_outputs"]
    assert len(flags) == 1 and flags[0]["tier"] == "strict" and f"S={shape.S}:" in flags[0]["detail"], flags


def test_time_hidden_from_the_kernels_call_beside_sdpas_is_charged_within_a_tight_line():
    """Every CPU call a request of its own with the same bytes in and out, so the kernel's
    unaccounted time less SDPA's (`paired_ms`) is near zero for honest kernels (-0.64 .. +0.35 ms
    measured) where the unaccounted time alone is 0.7-5.5 ms. The held-out GOT clock shave of
    2026-11-28 hid 0.6 ms a call of reference/fused.cpp (slowdown 3.1 -> 1.24 at S = 256) under
    the old line: now charged beyond `paired_line`, and flagged."""
    from grader.core.config import Shape
    from grader.core.result import Timing
    from grader.judge.judge import cap_baseline, clock_flags, paired_line
    shape = Shape(1, 2, 256, 64)
    timings = {"student": Timing(0.39, 0.37, 0.5, 0.01, 50), "sdpa": Timing(0.53, 0.5, 0.6, 0.01, 50)}
    honest = {"unaccounted_ms": 1.06, "harness_ms": 0.57, "sdpa_ms": 0.53, "paired_ms": 0.05}
    assert clock_flags(shape, timings, honest) == []
    row = {"S": 256, "student_ms": 0.39, "sdpa_ms": 0.53, "slowdown": 0.39 / 0.53}
    assert cap_baseline({**row, "judge_clock": honest})["slowdown"] == row["slowdown"]
    shaved = {**honest, "paired_ms": 0.6}
    (flag,) = clock_flags(shape, timings, shaved)
    assert flag["code"] == "forged_timings" and flag["tier"] == "review" and "SDPA's" in flag["detail"]
    capped = cap_baseline({**row, "judge_clock": shaved})
    line = paired_line(0.53)
    assert abs(capped["slowdown"] - (0.39 + 0.6 - line) / 0.53) < 1e-9 and capped["judge_clock"]["charged_ms"] > 0.4
    (flag,) = clock_flags(shape, timings, {**honest, "paired_ms": 5.0})
    assert flag["tier"] == "strict"


def test_sdpas_requests_delayed_in_the_kernels_process_do_not_hide_a_shave():
    """Held-out, 2026-11-28: the kernel's process delayed SDPA's requests 1.35 ms before SDPA's timer
    and shaved 1.2 ms off its own calls: `paired_ms` -1.43, no flag under the line above zero.
    Below the floor (honest kernels: down to -0.64 ms) what lies beyond is charged and flagged."""
    from grader.core.config import Shape
    from grader.core.result import Timing
    from grader.judge.judge import cap_baseline, clock_flags, paired_floor
    shape = Shape(1, 2, 64, 64)
    timings = {"student": Timing(0.02, 0.02, 0.03, 0.001, 50), "sdpa": Timing(0.13, 0.12, 0.14, 0.001, 50)}
    clock = {"unaccounted_ms": 0.82, "harness_ms": 0.55, "sdpa_ms": 0.13, "paired_ms": -1.43}
    (flag,) = clock_flags(shape, timings, clock)
    assert flag["code"] == "forged_timings" and "delayed the baseline's requests" in flag["detail"]
    row = {"S": 64, "student_ms": 0.02, "sdpa_ms": 0.13, "slowdown": 0.02 / 0.13}
    charged = cap_baseline({**row, "judge_clock": clock})["judge_clock"]["charged_ms"]
    assert abs(charged - (1.43 + paired_floor(0.13))) < 1e-4 and charged > 0.9
    assert clock_flags(shape, timings, {**clock, "paired_ms": -0.3}) == []      # honest: no finding
