"""Diagnosis of a wrong answer: which usual mistake the error pattern matches.

`diagnose(got, expected, inputs, tolerance)` is called by the check stage when an output
is off by more than the tolerance; it returns one phrase naming the mistake the error
matches, with the worst element's index. Two kinds of evidence, tried in this order:

- formulas (grader/analysis/formulas.py): the output equals attention computed the wrong way
  (a scale missing, doubled, after the softmax, truncated or fitted; 64 dims hard-coded; K or V
  read transposed or through swapped indices; no division by the row sum; uniform weights; a
  softmax over the queries; an online softmax whose accumulator is not rescaled; the first n
  keys only; the last partial tile clamped), each named with how closely it matched, and only
  when it is itself wrong (a formula as close to the truth as the output is no evidence);
- where the error is: only in rows whose largest score overflows exp() in float32 (no max
  shift), or whose max over the first T keys does (a max shift over part of the row), only in
  some (batch, head) slices (whole batches never computed, never written, or another head's
  output), only in the rows past the last full tile, only in the first rows, only in the
  output dims past D/2 or 64, exactly zero (never written: no "factor of 0" is offered).

Before any of these, the judge re-runs a wrong public config with other bytes in fresh memory
(grader/judge/check.py differential_message): an output that follows them read memory it never
wrote; one that changes between two alike runs races. A cross-config pattern never
contradicts what a config's own message established.

`across_configs(checks, numerics, probes)` reads the checks of a whole grade (results JSON)
and names a pattern no single config shows: wrong only at D = 128, only where S is not a
multiple of a tile, only on the large-score config (as numerics allows: rounding or the max
shift), every config dropping the keys past one tile. `probe_plan(checks)` names the unscored
calls the judge makes when a failed config differs from every passing one in two ways (config
2: B = 2 and S = 333): the probes' results say which one fails.

Shapes (batch, heads, seq, head_dim); tensors float64 on the CPU. Pure functions.
"""
from __future__ import annotations

import math
import re

import torch

from .formulas import FIT_ROWS, TILES, candidates, fitted, fitted_candidates

# exp(x) overflows float32 above ln(FLT_MAX) = ln((2 - 2^-23) * 2^127) ~ 88.72
EXP_OVERFLOW = math.log((2 - 2 ** -23) * 2.0 ** 127)
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
    for check in (_formula, _no_max_shift, _partial_max_shift, _heads, _rows, _head_dims, _zeros, _row_factor):
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


# ---- attention computed the wrong way (grader/analysis/formulas.py) -------------------------

def _evidence(formula, rowwise: bool, got, expected, q, k, v, tolerance: float, slices, rows, bar: float) -> str:
    """How closely `formula` gives the output on `slices` ("(to 6e-07 on 4 (b, h) slices)"), or
    "" when it does not (first tried on the worst slice's `rows` when it is row-wise), or when it
    is itself within the tolerance of the truth (then the truth fits as well: no evidence)."""
    b0, h0 = slices[0]
    if rowwise and float((got[b0, h0][rows] - formula(q[b0, h0][rows], k[b0, h0], v[b0, h0])).abs().max()) >= bar:
        return ""                      # the worst rows already rule it out
    outs = [(formula(q[b, h], k[b, h], v[b, h]), b, h) for b, h in slices]
    miss = max(float((got[b, h] - o).abs().max()) for o, b, h in outs)
    if miss >= bar or max(float((expected[b, h] - o).abs().max()) for o, b, h in outs) < tolerance:
        return ""
    return f"(to {miss:.0e} on {len(slices)} (b, h) slice{'s' if len(slices) > 1 else ''})"


def _formula(got, expected, q, k, v, bad, err, tolerance, slices):
    S, D = q.shape[-2:]
    if not bool(torch.isfinite(got).all()):
        return None                    # these formulas give finite numbers: NaN is another story
    bar = max(tolerance, EXPLAINS * float(err.max()))
    b0, h0 = slices[0]
    rows = err[b0, h0].amax(-1).topk(min(FIT_ROWS, S)).indices       # the worst slice's worst rows
    for phase in range(2):             # the fixed formulas; then those fitted to the worst rows
        found = candidates(S, D) if phase == 0 else fitted_candidates(S, D, fitted(got, q, k, v, b0, h0, rows, bar))
        for phrase, formula, rowwise in found:
            said = _evidence(formula, rowwise, got, expected, q, k, v, tolerance, slices, rows, bar)
            if said:
                return f"{phrase} {said}"
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


