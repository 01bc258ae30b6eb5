"""grader/analysis/diagnose.py: each usual mistake, made on purpose in float32 the way a kernel would
make it, is named; a right output gets None; noise is named as no known pattern. Then the
same through real kernels (tests/submissions/wrong/) and the whole grade's pattern."""
import math
import os
import re
from dataclasses import asdict

import pytest
import torch

from grader.judge.check import config_seed, make_inputs, truth
from grader.core.config import Shape
from grader.analysis.diagnose import EXP_OVERFLOW, across_configs, diagnose

from conftest import SUBMISSIONS

TOL = 1e-3


def _case(B=1, H=2, S=128, D=64, qk_std=1.0, seed=5):
    q, k, v = make_inputs(Shape(B, H, S, D, qk_std), seed)
    return (q, k, v), truth(q, k, v)


def _attn32(q, k, v, scale, shift=True, keys=None, normalise=True):
    """Attention in float32, computed the (possibly wrong) way a kernel would."""
    if keys is not None:
        k, v = k[..., :keys, :], v[..., :keys, :]
    s = q @ k.transpose(-1, -2) * scale
    p = torch.exp(s - s.amax(-1, keepdim=True) if shift else s)
    return (p / p.sum(-1, keepdim=True) if normalise else p) @ v


def _diagnose(got, inputs, expected):
    return diagnose(got.double(), expected, tuple(t.double() for t in inputs), TOL)


def test_exp_overflow_is_the_float32_limit():
    assert torch.isinf(torch.exp(torch.tensor(EXP_OVERFLOW + 0.01)))
    assert torch.isfinite(torch.exp(torch.tensor(EXP_OVERFLOW - 0.01)))


def test_right_output_is_none_and_noise_is_no_known_pattern():
    inputs, expected = _case()
    assert _diagnose(_attn32(*inputs, 1 / 8), inputs, expected) is None
    noisy = expected.clone()
    noisy[0, 1, 7, 3] += 0.5
    noisy[0, 0, 90, 50] -= 0.2
    phrase = _diagnose(noisy, inputs, expected)
    assert phrase.startswith("the error fits none of the usual mistakes")
    assert "worst element at (b, h, s, d) = (0, 1, 7, 3)" in phrase


@pytest.mark.parametrize("scale,named", [(1.0, "a missing 1/√D scale"), (1 / 64, "a 1/D scale instead of 1/√D")])
def test_wrong_scale_is_named(scale, named):
    inputs, expected = _case()
    phrase = _diagnose(_attn32(*inputs, scale), inputs, expected)
    assert phrase.startswith(f"the error matches {named}") and "worst element at (b, h, s, d) = (" in phrase


def test_transposed_k_and_unnormalised_softmax():
    (q, k, v), expected = _case(S=96)
    k_as_d_by_s = k.reshape(1, 2, -1).reshape(1, 2, 64, 96).transpose(-1, -2)
    assert "K read transposed" in _diagnose(_attn32(q, k_as_d_by_s, v, 1 / 8), (q, k, v), expected)
    assert "not normalised" in _diagnose(_attn32(q, k, v, 1 / 8, normalise=False), (q, k, v), expected)


def test_tail_rows_and_tail_keys_at_s_333():
    inputs, expected = _case(S=333)
    rows = _attn32(*inputs, 1 / 8)
    rows[..., 320:, :] = 0                            # the last partial tile of query rows never written
    phrase = _diagnose(rows, inputs, expected)
    assert "rows past the last full tile: every row from 320 on is wrong" in phrase
    assert "multiple of 16, 32, 64" in phrase
    keys = _attn32(*inputs, 1 / 8, keys=320)          # the last partial tile of keys skipped
    assert "the keys from 320 on left out" in _diagnose(keys, inputs, expected)


