"""Attention computed the wrong ways students compute it, for the diagnosis of a wrong answer
(grader/analysis/diagnose.py): each a function of one (S, D) slice of q, k, v in float64, with
the phrase that names the mistake.

- fixed formulas: no 1/√D scale, 1/D, the scale after the softmax, 1/√64 at D = 128, the first
  64 dims of q·k, 1/(int)√D, K or V read transposed, V through swapped indices, no division by
  the row sum, uniform weights, a softmax down the columns, an online softmax whose accumulator
  is not rescaled, the last partial tile clamped to key S-1;
- fitted to the output's worst rows: attention over the first n keys (every n at once, from
  running log-sums over the keys), a scale, an exponent clamped instead of the max shift.

A candidate is evidence only once diagnose has checked it against the output of several
(batch, head) slices. Pure functions.
"""
from __future__ import annotations

import math

import torch

TILES = (8, 16, 32, 64, 128)           # tile sizes students use (rows or keys per tile)
FIT_ROWS = 16       # the worst rows of the worst slice: where the kept keys and the scale are fitted
KEY_TRIES = 8       # numbers of kept keys tried on the whole slice, the best fits on those rows first


def attention(q, k, v, scale: float, keys: int | None = None, normalise: bool = True):
    """softmax(q kᵀ·scale) v for one (S, D) slice in float64; `keys`: only the first keys."""
    if keys is not None:
        k, v = k[:keys], v[:keys]
    s = q @ k.T * scale
    p = torch.exp(s - s.amax(-1, keepdim=True))
    return (p / p.sum(-1, keepdim=True) if normalise else p) @ v


def column_softmax(q, k, v, scale: float):
    """softmax taken over the queries (dim 0 of the (S, S) scores), then times v."""
    s = q @ k.T * scale
    p = torch.exp(s - s.amax(0, keepdim=True))
    return (p / p.sum(0, keepdim=True)) @ v


def column_max_shift(q, k, v, scale: float):
    """softmax along each row (over the keys) but shifted by each column's max (per key, over
    the queries): the shift is not constant within a row, so it changes the weights."""
    s = q @ k.T * scale
    p = torch.exp(s - s.amax(0, keepdim=True))
    return (p / p.sum(-1, keepdim=True)) @ v


def online_no_rescale(q, k, v, scale: float, block: int):
    """Online softmax over key blocks of `block` whose running sum is rescaled by
    exp(m_old - m_new) when the row max grows, but whose output accumulator is not."""
    s = q @ k.T * scale
    m = torch.full((q.shape[0], 1), -math.inf, dtype=s.dtype)
    den, acc = torch.zeros_like(m), torch.zeros(q.shape[0], v.shape[1], dtype=s.dtype)
    for j0 in range(0, k.shape[0], block):
        blk = s[:, j0:j0 + block]
        new = torch.maximum(m, blk.amax(-1, keepdim=True))
        p = torch.exp(blk - new)
        den, acc, m = den * torch.exp(m - new) + p.sum(-1, keepdim=True), acc + p @ v[j0:j0 + block], new
    return acc / den


def last_key_repeated(q, k, v, scale: float, times: int):
    """softmax with the last key counted `times` times: a tile's keys past S clamped to S - 1."""
    s = q @ k.T * scale
    p = torch.exp(s - s.amax(-1, keepdim=True))
    p[:, -1] *= times
    return p / p.sum(-1, keepdim=True) @ v


def v_swapped(v):
    """V read as V[..][x][j] where V[..][j][x] was meant: row j, dim x is flat element x·D + j."""
    S, D = v.shape
    return v.reshape(-1)[torch.arange(D)[None, :] * D + torch.arange(S)[:, None]]


def first_keys(q, k, v, g, scale: float) -> torch.Tensor:
    """How far attention over only the first n keys is from `g` on these rows, for every
    n < S at once (index n - 1): running log-sums over the keys (r·S·D work), v's positive and
    negative parts apart, so that no n's weights underflow where a later key holds the max."""
    s = (q @ k.T * scale)[:, :, None]                        # (rows, keys, 1)
    den = torch.logcumsumexp(s, 1)
    part = [torch.exp(torch.logcumsumexp(s + w.clamp_min(0).log()[None], 1) - den) for w in (v, -v)]
    return (part[0] - part[1] - g[:, None, :]).abs().nan_to_num(math.inf).amax((0, 2))[:-1]