def _partial_max_shift(got, expected, q, k, v, bad, err, tolerance, slices):
    """Wrong exactly in the rows where a later key's score exceeds the max of the first T keys by
    more than exp() takes in float32: the max shift taken over the first block of keys only."""
    B, H, S, D = q.shape
    if bool(torch.isfinite(got).all()):
        return None                    # a max over part of the row is exact until exp() overflows
    rows = _bad_rows(bad)
    blocks = [T for T in (8, 16, 32, 48, 64, 128) if T < S]
    excess = torch.empty(len(blocks), B, H, S, dtype=q.dtype)  # how far each row's max is above the block's
    for b in range(B):                                   # one (S, S) slice of scores at a time
        for h in range(H):
            s = q[b, h] @ k[b, h].T / math.sqrt(D)
            for i, T in enumerate(blocks):
                excess[i, b, h] = s.amax(-1) - s[:, :T].amax(-1)
    for T, over in zip(blocks, excess):
        sure, maybe = over > EXP_OVERFLOW + 0.5, over > EXP_OVERFLOW - 0.5         # float32 scores' rounding
        if bool(sure.any()) and bool((rows | ~sure).all()) and bool((maybe | ~rows).all()):
            return (f"a max shift over only the first {T} keys: exactly the rows where a later key's score exceeds "
                    f"the max of keys 0-{T - 1} by more than {EXP_OVERFLOW:.1f} (exp() overflows float32) are wrong "
                    f"({int(rows.sum())} of {rows.numel()} rows): the running max is not updated after the first "
                    "block; take the max over the whole row")
    return None


def never_computed(got, expected, tolerance: float) -> str:
    """Whole batches from b0 on (or whole heads from h0 on, in every batch) all zeros or NaN
    and every other (batch, head) slice right: the loop over b (or h) missing or stopping
    early; "" for any other pattern. Shapes (batch, heads, seq, head_dim)."""
    B, H = got.shape[:2]
    wrong = ((got - expected).abs().nan_to_num(math.inf) >= tolerance).flatten(2).any(-1)      # (B, H)
    empty = ((got == 0) | torch.isnan(got)).flatten(2).all(-1)
    if not bool(wrong.any()) or bool((wrong & ~empty).any()):
        return ""
    for b0 in range(1, B):
        if bool(wrong[b0:].all()) and not bool(wrong[:b0].any()):
            return (f"batches >= {b0} never computed: the loop over b is missing or stops early (every slice of "
                    f"batch {b0} on is all zeros or NaN, every slice before it right)"
                    + ("; or a batch/head offset (stride) that leaves b out, so that every batch reads and writes "
                       "batch 0's slices" if b0 == 1 else ""))
    for h0 in range(1, H):
        if bool(wrong[:, h0:].all()) and not bool(wrong[:, :h0].any()):
            return (f"heads >= {h0} never computed: the loop over h is missing or stops early (in every batch, "
                    f"heads {h0} on are all zeros or NaN, the heads before them right)"
                    + ("; or a batch/head offset (stride) that leaves h out, so that every head reads and writes "
                       "head 0's slice" if h0 == 1 else ""))
    return ""


def _heads(got, expected, q, k, v, bad, err, tolerance, slices):
    """Some (batch, head) slices entirely right, the others wrong (most of their rows): never
    written, or holding another slice's output."""
    B, H = bad.shape[:2]
    wrong = bad.flatten(2).any(-1)                       # (B, H)
    if bool(wrong.all()) or not bool(wrong.any()):
        return None
    bad_slices = [(b, h) for b in range(B) for h in range(H) if bool(wrong[b, h])]
    if any(float(_bad_rows(bad)[s].double().mean()) < 0.5 for s in bad_slices):
        return None                    # a few wrong rows in a slice are no evidence about slices
    right = [(b, h) for b in range(B) for h in range(H) if not bool(wrong[b, h])]
    shown = ", ".join(_index(s) for s in right[:4]) + (", ..." if len(right) > 4 else "")
    what = f"only {len(right)} of the B×H = {B * H} (batch, head) slices right ({shown})"
    if all(bool((got[s] == 0).all()) for s in bad_slices):
        return (never_computed(got, expected, tolerance) or
                f"{what}; the others are all zeros: never written (grid or loop too small over batch·heads?)")
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
    if 2 * d0 == D:                    # D/2 (64 at D = 128 too): a halved bound, not a hard-coded 64
        return (f"only the first half of the head dims right (the first {d0} of D = {D}): a loop over d that "
                "stops at D/2 (a loop unrolled by two whose bound was halved?)")
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
            "over the wrong axis", "(batch, head) slices right", "holds the output of slice", "never computed",
            "applied after the softmax", "V indexed with", "accumulator is not rescaled", "best-fitting scale",
            *FORENSIC)
TILE_WORDS = ("tile",)
FITS_NONE = "the error fits none of the usual mistakes"
KEYS = re.compile(r"attention over only the first (\d+) of S = (\d+) keys")


