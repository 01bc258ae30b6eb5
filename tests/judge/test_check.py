"""grader/judge/check.py: the comparison rules on literal tensors, and the float64 truth."""
import math

import pytest

import torch
import torch.nn.functional as F

from grader.judge.check import compare, failure_kind, make_inputs, truth, exception_message
from grader.core.config import Shape


def _qkv(S=5, D=4):
    return make_inputs(Shape(1, 2, S, D), seed=1)


def test_truth_matches_sdpa_in_float64():
    q, k, v = _qkv()
    expected = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
    assert torch.allclose(truth(q, k, v), expected, atol=1e-12)


def test_inputs_are_reproducible_and_seed_dependent():
    a, b = make_inputs(Shape(1, 1, 3, 2), 7), make_inputs(Shape(1, 1, 3, 2), 7)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(make_inputs(Shape(1, 1, 3, 2), 8)[0], a[0])


def test_exact_output_passes_with_zero_error():
    q, k, v = _qkv()
    expected = truth(q, k, v)
    max_err, message, mismatches = compare(expected.float(), q, k, v, expected, 1e-3)
    assert message == "" and max_err < 1e-6 and mismatches == ()


def test_one_wrong_element_is_reported_with_its_index():
    q, k, v = _qkv()
    expected = truth(q, k, v)
    out = expected.float().clone()
    out[0, 1, 3, 2] += 0.5
    max_err, message, mismatches = compare(out, q, k, v, expected, 1e-3)
    assert math.isclose(max_err, 0.5, rel_tol=1e-5)
    assert "max_err 0.5 >= tolerance 0.001 (1 of 40 elements off)" in message
    assert mismatches[0].index == (0, 1, 3, 2)
    assert math.isclose(mismatches[0].got - mismatches[0].expected, 0.5, rel_tol=1e-5)


def test_error_just_below_tolerance_passes_and_at_tolerance_fails():
    q, k, v = _qkv()
    expected = truth(q, k, v)
    below = expected.clone(); below[0, 0, 0, 0] += 0.9e-3
    at = expected.clone(); at[0, 0, 0, 0] += 1.1e-3
    assert compare(below.float(), q, k, v, expected, 1e-3)[1] == ""
    assert compare(at.float(), q, k, v, expected, 1e-3)[1] != ""


def test_nan_shape_dtype_and_type_each_have_their_message():
    q, k, v = _qkv()
    expected = truth(q, k, v)
    nan = expected.float().clone(); nan[0, 0, 1, 1] = float("nan")
    assert "1 NaN/Inf values (first at index (0, 0, 1, 1))" in compare(nan, q, k, v, expected, 1e-3)[1]
    assert "shape" in compare(expected.float()[..., :2], q, k, v, expected, 1e-3)[1]
    assert "dtype is torch.float64" in compare(expected, q, k, v, expected, 1e-3)[1]
    assert "returned NoneType" in compare(None, q, k, v, expected, 1e-3)[1]


def test_not_implemented_is_recognised_from_the_message():
    err = RuntimeError("attention: not implemented yet (write your kernel)\nException raised from x at y")
    assert failure_kind(err) == "not_implemented"
    assert exception_message(err) == "attention: not implemented yet (write your kernel)"
    assert failure_kind(RuntimeError("index out of range")) == "runtime_error"