def test_first_rows_only_and_head_dims():
    inputs, expected = _case(S=128)
    got = _attn32(*inputs, 1 / 8)
    got[..., 100:, :] = 0
    assert "only the first rows right: rows 0-99 are right" in _diagnose(got, inputs, expected)
    inputs, expected = _case(S=64, D=96)             # 64 dims right of 96: not D/2 (issue 32, h10)
    got = _attn32(*inputs, 1 / math.sqrt(96))
    got[..., 64:] = 0
    assert "only the first 64 of D = 96 output dims right: is the head dimension hard-coded to 64" \
        in _diagnose(got, inputs, expected)


def test_d128_with_a_hard_coded_64():
    (q, k, v), expected = _case(S=64, D=128)
    assert "a scale of 1/√64 at D = 128" in _diagnose(_attn32(q, k, v, 1 / 8), (q, k, v), expected)
    partial = _attn32(q[..., :64], k[..., :64], v, 1 / math.sqrt(128))
    assert "summed over only the first 64 of 128 dims" in _diagnose(partial, (q, k, v), expected)


def test_heads_never_written_or_written_to_the_wrong_place():
    inputs, expected = _case(B=2, H=3, S=64)
    got = _attn32(*inputs, 1 / 8)
    got[1, 1:] = 0                                    # two slices of batch 1 never written
    phrase = _diagnose(got, inputs, expected)
    assert "only 4 of the B×H = 6 (batch, head) slices right" in phrase and "all zeros: never written" in phrase
    got = _attn32(*inputs, 1 / 8)
    got[0, 2] = got[0, 1]                             # head 2 holds head 1's output
    assert "slice (0, 2) holds the output of slice (0, 1)" in _diagnose(got, inputs, expected)


def test_no_max_shift_rows_that_overflow():
    inputs, expected = _case(S=128, qk_std=5.0)       # some rows' largest score above 88.7, some below
    got = _attn32(*inputs, 1 / 8, shift=False)
    assert not torch.isfinite(got).all() and torch.isfinite(got).any()
    phrase = _diagnose(got, inputs, expected)
    assert "a softmax without the max shift: exactly the rows whose largest score exceeds 88.7" in phrase
    inputs, expected = _case(S=256, qk_std=8.0)       # the stability config: every row overflows
    got = _attn32(*inputs, 1 / 8, shift=False)
    assert "every row is NaN/Inf" in _diagnose(got, inputs, expected)


def test_constant_factor():
    inputs, expected = _case()
    assert "off by a constant factor of 2" in _diagnose(2 * _attn32(*inputs, 1 / 8), inputs, expected)


def _check(name, S, D, passed, message="", qk_std=1.0):
    config = {"B": 1, "H": 2, "S": S, "D": D, **({"qk_std": qk_std} if qk_std != 1 else {})}
    return {"name": name, "config": config, "passed": passed, "message": message}


def test_across_configs():
    ok = [_check("config 1", 128, 64, True), _check("config 3", 256, 128, True)]
    large = _check("config 4", 256, 64, False, "output has 2048 NaN/Inf values", qk_std=8.0)
    assert "the max shift missing or not over the whole row" in across_configs(ok + [large])
    finite = dict(large, message="max_err 0.01 >= tolerance 0.001")
    assert "full fp32 products" in across_configs(ok + [finite])
    tail = _check("config 2", 333, 64, False, "max_err 1.2")
    assert "not a multiple of a tile (config 2: S = 333" in across_configs(ok + [tail])
    d128 = [_check("config 1", 128, 64, True), _check("config 3", 256, 128, False)]
    assert "wrong only at D = 128" in across_configs(d128)
    assert "every config fails, so no size pattern can be read" in across_configs([dict(c, passed=False) for c in ok])
    assert across_configs(ok) is None
    hidden = {"name": "hidden 1", "config": None, "passed": False, "message": "max_err 1"}
    assert across_configs(ok + [hidden]) is None      # a hidden config's shape is not there to reason on
    # no output judged (the template raises "not implemented"; a crash): no pattern to name
    raised = [dict(c, passed=False, message="attention raised: attention: not implemented yet") for c in ok]
    assert across_configs(raised) is None
    crashed = [ok[0], dict(ok[1], passed=False, message="the kernel crashed: the process crashed with SIGABRT")]
    assert across_configs(crashed) is None