def _agrees(failed: list[dict], words: tuple) -> bool:
    """No failed config's own diagnosis names a different cause: each matched none of the
    usual mistakes, or names one of `words` (a cross-config pattern never contradicts the
    per-config message the student reads beside it)."""
    for c in failed:
        message = str(c.get("message", ""))
        if any(m in message for m in SPECIFIC) and not any(w in message for w in words):
            return False
    return True


def _names_a_cause(message: str) -> bool:
    """The per-config message already says what is wrong (a formula, a place, a re-run's finding)."""
    return FITS_NONE not in message and ("the error matches" in message or "the error is the rounding" in message
                                         or any(f in message for f in FORENSIC))


def _key_tile(failed: list[dict], passed: list[dict]) -> int | None:
    """The smallest tile t for which every failed config's output is attention over the keys of
    its full tiles (n = S // t · t, read off each config's message) and every passing S is a
    multiple of t; None when a config dropped no keys or no one tile fits them all."""
    common = None
    for c in failed:
        m = KEYS.search(str(c.get("message", "")))
        if not m:
            return None
        n, S = int(m.group(1)), int(m.group(2))
        tiles = {t for t in range(S - n + 1, n + 1) if n % t == 0}      # S // t · t == n and S % t != 0
        common = tiles if common is None else common & tiles
    common = {t for t in common or () if all(c["config"]["S"] % t == 0 for c in passed)}
    return min(common) if common else None


def _shape(d: dict) -> str:
    return ", ".join(f"{k} = {d[k]}" for k in ("B", "H", "S", "D"))


def _judged(public: list[dict]) -> list[dict]:
    """The failed configs whose output was judged: a call that raised, crashed or ran out of
    time says nothing about the formula (the not-implemented template raises on every config)."""
    return [c for c in public if not c.get("passed") and not str(c.get("message", "")).startswith(NO_OUTPUT)]