def _golden(miss, lo: float, hi: float, steps: int = 30) -> float:
    """The minimum of `miss` between lo and hi, by golden-section search (one new point a step;
    0.618^30 of the bracket: ~1e-7 of it)."""
    golden = (math.sqrt(5) - 1) / 2
    a, b = hi - golden * (hi - lo), lo + golden * (hi - lo)
    fa, fb = miss(a), miss(b)
    for _ in range(steps):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - golden * (hi - lo)
            fa = miss(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + golden * (hi - lo)
            fb = miss(b)
    return (lo + hi) / 2


def _best_on_grid(miss, grid: list) -> float:
    """The minimum of `miss`: the best point of `grid`, refined between its neighbours."""
    i = min(range(len(grid)), key=lambda j: miss(grid[j]))
    return _golden(miss, grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)])


def fitted_scale(q, k, v, g) -> float:
    """The scale c of softmax(q kᵀ·c) v closest to `g` on these rows: factors of √2 from 1/16
    to 16 times 1/√D, refined."""
    right = 1 / math.sqrt(q.shape[-1])
    grid = [math.log(right) + t / 2 * math.log(2) for t in range(-8, 9)]
    return math.exp(_best_on_grid(lambda log_c: float((attention(q, k, v, math.exp(log_c)) - g).abs().max()), grid))


def clamped_exp(q, k, v, scale: float, clamp: float):
    """softmax without the max shift, the exponent clamped instead: exp(min(s, clamp)), so every
    score above the clamp weighs the same."""
    p = torch.exp((q @ k.T * scale).clamp(max=clamp))
    return p / p.sum(-1, keepdim=True) @ v


def fitted_clamp(q, k, v, g) -> float | None:
    """The clamp c of exp(min(s, c)) closest to `g` on these rows, from 10 to 88 (exp() of 88
    still fits float32); None where no score reaches 12 (a clamp there changes nothing)."""
    scale = 1 / math.sqrt(q.shape[-1])
    top = float((q @ k.T * scale).max())
    grid = [float(c) for c in range(10, 89, 2) if c < top]
    if len(grid) < 2:
        return None
    return _best_on_grid(lambda c: float((clamped_exp(q, k, v, scale, c) - g).abs().max()), grid)