def test_row_error_checks_random_rows_of_every_head():
    """The judge's check of a timed output: rows it draws after the output arrived."""
    import random
    from grader.judge.check import make_inputs, row_error, truth
    from grader.core.config import Shape
    shape = Shape(2, 3, 50, 16)
    q, k, v = make_inputs(shape, 7)
    right = truth(q, k, v).float()
    assert row_error(right.numpy().tobytes(), q, k, v, random.Random(1), 4) < 1e-6
    wrong = right.clone()
    wrong[1, 2] += 0.01                                    # one head wrong: every row of it
    assert row_error(wrong.numpy().tobytes(), q, k, v, random.Random(1), 4) == pytest.approx(0.01, rel=1e-3)
    unwritten = right.clone()
    unwritten[0, 0, :25] = float("nan")                    # half a head never written
    hits = sum(not row_error(unwritten.numpy().tobytes(), q, k, v, random.Random(s), 4) < 1e-3 for s in range(50))
    assert hits >= 45                                      # 1 - 2^-4 of draws see it
    one = right.clone()
    one[1, 0, 7, 3] += 0.02                                # one value of one head: its own row, nobody else's
    assert row_error(one.numpy().tobytes(), q, k, v, random.Random(1), 50) == pytest.approx(0.02, rel=1e-3)
    other = right.clone()
    other[0, 1] = truth(q[:, :1].expand_as(q), k, v)[0, 1].float()   # head (0, 1) answered with head (0, 0)'s queries
    assert row_error(other.numpy().tobytes(), q, k, v, random.Random(1), 4) > 1e-3
    assert row_error(right.numpy().tobytes()[:-4], q, k, v, random.Random(1), 4) is None
    assert row_error(None, q, k, v, random.Random(1), 4) is None


# ---- differential poison (issue 32, item 1): re-runs with other bytes in fresh memory ----

def _bytes(t):
    return t.contiguous().numpy().tobytes()


def test_differential_poison_tells_a_read_of_unwritten_memory_from_a_race_and_from_unwritten_output():
    from grader.judge.check import RACE, UNINITIALISED, differential_message
    shape = (1, 2, 3, 4)
    good = torch.randn(shape)
    nan = torch.full(shape, -1, dtype=torch.int32).view(torch.float32)          # the check's poison, carried
    runs = {"0x00": _bytes(good), "0x00 again": _bytes(good), "0x41": _bytes(good), "0x41 again": _bytes(good)}
    assert differential_message(_bytes(nan), runs, shape, 1e-3).startswith(UNINITIALISED)   # NaN·0 = NaN
    follows = {**runs, "0x41": _bytes(good + 12.078), "0x41 again": _bytes(good + 12.078)}   # out += unzeroed
    msg = differential_message(_bytes(good), follows, shape, 1e-3)
    assert msg.startswith(UNINITIALISED) and "24 of 24 output elements differ" in msg
    racy = {**runs, "0x00 again": _bytes(good + torch.tensor([0.5] + [0.0] * 23).reshape(shape))}
    assert differential_message(_bytes(good), racy, shape, 1e-3).startswith(RACE)
    # never written: each run holds exactly its own fill (the check's message says so already)
    left = {"0x00": _bytes(torch.zeros(shape)), "0x00 again": _bytes(torch.zeros(shape)),
            "0x41": _bytes(torch.full(shape, 0x41414141, dtype=torch.int32).view(torch.float32))}
    left["0x41 again"] = left["0x41"]
    assert differential_message(_bytes(nan), left, shape, 1e-3) == ""
    # a deterministic wrong kernel that reads nothing it did not write: nothing to add
    assert differential_message(_bytes(good * 2), {k: _bytes(good * 2) for k in runs}, shape, 1e-3) == ""
    # last bits of a reduction order are not a difference
    jitter = {**runs, "0x00 again": _bytes(good + 1e-6)}
    assert differential_message(_bytes(good), jitter, shape, 1e-3) == ""