# ---- the same through real kernels: the check stage calls diagnose, the summary reads the grade

def test_missing_scale_kernel_is_named(grade_cpu):
    result = grade_cpu(SUBMISSIONS / "wrong" / "missing_scale.py")
    assert result.verdict == "wrong_answer"
    assert all("a missing 1/√D scale" in c.message for c in result.checks), [c.message for c in result.checks]
    assert across_configs([asdict(c) for c in result.checks]) is None    # each config names it already


def test_unshifted_softmax_kernel_is_named(grade_cpu):
    from grader.report.summary import format_result
    result = grade_cpu(SUBMISSIONS / "wrong" / "no_max_shift.py")
    assert result.verdict == "wrong_answer"
    assert [c.passed for c in result.checks] == [True, True, True, False]
    assert "NaN/Inf" in result.checks[3].message
    assert "the max shift missing or not over the whole row" in across_configs([asdict(c) for c in result.checks])
    assert "without the max shift" in format_result(result)


def test_tail_bug_kernel_is_named(grade_cpu):
    result = grade_cpu(SUBMISSIONS / "wrong" / "partial_tile_ignored.py")
    bad = next(c for c in result.checks if not c.passed)
    assert "rows past the last full tile: every row from 320 on is wrong" in bad.message
    assert "not a multiple of a tile" in across_configs([asdict(c) for c in result.checks])


def test_a_cross_config_pattern_needs_a_passing_config_and_agrees_with_the_per_config_diagnosis():
    """Issue 33 item 7 / issue 32: no config passed (one wrong, three crashed) is not "wrong
    only at D = 64"; a per-config diagnosis that names another cause is not contradicted."""
    crash = "the kernel crashed: the process crashed with SIGSEGV"
    none_passed = [_check("config 1", 128, 64, False, "max_err 0.3 >= tolerance 0.001"),
                   _check("config 2", 333, 64, False, crash), _check("config 3", 256, 128, False, crash),
                   _check("config 4", 256, 64, False, crash, qk_std=8.0)]
    assert across_configs(none_passed) is None
    scale = "max_err 0.2: the error matches a missing 1/√D scale (softmax(q·kᵀ)·v); worst element at ..."
    d64 = [_check("config 1", 128, 64, False, scale), _check("config 3", 256, 128, True)]
    assert across_configs(d64) is None
    tail_passes = [_check("config 1", 128, 64, True), _check("config 2", 333, 64, False, scale)]
    assert across_configs(tail_passes) is None
    hard = "the error matches a scale of 1/√64 at D = 128: is the head dimension hard-coded to 64?; worst ..."
    assert "wrong only at D = 128" in across_configs([_check("config 1", 128, 64, True),
                                                      _check("config 3", 256, 128, False, hard)])


