"""Diagnosis of a wrong answer: which usual mistake the error pattern matches.

`diagnose(got, expected, inputs, tolerance)` is called by the check stage when an output
is off by more than the tolerance; it returns one phrase naming the mistake the error
matches, with the worst element's index. Two kinds of evidence, tried in this order:

- formulas: the output equals attention computed the wrong way: no 1/√D scale, 1/D
  instead of 1/√D, 1/√64 at D = 128, only the first 64 dims in q·k, K or V read
  transposed, the keys past the last full tile left out, no division by the row sum,
  uniform weights (the mean of V), a softmax over the queries instead of the keys;
- where the error is: only in rows whose largest score overflows exp() in float32 (no
  max shift), only in some (batch, head) slices (never written, or another head's
  output), only in the rows past the last full tile, only in the first rows, only in
  the output dims past 64, exactly zero (never written: no "factor of 0" is offered).

Before any of these, the judge re-runs a wrong public config with other bytes in fresh memory
(grader/judge/check.py differential_message): an output that follows them read memory it never
wrote; one that changes between two alike runs races. A cross-config pattern never
contradicts what a config's own message established.

`across_configs(checks)` reads the checks of a whole grade (results JSON) and names a
pattern no single config shows: wrong only at D = 128, only where S is not a multiple
of a tile, only on the large-score config.

Shapes (batch, heads, seq, head_dim); tensors float64 on the CPU. Pure functions.
"""
from __future__ import annotations

import math

import torch

# exp(x) overflows float32 above ln(FLT_MAX) = ln((2 - 2^-23) * 2^127) ~ 88.72
EXP_OVERFLOW = math.log((2 - 2 ** -23) * 2.0 ** 127)
TILES = (8, 16, 32, 64, 128)           # tile sizes students use (rows or keys per tile)
MAX_SLICES = 4                         # formula candidates are computed on at most this many (b, h)
EXPLAINS = 0.05                        # a candidate explains the output if it is this close (x max_err)


def _index(idx) -> str:
    return "(" + ", ".join(str(int(i)) for i in idx) + ")"


def diagnose(got, expected, inputs: tuple, tolerance: float) -> str | None:
    """A phrase naming the mistake the error matches and the worst element's index
    (b, h, s, d); None when the output is within the tolerance everywhere.
    `got` may hold NaN/Inf (they count as wrong)."""
    err = (got - expected).abs()
    err[~torch.isfinite(got)] = math.inf
    bad = err >= tolerance
    if not bool(bad.any()):
        return None
    worst = tuple(int(i) for i in torch.nonzero(err == err.max())[0])
    where = f"worst element at (b, h, s, d) = {_index(worst)}, got {float(got[worst]):.4g}, " \
            f"expected {float(expected[worst]):.4g}"
    q, k, v = inputs
    slices = _slices(bad, worst)
    for check in (_formula, _no_max_shift, _heads, _rows, _head_dims, _zeros, _row_factor):
        phrase = check(got, expected, q, k, v, bad, err, tolerance, slices)
        if phrase:
            return f"the error matches {phrase}; {where}"
    return f"the error fits none of the usual mistakes; {where}"


def _slices(bad, worst) -> list[tuple[int, int]]:
    """(b, h) slices to try the formulas on: the worst one first, then other wrong ones."""
    B, H = bad.shape[:2]
    wrong = [(b, h) for b in range(B) for h in range(H) if bool(bad[b, h].any())]
    first = (worst[0], worst[1])
    return [first] + [s for s in wrong if s != first][:MAX_SLICES - 1]


# ---- attention computed the wrong way -------------------------------------------------

def _attention(q, k, v, scale: float, keys: int | None = None, normalise: bool = True):
    """softmax(q kᵀ·scale) v for one (S, D) slice in float64; `keys`: only the first keys."""
    if keys is not None:
        k, v = k[:keys], v[:keys]
    s = q @ k.T * scale
    p = torch.exp(s - s.amax(-1, keepdim=True))
    return (p / p.sum(-1, keepdim=True) if normalise else p) @ v


def _column_softmax(q, k, v, scale: float):
    """softmax taken over the queries (dim 0 of the (S, S) scores), then times v."""
    s = q @ k.T * scale
    p = torch.exp(s - s.amax(0, keepdim=True))
    return (p / p.sum(0, keepdim=True)) @ v