def probe_plan(checks: list[dict]) -> list[dict]:
    """Unscored calls that tell two causes apart, for each failed public config that differs
    from every passing one in two ways or more (config 2 is the only config with B > 1 and the
    only S that is not a multiple of 64): the same config with one of them changed back,
    {"config", "removes" ("batch", "tile" or "D"), "shape"}. Shapes come from the public configs
    only. Nothing for a config whose own message already names what re-runs proved."""
    public = [c for c in checks if c.get("config")]
    passed = [c for c in public if c.get("passed")]
    if not passed:
        return []
    plan = []
    for c in _judged(public):
        if any(f in str(c.get("message", "")) for f in (*FORENSIC, "never computed")):
            continue
        shape, changed = c["config"], {}
        if shape["B"] > max(p["config"]["B"] for p in passed):
            changed["batch"] = {**shape, "B": 1}
        tiles = [t for t in TILES if shape["S"] % t and all(p["config"]["S"] % t == 0 for p in passed)]
        if tiles and shape["S"] > max(tiles):
            changed["tile"] = {**shape, "S": shape["S"] // max(tiles) * max(tiles)}
        dims = [p["config"]["D"] for p in passed]
        if shape["D"] not in dims:
            changed["D"] = {**shape, "D": max(set(dims), key=dims.count)}
        if len(changed) >= 2:
            plan += [{"config": c["name"], "removes": what, "shape": s} for what, s in changed.items()]
    return plan


CAUSES = {"batch": "the batch", "tile": "S", "D": "D"}


def _probed(c: dict, probes: list[dict], passed: list[dict]) -> str | None:
    """What the judge's unscored probes of config `c` showed: which one thing, changed back,
    makes it pass."""
    mine = [p for p in probes if p.get("config") == c["name"] and p.get("removes") in CAUSES]
    if len(mine) < 2:
        return None
    told = "; ".join(f"{_shape(p['shape'])} {'passes' if p.get('passed') else 'fails'}" for p in mine)
    head = f"{c['name']} ({_shape(c['config'])}) fails; unscored probes on the judge's inputs: {told}"
    fixed = [p for p in mine if p.get("passed")]
    if len(fixed) == 1 and len(mine) == 2:
        cause = fixed[0]["removes"]
        other = next(p["removes"] for p in mine if p is not fixed[0])
        S = c["config"]["S"]
        tiles = ", ".join(str(t) for t in TILES if S % t and all(p["config"]["S"] % t == 0 for p in passed))
        what = {"batch": "a batch bug: a batch offset or stride, a loop over b, or a scratch buffer shared by the "
                         "batches",
                "tile": f"the last partial tile (S = {S} is not a multiple of {tiles}) is skipped or read past its "
                        "end; mask it",
                "D": f"D = {c['config']['D']}: a head dimension hard-coded somewhere"}[cause]
        return f"{head}: {CAUSES[cause]}, not {CAUSES[other]}, makes it fail: {what}"
    if not fixed:
        return f"{head}: each change alone still fails: more than one cause (or H = {c['config']['H']})"
    if len(fixed) == len(mine):
        return f"{head}: each change alone passes: only the combination fails"
    return head


def across_configs(checks: list[dict], numerics: dict | None = None, probes: list[dict] | None = None) -> str | None:
    """A pattern over the public configs of a results document's `checks` (hidden ones
    carry no shape and are left out), or None: wrong only on the large-score config, only
    where S is not a multiple of a tile, only at D = 128; every config wrong. `numerics`
    (grader/analysis/numerics.py, the document's `numerics`) decides whether rounding is a
    cause; `probes` (the document's `probes`) which of two differences makes a config fail."""
    public = [c for c in checks if c.get("config")]
    failed = _judged(public)
    if not failed or not public:
        return None
    passed = [c for c in public if c.get("passed")]
    names = ", ".join(c["name"] for c in failed)
    if all(any(m in str(c.get("message", "")) for m in FORENSIC[:2] + FORENSIC[3:]) for c in failed):
        return None            # each config's message already names what the re-runs proved
    if not passed and len(failed) == len(public) and not all("were never written" in str(c.get("message", ""))
                                                             for c in failed):
        tile = _key_tile(failed, passed)
        if tile:
            return (f"every config ({names}) is attention over the keys of its full tiles of {tile} only: the keys "
                    f"past the last full tile of {tile} left out: process the last partial tile too, masking the keys "
                    "past S")
        if all(_names_a_cause(str(c.get("message", ""))) for c in failed):
            return None        # each config's own message names its cause; no size pattern to add
        return (f"every config fails, so no size pattern can be read ({names}): compare your output with the "
                "model answer at the first mismatch")
    large = [c for c in failed if c["config"].get("qk_std", 1) > 1]
    if large == failed and _agrees(failed, ("max shift", "overflow")):
        std = large[0]["config"]["qk_std"]
        what = f"wrong only on the large-score config ({names}: q and k × {std:g}, scores in the hundreds)"
        shift = "the max shift missing or not over the whole row"
        if all("NaN/Inf" in c.get("message", "") for c in large):       # (a finite output may name the shift too)
            return (f"{what}, with NaN/Inf: {shift}; exp() overflows float32 above {EXP_OVERFLOW:.1f}, so subtract "
                    "each row's maximum score, over all its keys, before exp()")
        precision = (numerics or {}).get("precision")
        if numerics and precision in ("", "fp32", "mixed"):
            return (f"{what}; your error matches no reduced precision's rounding (see numerics), so not the "
                    f"products: {shift} (an exponent clamped, a max taken over part of the row)")
        said = f"; {precision} rounding matches your error (see numerics)" if precision else ""
        return (f"{what}: large scores magnify any rounding of q·k, so the scores need full fp32 products and fp32 "
                f"storage: single-pass TF32, fp16/bf16 products or a score stored in fp16 fail here{said}"
                + ("" if precision else f"; or {shift}"))
    if not passed:
        return None            # a pattern over sizes needs a config that passed to contrast with
    for c in failed if len(failed) == 1 else ():
        told = _probed(c, probes or [], passed)
        if told:
            return told
    D = {c["config"]["D"] for c in failed}
    if len(D) == 1 and all(c["config"]["D"] not in D for c in passed) and _agrees(failed, HEAD_DIM_WORDS):
        return (f"wrong only at D = {D.pop()} ({names}): a head dimension hard-coded somewhere (array sizes, "
                "loop bounds, the 1/√D scale)?")
    tiles = [t for t in TILES if all(c["config"]["S"] % t for c in failed)
             and all(c["config"]["S"] % t == 0 for c in passed)]
    if tiles and _agrees(failed, TILE_WORDS):
        sizes = ", ".join(str(c["config"]["S"]) for c in failed)
        tile = (f"S = {sizes}, not a multiple of {', '.join(map(str, tiles))}; every config that passes has such "
                "an S")
        also = [f"{k} = {c['config'][k]}" for k in ("B", "H") for c in failed[:1]
                if all(c["config"][k] != p["config"][k] for p in passed)]
        named = all(any(w in str(c.get("message", "")) for w in TILE_WORDS) for c in failed)
        if also and not named:  # it also differs in B or H, and its own message does not say which
            return (f"wrong only on {names}, which differs from every config that passes in S ({tile}) and in "
                    f"{' and '.join(also)}: the last partial tile skipped or read past its end, or the "
                    f"{'batch' if also[0].startswith('B') else 'head'} indexing; the config's own message may "
                    "tell which")
        return (f"wrong only where S is not a multiple of a tile ({names}: {tile}): the last partial "
                "tile is skipped or read past its end; mask it")
    return None