def test_the_configs_inputs_separate_every_decoy_from_the_truth():
    """Issue 32, item 4: the public configs' inputs are informative: each decoy (zeros, the mean
    of V, a column softmax, no 1/√D scale, a softmax without the max shift in float32) is off
    the truth by far more than the tolerance on every config (the max-shift decoy on the
    large-score config, the only one whose scores overflow exp in float32)."""
    import torch
    from grader.core import config
    from grader.judge.check import make_inputs, truth
    from grader.analysis.formulas import attention as _attention, column_softmax as _column_softmax
    cfg = config.load()

    def no_shift32(q, k, v):
        s = (q.float() @ k.float().T) / math.sqrt(q.shape[-1])
        p = torch.exp(s)
        return ((p / p.sum(-1, keepdim=True)) @ v.float()).double()
    decoys = {"zeros": lambda q, k, v: torch.zeros_like(v),
              "mean of V": lambda q, k, v: v.mean(0, keepdim=True).expand_as(v),
              "column softmax": lambda q, k, v: _column_softmax(q, k, v, 1 / math.sqrt(q.shape[-1])),
              "no scale": lambda q, k, v: _attention(q, k, v, 1.0)}
    for i, shape in enumerate(cfg.configs):
        q, k, v = make_inputs(shape, config_seed(cfg.seed, i))
        want = truth(q, k, v)
        q, k, v = (t.double() for t in (q, k, v))
        for name, f in decoys.items():
            got = torch.stack([torch.stack([f(q[b, h], k[b, h], v[b, h]) for h in range(shape.H)])
                               for b in range(shape.B)])
            err = float((got - want).abs().max())
            assert err > 100 * cfg.tolerance, (name, shape, err)
        got = no_shift32(q[0, 0], k[0, 0], v[0, 0])
        separated = not bool(torch.isfinite(got).all()) or float((got - want[0, 0]).abs().max()) > 100 * cfg.tolerance
        assert separated == bool(shape.qk_std > 1), (shape, "max shift")


# ---- issue 32 held-out kernels (TA findings 1, 2, 4, 5, 6): more formulas, each with its evidence

EVIDENCE = re.compile(r"\(to \d(\.\d)?e-\d\d on \d+ \(b, h\) slices?\)")


def _online_no_rescale32(q, k, v, scale, block):
    """Online softmax over key blocks whose running sum is rescaled when the max grows but
    whose accumulator is not (float32, as a kernel computes it)."""
    S = q.shape[-2]
    s = q @ k.transpose(-1, -2) * scale
    m = torch.full(s.shape[:-1] + (1,), -math.inf)
    den, acc = torch.zeros_like(m), torch.zeros_like(q)
    for j0 in range(0, S, block):
        blk = s[..., j0:j0 + block]
        new = torch.maximum(m, blk.amax(-1, keepdim=True))
        den = den * torch.exp(m - new)
        p = torch.exp(blk - new)
        den, acc, m = den + p.sum(-1, keepdim=True), acc + p @ v[..., j0:j0 + block, :], new
    return acc / den


def test_a_max_shift_taken_down_each_column():
    """Held-out (2026-11-27, llm.c style): the stability max taken per key over the queries and
    subtracted element by element, then a softmax along each row: named, with its evidence."""
    (q, k, v), expected = _case(S=128)
    s = q @ k.transpose(-1, -2) / 8
    p = torch.exp(s - s.amax(-2, keepdim=True))
    got = (p / p.sum(-1, keepdim=True)) @ v
    phrase = _diagnose(got, (q, k, v), expected)
    assert "the max shift taken down each column" in phrase and EVIDENCE.search(phrase), phrase


def test_the_first_n_keys_for_any_n_with_its_evidence():
    """h01: a key loop that stops one short; h18: tiles of 48 (no tile of TILES) whose last
    partial tile is dropped. Any n is found, and the phrase says how closely it matched."""
    inputs, expected = _case(S=128)
    phrase = _diagnose(_attn32(*inputs, 1 / 8, keys=127), inputs, expected)
    assert "the last key (j = S-1 = 127) left out" in phrase and EVIDENCE.search(phrase), phrase
    phrase = _diagnose(_attn32(*inputs, 1 / 8, keys=96), inputs, expected)
    assert "only the first 96 of S = 128 keys" in phrase and "48" in phrase and EVIDENCE.search(phrase), phrase