def test_cuda_faults_are_told_in_the_students_terms():
    """Issue 32, item 2: a CUDA error the kernel caused (surfacing at the harness's next
    synchronisation) is the kernel's fault, with what it usually means."""
    from grader.judge.check import cuda_fault

    class AcceleratorError(RuntimeError):
        pass
    smem = cuda_fault(AcceleratorError("CUDA error: invalid argument\nCUDA kernel errors might be asynchronously "
                                       "reported at some other API call"))
    assert smem.startswith("the kernel faulted on the GPU (CUDA error: invalid argument)")
    assert "48 KiB" in smem and "cudaFuncAttributeMaxDynamicSharedMemorySize" in smem
    oob = cuda_fault(RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert "out-of-bounds" in oob and "grader" not in oob.split(";")[0]
    assert cuda_fault(RuntimeError("CUDA error: something new")).endswith("your launch or its memory accesses")
    assert cuda_fault(ValueError("attention: S must be < 4096")) is None
    assert cuda_fault(MemoryError()) is None


def test_a_cuda_error_the_kernel_raised_itself_is_explained():
    """Held-out (2026-11-27, H200): a kernel that checks its own launch (TORCH_CHECK on
    cudaGetLastError) raised "flash2_fwd launch failed: invalid argument" at D = 128 (68 KiB of
    dynamic shared memory, no opt-in): the check's message gives CUDA's meaning of the error the
    kernel quoted, on the GPU only, once."""
    import torch
    from grader.judge.check import judge_call, raised_on_gpu
    reply = {"raised": {"kind": "runtime_error", "message": "flash2_fwd launch failed: invalid argument"}}
    q = torch.zeros(1, 1, 4, 4)
    result, kind = judge_call(reply, b"", q, q, q, q.double(), 1e-3, "config 3", gpu=True)
    assert kind == "runtime_error" and result.message.startswith("attention raised: flash2_fwd launch failed")
    assert "48 KiB" in result.message and "cudaFuncAttributeMaxDynamicSharedMemorySize" in result.message
    cpu, _ = judge_call(reply, b"", q, q, q, q.double(), 1e-3, "config 3")
    assert "48 KiB" not in cpu.message
    assert raised_on_gpu("the kernel faulted on the GPU (CUDA error: invalid argument): ...") == ""
    assert raised_on_gpu("attention: S must be a multiple of 64") == ""


def test_a_configs_inputs_do_not_give_the_seed_away():
    """Printed public inputs once gave the secret seed away in seconds (each config's generator
    was seeded with seed * 1000 + i, and torch's CPU generator keeps 32 bits of a seed). Now
    each config's generator seed is a hash of scrypt(seed) and the config's index: the cheap
    map no longer reproduces them, a candidate seed costs a memory-hard derivation, and no two
    configs share a generator seed."""
    import time

    from grader.judge.check import config_seed
    from grader.core.config import Shape
    shape = Shape(1, 4, 128, 64)
    seed = 734_511_029
    printed = make_inputs(shape, config_seed(seed, 0))[0].flatten()[:16]
    assert not torch.equal(make_inputs(shape, seed * 1000)[0].flatten()[:16], printed)
    seeds = {config_seed(seed, i) for i in range(8)} | {config_seed(seed + 1, i) for i in range(8)}
    assert len(seeds) == 16 and all(0 <= s < 2**63 for s in seeds)
    assert config_seed(seed, 3) == config_seed(seed, 3)           # reproducible
    t0 = time.perf_counter()
    config_seed(123_456_789_012, 0)                                # a candidate never derived before
    assert time.perf_counter() - t0 > 0.01, "the derivation is too cheap to slow a search"


# ---- issue 32 held-out kernels: the forensics' own claims (TA findings 1 and 3) ----

def test_a_deterministic_pair_does_not_make_a_differing_checked_run_a_memory_read():
    """h06 (OpenMP threads sharing one scratch): the two 0x00 runs happened to agree, and the
    checked run differed from them, finite: that is no read of unwritten memory. Memory is
    blamed only when each fill's repeat reproduces it, or the poisoned run is NaN where it differs."""
    from grader.judge.check import RACE, UNINITIALISED, differential_message
    shape = (1, 2, 3, 4)
    good = torch.randn(shape)
    off = good + torch.tensor([0.5] + [0.0] * 23).reshape(shape)
    same = {"0x00": _bytes(good), "0x00 again": _bytes(good), "0x41": _bytes(good), "0x41 again": _bytes(good)}
    msg = differential_message(_bytes(off), same, shape, 1e-3)
    assert not msg.startswith(UNINITIALISED) and msg.startswith(RACE), msg
    # the 0x41 run differs but does not reproduce itself: a race, not memory
    flaky = {**same, "0x41": _bytes(off)}
    assert differential_message(_bytes(good), flaky, shape, 1e-3).startswith(RACE)
    # on the CPU the race is named in OpenMP's terms
    cpu = differential_message(_bytes(off), same, shape, 1e-3, device="cpu")
    assert "OpenMP" in cpu and "private" in cpu and "reduction" in cpu and "atomics" not in cpu, cpu
    gpu = differential_message(_bytes(off), same, shape, 1e-3, device="cuda")
    assert "OpenMP" not in gpu and "barrier" in gpu


def test_the_poison_message_is_matched_exactly_and_whole_batches_never_computed_are_named():
    """h12 (the loop over b missing, batch 1 zeros): the per-config diagnosis says "never
    written (grid or loop too small ...)", which is not the poison's message: it is not thrown
    away; and two right twin heads with whole batches of zeros is no offset claim."""
    from grader.core.result import CheckResult
    from grader.judge.check import head_state_message, unwritten_message, with_forensics
    heads = ("max_err 0.612 >= tolerance 0.001 (63936 of 127872 elements off); the error matches only 3 of the "
             "B×H = 6 (batch, head) slices right ((0, 0), (0, 1), (0, 2)); the others are all zeros: never written "
             "(grid or loop too small over batch·heads?); worst element ...")
    result = CheckResult(config=None, name="config 2", max_err=0.6, passed=False, message=heads)
    kept = with_forensics(result, "FORENSIC").message
    assert kept.startswith("FORENSIC (the checked run: max_err 0.612") and heads not in kept
    poison = torch.full((1, 1, 2, 2), -1, dtype=torch.int32).view(torch.float32)
    unwritten = CheckResult(config=None, name="config 2", max_err=None, passed=False, message=unwritten_message(poison))
    assert with_forensics(unwritten, "FORENSIC").message == "FORENSIC"
    q, k, v = make_inputs(Shape(2, 3, 16, 8), 3)
    want = truth(q, k, v)
    got = want.float().clone()
    got[1] = 0
    twin_q, twin_k, twin_v = (t[0:1, 0:1].expand(1, 2, 16, 8).contiguous() for t in (q, k, v))
    twin_want = truth(twin_q, twin_k, twin_v)
    said = head_state_message(twin_want.float().double(), twin_want, 1e-3, got=got, want=want)
    assert said.startswith("batches >= 1 never computed: the loop over b is missing or stops early"), said
    assert head_state_message(twin_want.float().double(), twin_want, 1e-3).startswith("a batch/head offset")


def test_a_forged_reply_neither_crashes_the_judge_nor_leaks_a_hidden_config():
    """Held-out attacks of 2026-11-27: a kernel wrote its own reply frame. With `shape: 7` the
    judge raised TypeError (grader_error, batch exit 70); with the hidden shape in `type`, the
    hidden config's message echoed it into grades.csv. Every field is type-checked, and a hidden
    config's message is fixed text chosen by category (default-deny)."""
    import torch
    from grader.core.result import CheckResult
    from grader.judge.check import judge_call, withhold
    q = torch.zeros(1, 1, 4, 4)
    good = {"type": "Tensor", "shape": [1, 1, 4, 4], "dtype": "torch.float32", "device": "cpu",
            "expected_device": "cpu"}
    data = bytes(q.numel() * 4)
    for forged in ({"output": {**good, "shape": 7}}, {"output": {**good, "dtype": 5}},
                   {"output": good, "modified": 3}, {"output": good, "aliases": [1]},
                   {"output": good, "seconds": 10 ** 400}, {"output": good, "seconds": True}):
        result, kind = judge_call(forged, data, q, q, q, q.double(), 1e-3, "config 1")   # never raises
        assert kind in ("runtime_error", "") and (kind == "" or "malformed reply" in result.message), (forged, result)
        assert result.seconds == 0.0
    leak = {"output": {"type": "hidden S=173 B=1 H=2 D=64"}}
    result, kind = judge_call(leak, b"", q, q, q, q.double(), 1e-3, "hidden 1", hidden=True)
    shown = withhold(result).message
    assert "173" not in shown and shown == "attention returned something other than a torch.Tensor"
    for message in ("anything at all S=173", "output dtype is torch.S173", "output is on cuda:173, expected cuda:0"):
        said = withhold(CheckResult(config=None, name="hidden 1", max_err=None, passed=False, message=message)).message
        assert "173" not in said, said