def _candidates(S: int, D: int):
    """(phrase, function of a (q, k, v) slice) for each wrong formula that applies here."""
    right = 1 / math.sqrt(D)
    out = [("a missing 1/√D scale (softmax(q·kᵀ)·v)", lambda q, k, v: _attention(q, k, v, 1.0)),
           ("a 1/D scale instead of 1/√D (the scale applied twice?)", lambda q, k, v: _attention(q, k, v, 1 / D))]
    if D != 64:
        out += [(f"a scale of 1/√64 at D = {D}: is the head dimension hard-coded to 64?",
                 lambda q, k, v: _attention(q, k, v, 1 / 8)),
                (f"q·k summed over only the first 64 of {D} dims: is D = 64 hard-coded?",
                 lambda q, k, v: _attention(q[:, :64], k[:, :64], v, right))]
    out += [("K read transposed (k[d][j] instead of k[j][d]: q·kᵀ needs row j of k)",
             lambda q, k, v: _attention(q, k.reshape(-1).reshape(D, S).T, v, right)),
            ("V read transposed (v[d][j] instead of v[j][d])",
             lambda q, k, v: _attention(q, k, v.reshape(-1).reshape(D, S).T, right)),
            ("a softmax that is not normalised (no division by the row's sum of exp)",
             lambda q, k, v: _attention(q, k, v, right, normalise=False)),
            ("uniform weights: every row is the mean of V's rows (the scores never reach the softmax, "
             "or the softmax of a constant)", lambda q, k, v: v.mean(0, keepdim=True).expand_as(v)),
            ("a softmax over the wrong axis (normalised down each column, over the queries, instead of "
             "along each row, over the keys)", lambda q, k, v: _column_softmax(q, k, v, right))]
    for keys in sorted({S // t * t for t in TILES if S % t and S > t}, reverse=True):
        tiles = ", ".join(str(t) for t in TILES if S % t and S // t * t == keys)
        out.append((f"the keys from {keys} on left out: the last partial tile of K/V (S = {S} is not a "
                    f"multiple of {tiles}) is skipped", lambda q, k, v, n=keys: _attention(q, k, v, right, keys=n)))
    return out


def _formula(got, expected, q, k, v, bad, err, tolerance, slices):
    S, D = q.shape[-2:]
    if not bool(torch.isfinite(got).all()):
        return None                    # these formulas give finite numbers: NaN is another story
    bar = max(tolerance, EXPLAINS * float(err.max()))
    for phrase, formula in _candidates(S, D):
        if all(float((got[b, h] - formula(q[b, h], k[b, h], v[b, h])).abs().max()) < bar for b, h in slices):
            return phrase
    return None


# ---- where the error is -----------------------------------------------------------------

def _bad_rows(bad):
    """(B, H, S) bool: a row with at least one wrong element."""
    return bad.any(-1)


def _no_max_shift(got, expected, q, k, v, bad, err, tolerance, slices):
    """Wrong only in rows whose largest score overflows exp() in float32, and those rows
    are NaN/Inf, or some rows without overflow are right."""
    B, H, S, D = q.shape
    overflow = torch.empty(B, H, S, dtype=torch.bool)
    for b in range(B):                                   # one (S, S) slice of scores at a time
        for h in range(H):
            overflow[b, h] = (q[b, h] @ k[b, h].T).amax(-1) / math.sqrt(D) > EXP_OVERFLOW
    rows = _bad_rows(bad)
    if not bool(overflow.any()) or not bool((rows == overflow).all()):
        return None
    fix = "subtract each row's maximum score before exp() (the shift leaves softmax unchanged)"
    if bool((~overflow).any()):
        return (f"a softmax without the max shift: exactly the rows whose largest score exceeds "
                f"{EXP_OVERFLOW:.1f}, where exp() overflows float32, are wrong ({int(overflow.sum())} of "
                f"{overflow.numel()} rows); {fix}")
    if not bool(torch.isfinite(got).all(-1).any()):
        return (f"a softmax without the max shift: every row is NaN/Inf, and every row's largest score here "
                f"exceeds {EXP_OVERFLOW:.1f}, where exp() overflows float32; {fix}")
    return None


def _heads(got, expected, q, k, v, bad, err, tolerance, slices):
    """Some (batch, head) slices entirely right, the others wrong: never written, or
    holding another slice's output."""
    B, H = bad.shape[:2]
    wrong = bad.flatten(2).any(-1)                       # (B, H)
    if bool(wrong.all()) or not bool(wrong.any()):
        return None
    right = [(b, h) for b in range(B) for h in range(H) if not bool(wrong[b, h])]
    bad_slices = [(b, h) for b in range(B) for h in range(H) if bool(wrong[b, h])]
    shown = ", ".join(_index(s) for s in right[:4]) + (", ..." if len(right) > 4 else "")
    what = f"only {len(right)} of the B×H = {B * H} (batch, head) slices right ({shown})"
    if all(bool((got[s] == 0).all()) for s in bad_slices):
        return f"{what}; the others are all zeros: never written (grid or loop too small over batch·heads?)"
    for s in bad_slices[:1]:
        for b in range(B):
            for h in range(H):
                if (b, h) != s and float((got[s] - expected[b, h]).abs().max()) < tolerance:
                    return (f"{what}; slice {_index(s)} holds the output of slice {_index((b, h))}: "
                            "a wrong batch/head offset (stride) in the indexing")
    return f"{what}; the others are wrong: check the batch/head offsets"


def _rows(got, expected, q, k, v, bad, err, tolerance, slices):
    """Rows from r0 on wrong in some slice, every row before r0 right in all of them."""
    S = q.shape[-2]
    rows = _bad_rows(bad).any(0).any(0)                  # (S,): wrong in any (b, h)
    r0 = int(torch.nonzero(rows)[0])
    if r0 == 0 or not bool(rows[r0:].all()):
        return None
    tiles = [t for t in TILES if S % t and S // t * t == r0]
    if tiles:
        return (f"rows past the last full tile: every row from {r0} on is wrong and every row before it "
                f"is right (S = {S} is not a multiple of {', '.join(map(str, tiles))}): the last partial tile "
                "of query rows is skipped or mis-masked")
    return (f"only the first rows right: rows 0-{r0 - 1} are right and row {r0} is the first wrong one "
            "(a loop bound or grid size that stops early?)")


def _head_dims(got, expected, q, k, v, bad, err, tolerance, slices):
    D = q.shape[-1]
    dims = bad.flatten(0, 2).any(0)                      # (D,)
    d0 = int(torch.nonzero(dims)[0])
    if d0 == 0 or not bool(dims[d0:].all()):
        return None
    return (f"only the first {d0} of D = {D} output dims right" +
            (": is the head dimension hard-coded to 64?" if d0 == 64 else " (a loop over d that stops early?)"))


def _zeros(got, expected, q, k, v, bad, err, tolerance, slices):
    """Every wrong element exactly 0: nothing was written there (a factor of 0 is no factor)."""
    if not bool((got[bad] == 0).all()):
        return None
    if bool((got == 0).all()):
        return ("an output of all zeros: nothing was written to it (the kernel never ran, wrote to another "
                "tensor, or returned a fresh torch::zeros)")
    return (f"zeros where it is wrong: all {int(bad.sum())} wrong elements are exactly 0, never written into a "
            "zero-filled output (a loop or grid that does not cover them)")


def _row_factor(got, expected, q, k, v, bad, err, tolerance, slices):
    """Each wrong row a multiple of the right one: the normalisation is off."""
    if not bool(torch.isfinite(got).all()):
        return None
    g, e = got.flatten(0, 2), expected.flatten(0, 2)     # (rows, D)
    c = (g * e).sum(-1) / (e * e).sum(-1).clamp_min(1e-300)
    if float((g - c[:, None] * e).abs().max()) >= tolerance:
        return None
    wrong = bad.flatten(0, 2).any(-1)
    lo, hi = float(c[wrong].min()), float(c[wrong].max())
    if hi - lo < 1e-3 * max(abs(hi), 1e-12):
        return f"an output off by a constant factor of {lo:.4g}: a scale applied to the output instead of the scores?"
    return (f"each wrong row a multiple of the right one (factors {lo:.3g} to {hi:.3g}): the division by the "
            "row's sum of exp is wrong (a partial sum, or the online-softmax rescaling forgotten)")


# ---- a whole grade -----------------------------------------------------------------------

NO_OUTPUT = ("attention raised", "the kernel crashed", "the kernel took longer")
HEAD_DIM_WORDS = ("hard-coded", "head dimension", "output dims")
# what the judge's re-runs established (grader/judge/check.py differential_message, unwritten_message)
FORENSIC = ("the kernel reads memory it never wrote", "the output changes from run to run", "were never written",
            "the kernel carries state from one", "a batch/head offset (stride)")
# per-config findings that name a cause everywhere in the output, which a size pattern would contradict
SPECIFIC = ("a missing 1/√D scale", "a 1/D scale instead", "read transposed", "not normalised", "uniform weights",
            "over the wrong axis", *FORENSIC)
TILE_WORDS = ("tile",)


def _agrees(failed: list[dict], words: tuple) -> bool:
    """No failed config's own diagnosis names a different cause: each matched none of the
    usual mistakes, or names one of `words` (a cross-config pattern never contradicts the
    per-config message the student reads beside it)."""
    for c in failed:
        message = str(c.get("message", ""))
        if any(m in message for m in SPECIFIC) and not any(w in message for w in words):
            return False
    return True


def across_configs(checks: list[dict]) -> str | None:
    """A pattern over the public configs of a results document's `checks` (hidden ones
    carry no shape and are left out), or None: wrong only on the large-score config, only
    where S is not a multiple of a tile, only at D = 128; every config wrong."""
    public = [c for c in checks if c.get("config")]
    # only configs whose output was judged: a call that raised, crashed or ran out of time
    # says nothing about the formula (the not-implemented template raises on every config)
    failed = [c for c in public if not c.get("passed") and not str(c.get("message", "")).startswith(NO_OUTPUT)]
    if not failed or not public:
        return None
    passed = [c for c in public if c.get("passed")]
    names = ", ".join(c["name"] for c in failed)
    if all(any(m in str(c.get("message", "")) for m in FORENSIC[:2] + FORENSIC[3:]) for c in failed):
        return None            # each config's message already names what the re-runs proved
    if not passed and len(failed) == len(public) and not all("were never written" in str(c.get("message", ""))
                                                             for c in failed):
        return (f"every config is wrong ({names}): the mistake is in the formula itself, not in tiles or sizes;"
                " compare your output with the model answer at the first mismatch")
    large = [c for c in failed if c["config"].get("qk_std", 1) > 1]
    if large == failed and _agrees(failed, ("max shift", "overflow")):
        std = large[0]["config"]["qk_std"]
        what = f"wrong only on the large-score config ({names}: q and k × {std:g}, scores in the hundreds)"
        if all("NaN/Inf" in c.get("message", "") or "max shift" in c.get("message", "") for c in large):
            return (f"{what}, with NaN/Inf: a softmax without the max shift; exp() overflows float32 above "
                    f"{EXP_OVERFLOW:.1f}, so subtract each row's maximum score before exp()")
        return (f"{what}: large scores magnify any error in q·k, so the scores need full fp32 products "
                "(single-pass TF32 or bf16 fail here); or the max shift is applied to only part of the row")
    if not passed:
        return None            # a pattern over sizes needs a config that passed to contrast with
    D = {c["config"]["D"] for c in failed}
    if len(D) == 1 and all(c["config"]["D"] not in D for c in passed) and _agrees(failed, HEAD_DIM_WORDS):
        return (f"wrong only at D = {D.pop()} ({names}): a head dimension hard-coded somewhere (array sizes, "
                "loop bounds, the 1/√D scale)?")
    tiles = [t for t in TILES if all(c["config"]["S"] % t for c in failed)
             and all(c["config"]["S"] % t == 0 for c in passed)]
    if tiles and _agrees(failed, TILE_WORDS):
        sizes = ", ".join(str(c["config"]["S"]) for c in failed)
        return (f"wrong only where S is not a multiple of a tile ({names}: S = {sizes}, not a multiple of "
                f"{', '.join(map(str, tiles))}; every config that passes has such an S): the last partial "
                "tile is skipped or read past its end; mask it")
    return None