def test_scale_after_the_softmax_and_v_read_through_swapped_indices():
    inputs, expected = _case(S=128)
    phrase = _diagnose(_attn32(*inputs, 1.0) / 8, inputs, expected)
    assert "the 1/√D scale applied after the softmax" in phrase and EVIDENCE.search(phrase), phrase
    q, k, v = inputs
    S, D = 128, 64
    flat = (torch.arange(D)[None, :] * D + torch.arange(S)[:, None])      # V[..][x][j]: flat element x·D + j
    swapped = v.reshape(1, 2, -1)[..., flat]
    phrase = _diagnose(_attn32(q, k, swapped, 1 / 8), inputs, expected)
    assert "V indexed with its last two indices swapped" in phrase and EVIDENCE.search(phrase), phrase


def test_online_softmax_without_the_accumulator_rescale():
    inputs, expected = _case(S=128)
    phrase = _diagnose(_online_no_rescale32(*inputs, 1 / 8, 32), inputs, expected)
    assert "accumulator is not rescaled" in phrase and "key blocks of 32" in phrase and EVIDENCE.search(phrase)


def test_a_truncated_integer_sqrt_and_a_fitted_scale():
    inputs, expected = _case(S=64, D=128)
    phrase = _diagnose(_attn32(*inputs, 1 / 11), inputs, expected)
    assert "a scale of 1/11 instead of 1/√128 = 1/11.31: √D truncated to an integer" in phrase, phrase
    inputs, expected = _case(S=128, D=64)
    phrase = _diagnose(_attn32(*inputs, 1 / 5.3), inputs, expected)
    assert "a scale of 1/5.3 instead of 1/√64 = 1/8" in phrase and EVIDENCE.search(phrase), phrase


def test_no_formula_is_offered_on_degenerate_evidence():
    """An output a hair past the tolerance near the truth: a formula that is itself within the
    tolerance of the truth (the last key dropped where it weighs nothing) is not a cause."""
    inputs, expected = _case(S=128)
    got = expected.clone()
    got[0, 0, 5, 7] += 2e-3
    assert _diagnose(got, inputs, expected).startswith("the error fits none of the usual mistakes")