def keys_phrase(n: int, S: int) -> str:
    """Attention over the first n keys, and the loop that would leave the rest out."""
    head = f"attention over only the first {n} of S = {S} keys"
    if n == S - 1:
        return f"{head}: the last key (j = S-1 = {S - 1}) left out (a key loop that stops one short)"
    tiles = [t for t in TILES if S % t and S // t * t == n]
    if tiles:
        return (f"{head}: the keys from {n} on left out: the last partial tile of K/V (S = {S} is not a multiple of "
                f"{', '.join(map(str, tiles))}) is skipped")
    sizes = [t for t in range(S - n + 1, n + 1) if n % t == 0][:3]    # tiles whose last full one ends at n
    return (f"{head}: the keys from {n} on left out (a key loop that stops early"
            + (f", or the last partial tile of {' or '.join(map(str, sizes))} keys skipped)" if sizes else ")"))


def candidates(S: int, D: int):
    """(phrase, function of a (q, k, v) slice, row-wise) for each wrong formula that applies
    here; row-wise: row i of the output needs only row i of q (a few rows are tried first)."""
    right = 1 / math.sqrt(D)
    out = [("a missing 1/√D scale (softmax(q·kᵀ)·v)", lambda q, k, v: attention(q, k, v, 1.0), True),
           ("a 1/D scale instead of 1/√D (the scale applied twice?)",
            lambda q, k, v: attention(q, k, v, 1 / D), True),
           ("the 1/√D scale applied after the softmax (to the output) instead of to the scores",
            lambda q, k, v: attention(q, k, v, 1.0) * right, True)]
    if D != 64:
        out += [(f"a scale of 1/√64 at D = {D}: is the head dimension hard-coded to 64?",
                 lambda q, k, v: attention(q, k, v, 1 / 8), True),
                (f"q·k summed over only the first 64 of {D} dims: is D = 64 hard-coded?",
                 lambda q, k, v: attention(q[:, :64], k[:, :64], v, right), True)]
    root = math.isqrt(D)
    if root * root != D:                                     # (int)sqrt(D) is not √D
        out.append((f"a scale of 1/{root} instead of 1/√{D} = 1/{math.sqrt(D):.4g}: √D truncated to an integer",
                    lambda q, k, v: attention(q, k, v, 1 / root), True))
    out += [("K read transposed (k[d][j] instead of k[j][d]: q·kᵀ needs row j of k)",
             lambda q, k, v: attention(q, k.reshape(-1).reshape(D, S).T, v, right), True),
            ("V read transposed (v[d][j] instead of v[j][d])",
             lambda q, k, v: attention(q, k, v.reshape(-1).reshape(D, S).T, right), True)]
    if (D - 1) * D + S - 1 < S * D:                          # every x·D + j inside the slice
        out.append(("V indexed with its last two indices swapped (V[..][x][j] instead of V[..][j][x]: the flat "
                    "element x·D + j of the slice, not row j)",
                    lambda q, k, v: attention(q, k, v_swapped(v), right), True))
    out += [("a softmax that is not normalised (no division by the row's sum of exp)",
             lambda q, k, v: attention(q, k, v, right, normalise=False), True),
            ("uniform weights: every row is the mean of V's rows (the scores never reach the softmax, "
             "or the softmax of a constant)", lambda q, k, v: v.mean(0, keepdim=True).expand_as(v), False),
            ("a softmax over the wrong axis (normalised down each column, over the queries, instead of "
             "along each row, over the keys)", lambda q, k, v: column_softmax(q, k, v, right), False),
            ("the max shift taken down each column (each key's max over the queries) instead of along each row: "
             "a shift that differs within a row changes the softmax; subtract each row's own maximum score",
             lambda q, k, v: column_max_shift(q, k, v, right), False)]
    for block in (8, 16, 32, 48, 64, 128):
        if block < S:
            out.append((f"an online softmax over key blocks of {block} whose running sum is rescaled when the max "
                        "grows but whose accumulator is not rescaled (acc *= exp(m_old - m_new) forgotten)",
                        lambda q, k, v, b=block: online_no_rescale(q, k, v, right, b), True))
    repeats: dict = {}
    for t in TILES:
        if S % t and S > t:
            repeats.setdefault(t - S % t + 1, []).append(t)
    for times, tiles in repeats.items():
        out.append((f"the last partial tile of keys read past S, clamped to key S-1 instead of masked: key {S - 1} "
                    f"counted {times} times (tiles of {', '.join(map(str, tiles))}); mask the keys past S out of the "
                    "softmax", lambda q, k, v, n=times: last_key_repeated(q, k, v, right, n), True))
    return out


def fitted_candidates(S: int, D: int, fit: dict):
    """The candidates whose parameter was fitted to the worst slice (`fit`, from fitted): the
    first n keys, a scale, a clamp; tried last, and fitted only when every fixed formula failed."""
    right, out = 1 / math.sqrt(D), []
    if fit.get("keys"):
        n = fit["keys"]
        out.append((keys_phrase(n, S), lambda q, k, v: attention(q, k, v, right, keys=n), True))
    c = fit.get("scale")
    if c and abs(c * math.sqrt(D) - 1) > 1e-3:
        out.append((f"a scale of 1/{1 / c:.3g} instead of 1/√{D} = 1/{math.sqrt(D):.4g} (the best-fitting scale)",
                    lambda q, k, v: attention(q, k, v, c), True))
    clamp = fit.get("clamp")
    if clamp:
        out.append((f"a softmax without the max shift, the exponent clamped at {clamp:.3g} instead (exp(min(s, "
                    f"{clamp:.3g}))): every score above it weighs the same; subtract the row's max before exp()",
                    lambda q, k, v: clamped_exp(q, k, v, right, clamp), True))
    return out


def fitted(got, q, k, v, b: int, h: int, rows, bar: float) -> dict:
    """The n of "the first n keys", the scale and the exponent's clamp that fit `rows` of slice
    (b, h) best (checked like every other formula afterwards). Keys of negligible weight in
    those rows leave several n alike: the best few are tried on the whole slice."""
    qs, g, right = q[b, h][rows], got[b, h][rows], 1 / math.sqrt(q.shape[-1])
    keys = None
    if q.shape[-2] > 1:
        miss = first_keys(qs, k[b, h], v[b, h], g, right)
        near = [int(n) + 1 for n in miss.argsort()[:KEY_TRIES] if float(miss[n]) < bar]
        keys = next((n for n in near if float((attention(q[b, h], k[b, h], v[b, h], right, keys=n)
                                               - got[b, h]).abs().max()) < bar), near[0] if near else None)
    return {"keys": keys, "scale": fitted_scale(qs, k[b, h], v[b, h], g),
            "clamp": fitted_clamp(qs, k[b, h], v[b, h], g)}