def test_half_the_head_dims_is_not_a_hard_coded_64():
    """h10: a P·V loop over d that stops at D/2: at D = 128 the first 64 dims are right, which
    is D/2, not evidence of a hard-coded 64."""
    for D in (64, 128):
        inputs, expected = _case(S=64, D=D)
        got = _attn32(*inputs, 1 / math.sqrt(D))
        got[..., D // 2:] = 0
        phrase = _diagnose(got, inputs, expected)
        assert f"only the first half of the head dims right (the first {D // 2} of D = {D})" in phrase, phrase
        assert "hard-coded" not in phrase


def test_batches_past_the_first_never_computed():
    """h12: the loop over b missing (batch 1 all zeros, batch 0 right)."""
    inputs, expected = _case(B=2, H=3, S=64)
    got = _attn32(*inputs, 1 / 8)
    got[1] = 0
    phrase = _diagnose(got, inputs, expected)
    assert "batches >= 1 never computed: the loop over b is missing or stops early" in phrase, phrase
    got = _attn32(*inputs, 1 / 8)
    got[:, 2] = 0
    assert "heads >= 2 never computed" in _diagnose(got, inputs, expected)


HEADS_MSG = ("max_err 0.866 >= tolerance 0.001 (63396 of 127872 elements off); the error matches only 3 of the "
             "B×H = 6 (batch, head) slices right ((1, 0), (1, 1), (1, 2)); the others are wrong: check the "
             "batch/head offsets; worst element at (b, h, s, d) = (0, 2, 11, 47), got 0.1056, expected -0.7603")


def _public(config2_message, config2_passed=False):
    return [dict(_check("config 1", 128, 64, True), config={"B": 1, "H": 4, "S": 128, "D": 64}),
            dict(_check("config 2", 333, 64, config2_passed, config2_message),
                 config={"B": 2, "H": 3, "S": 333, "D": 64}),
            _check("config 3", 256, 128, True), _check("config 4", 256, 64, True, qk_std=8.0)]


def test_a_tile_is_not_blamed_where_the_failing_config_also_changes_the_batch():
    """h17 (finding 2): config 2 is the only config with B > 1 and the only S not a multiple of
    64; its own message names the (batch, head) slices: no tile claim. Without probes, both
    causes are named; with the judge's probes, the one that fails."""
    checks = _public(HEADS_MSG)
    said = across_configs(checks) or ""
    assert "mask it" not in said and "wrong only where S is not a multiple of a tile" not in said
    plain = _public("max_err 1.61 >= tolerance 0.001 (122838 of 127872 elements off); the error fits none of "
                    "the usual mistakes; worst element at (b, h, s, d) = (1, 2, 265, 54), got -1.772, expected -0.1642")
    both = across_configs(plain)
    assert "B = 2" in both and "S = 333" in both and "or" in both, both

    def probe(removes, B, S, passed):
        return {"config": "config 2", "removes": removes, "shape": {"B": B, "H": 3, "S": S, "D": 64},
                "passed": passed, "max_err": 1e-7 if passed else 0.8}
    batch = across_configs(checks, probes=[probe("batch", 1, 333, True), probe("tile", 2, 256, False)])
    assert "the batch, not S" in batch and "B = 2, H = 3, S = 256" in batch, batch
    tile = across_configs(plain, probes=[probe("batch", 1, 333, False), probe("tile", 2, 256, True)])
    assert "S, not the batch" in tile and "mask it" in tile, tile


def test_the_large_score_config_follows_numerics():
    """h14/h13 (finding 4): a finite error that matches no precision is not told to use fp32
    products; the NaN branch names a max shift missing or not over the whole row. h08: a
    10-bit precision is told both: products and stored scores."""
    ok = [_check("config 1", 128, 64, True), _check("config 3", 256, 128, True)]
    finite = _check("config 4", 256, 64, False, "max_err 3.74 >= tolerance 0.001 (32740 of 32768 elements off); "
                    "the error fits none of the usual mistakes; worst ...", qk_std=8.0)
    bug = {"precision": "", "evidence": "the error matches no precision's: a bug, not rounding", "lesson": ""}
    said = across_configs(ok + [finite], numerics=bug)
    assert "fp32 products" not in said and "TF32" not in said and "max shift missing or not over the whole row" in said
    nan = _check("config 4", 256, 64, False, "output has 1472 NaN/Inf values (first at index (0, 0, 13, 0)): ...",
                 qk_std=8.0)
    assert "max shift missing or not over the whole row" in across_configs(ok + [nan], numerics=bug)
    clamped = dict(finite, message="max_err 3.74 >= tolerance 0.001 (...); the error matches a softmax without the "
                   "max shift, the exponent clamped at 80 instead (...); worst ...", max_err=3.74)
    said = across_configs(ok + [clamped], numerics=bug)
    assert "NaN/Inf" not in said and "max shift missing or not over the whole row" in said, said
    tf32 = {"precision": "TF32 or fp16 (10-bit mantissa)", "evidence": "...", "lesson": "..."}
    said = across_configs(ok + [finite], numerics=tf32)
    assert "products" in said and "stored" in said, said


def test_every_config_wrong_says_what_it_knows():
    """Finding 5: no claim that the formula is wrong "not in tiles or sizes"; nothing when each
    config already names its cause; the common tile when each config drops its last keys."""
    fits_none = "max_err 0.3 >= tolerance 0.001; the error fits none of the usual mistakes; worst ..."
    checks = [_check("config 1", 128, 64, False, fits_none), _check("config 3", 256, 128, False, fits_none)]
    said = across_configs(checks)
    assert "every config fails, so no size pattern can be read" in said and "not in tiles or sizes" not in said
    named = ("max_err 0.3; the error matches a missing 1/√D scale (softmax(q·kᵀ)·v) (to 2e-07 on 2 (b, h) slices); "
             "worst ...")
    assert across_configs([dict(c, message=named) for c in checks]) is None

    def keys(n, S):
        return f"max_err 0.5; the error matches attention over only the first {n} of S = {S} keys (...); worst ..."
    tiles = [_check("config 1", 128, 64, False, keys(96, 128)), _check("config 2", 333, 64, False, keys(288, 333)),
             _check("config 3", 256, 128, False, keys(240, 256))]
    said = across_configs(tiles)
    assert "the keys past the last full tile of 48 left out" in said, said


def test_probe_plan_changes_one_difference_at_a_time():
    """Finding 2: config 2 differs from every passing config in B and in S; the judge's unscored
    probes change one back each. Nothing to probe on a hidden config, when nothing passed, or
    when the config's own message names what the re-runs proved."""
    from grader.analysis.diagnose import probe_plan
    fits_none = "max_err 1.6 >= tolerance 0.001; the error fits none of the usual mistakes; worst ..."
    assert probe_plan(_public(fits_none)) == [
        {"config": "config 2", "removes": "batch", "shape": {"B": 1, "H": 3, "S": 333, "D": 64}},
        {"config": "config 2", "removes": "tile", "shape": {"B": 2, "H": 3, "S": 256, "D": 64}}]
    assert probe_plan(_public("the output changes from run to run on the same inputs ...")) == []
    assert probe_plan([dict(c, passed=False) for c in _public(fits_none)]) == []
    hidden = {"name": "hidden 1", "config": None, "passed": False, "message": "max_err at or above the tolerance"}
    assert probe_plan(_public("", config2_passed=True) + [hidden]) == []


# ---- the held-out kernels a TA graded (issue 32): each one's summary names its real bug ----

HELD_OUT = [
    # (fixture, verdict, phrases the printed summary holds, phrases it must not)
    ("wrong/skips_last_key.py", "wrong_answer", ["the last key (j = S-1 = 127) left out"], ["not in tiles or sizes"]),
    ("wrong/v_indices_swapped.py", "wrong_answer", ["V indexed with its last two indices swapped"], []),
    ("wrong/scale_after_softmax.py", "wrong_answer", ["the 1/√D scale applied after the softmax"], []),
    ("wrong/online_acc_not_rescaled.py", "wrong_answer", ["key blocks of 32", "accumulator is not rescaled"], []),
    ("wrong/int_sqrt_scale.py", "wrong_answer", ["a scale of 1/11 instead of 1/√128 = 1/11.31: √D truncated"], []),
    ("wrong/half_head_dims.py", "wrong_answer", ["only the first half of the head dims right"], ["hard-coded to 64"]),
    ("wrong/clamped_tail_keys.py", "wrong_answer", ["clamped to key S-1 instead of masked", "S, not the batch"], []),
    ("wrong/batch_loop_missing.py", "wrong_answer",
     ["batches >= 1 never computed: the loop over b is missing or stops early"], ["not a multiple of a tile"]),
    ("wrong/kt_scratch_per_head.py", "wrong_answer", ["the batch, not S, makes it fail"], ["mask it"]),
    ("wrong/max_first_block.py", "wrong_answer", ["a max shift over only the first 64 keys",
                                                  "the max shift missing or not over the whole row"], []),
    ("wrong/clamped_exp.py", "wrong_answer",
     ["the exponent clamped at 80", "the max shift missing or not over the whole row"],
     ["fp32 products", "TF32", "with NaN/Inf"]),
    ("wrong/tile48_keys_dropped.py", "wrong_answer", ["the keys past the last full tile of 48 left out"],
     ["not in tiles or sizes"]),
    ("wrong/half_score_buffer.py", "wrong_answer", ["the stored scores in fp32"], []),
    ("correct/double_sums.py", "ok", ["likely computed in fp32 or better"], []),
    ("correct/static_tuple_helper.py", "ok", [], ["keeps a tensor between calls"]),
]


@pytest.mark.parametrize("name,verdict,said,unsaid", HELD_OUT, ids=[c[0] for c in HELD_OUT])
def test_held_out_kernels_are_named(grade_cpu, name, verdict, said, unsaid):
    from grader.report.summary import format_result
    result = grade_cpu(SUBMISSIONS / name)
    text = format_result(result) + "\n" + "\n".join(f["detail"] for f in result.flags)
    assert result.verdict == verdict, text
    for phrase in said:
        assert phrase in text, text
    for phrase in unsaid:
        assert phrase not in text, text


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="an OpenMP race needs two threads")
def test_openmp_threads_sharing_a_scratch_are_a_race_not_a_memory_read(grade_cpu):
    """h06: rows parallelised with OpenMP, one score row shared by every thread. Whatever the
    threads' timing, a failed config is never blamed on unwritten memory."""
    from grader.judge.check import RACE, UNINITIALISED
    result = grade_cpu(SUBMISSIONS / "wrong" / "omp_shared_scratch.py")
    failed = [c for c in result.checks if not c.passed]
    assert result.verdict == "wrong_answer" and failed
    assert not any(UNINITIALISED in c.message for c in failed), [c.message for c in failed]
    assert any(c.message.startswith(RACE) and "OpenMP" in c.message for c in failed), [c.message for c in failed]


def test_a_kernel_without_threads_that_changes_between_calls_keeps_state_not_a_race(grade_cpu):
    """Held-out (2026-11-27): a `static` accumulator never reset, no threads in the library. Its
    output changes from call to call like a race's, but a library that starts no threads cannot
    race (linkaudit.starts_threads): the message names state kept between calls, not OpenMP."""
    from grader.judge.check import RACE
    result = grade_cpu(SUBMISSIONS / "wrong" / "static_accumulator.py")
    failed = [c for c in result.checks if not c.passed]
    assert result.verdict == "wrong_answer" and failed
    said = [c.message for c in failed if c.message.startswith(RACE)]
    assert said and all("state kept from one call to the next" in m and "OpenMP threads" not in m for m in said), \
        [c.message for c in failed]


def test_the_judges_probes_are_in_the_results_and_unscored(grade_cpu):
    """h17 (a K scratch indexed by head only): the probes ran on config 2's two variants, are
    written to the results, and change no check, score or verdict."""
    result = grade_cpu(SUBMISSIONS / "wrong" / "kt_scratch_per_head.py")
    assert [(p["removes"], p["passed"]) for p in result.probes] == [("batch", True), ("tile", False)]
    assert [c.passed for c in result.checks] == [True, False, True, True]
    assert [c.name for c in result.checks] == ["config 1", "config 2", "config 3", "config 4"]


def test_a_max_shift_over_the_first_block_only():
    """h13: the running max taken from the first block of 64 keys only: NaN exactly in the rows
    where a later key's score exceeds that max by more than exp() can take in float32."""
    (q, k, v), expected = _case(S=256, qk_std=8.0)
    s = q @ k.transpose(-1, -2) / 8
    p = torch.exp(s - s[..., :64].amax(-1, keepdim=True))
    got = (p / p.sum(-1, keepdim=True)) @ v
    assert not torch.isfinite(got).all() and torch.isfinite(got).any()
    phrase = _diagnose(got, (q, k, v), expected)
    assert "a max shift over only the first 64 keys" in phrase, phrase


def test_an_exponent_clamped_instead_of_the_max_shift():
    """h14: exp(min(s, 80)) instead of exp(s - max): finite, and every score above 80 weighs
    the same; the clamp is fitted and named."""
    (q, k, v), expected = _case(S=256, qk_std=8.0)
    p = torch.exp((q @ k.transpose(-1, -2) / 8).clamp(max=80.0))
    got = (p / p.sum(-1, keepdim=True)) @ v
    phrase = _diagnose(got, (q, k, v), expected)
    assert "the exponent clamped at 80" in phrase and EVIDENCE.search(phrase), phrase
