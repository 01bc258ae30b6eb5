"""Numerics forensics: which precision a kernel most likely computed in, from its error.

The judge knows each public config's inputs and the kernel's max_err against float64. It
computes the same attention itself in each precision a student's kernel may use, and names
the one whose error the kernel's matches across the configs (their sizes, D and the
large-score config move each precision's error differently):

- fp32: every product and sum in float32 (3xTF32 on tensor cores lands here too);
- TF32 or fp16 (10-bit mantissa): q, k rounded to nearest before q·kᵀ, p and v before p·v
  (CUDA's cvt.rna.tf32.f32 before a TF32 tensor-core product; fp16 inputs round the same
  mantissa);
- TF32 truncated: the same mantissa with the low bits dropped instead: what the tensor cores
  make of float32 operands handed over unconverted, as Triton's default `tl.dot` does (on an
  H100 it fails every public config: reference/NOTES.md);
- bf16 (7-bit mantissa): the same with bfloat16 inputs. A kernel in fp16 throughout (products,
  exp() and sums in __half) lands here too: on an H200 its error matched bf16's on every
  config (held-out set of 2026-11-27), so the message names both (`rounding_phrase`).

A precision is named only when the kernel's error is within a factor of MATCH of that
precision's on every config it was judged on (the closest one when several are: rounded and
truncated TF32 are ~4x apart); otherwise nothing is claimed. The policy (the tolerance on
every config, the arithmetic [precision] allows) is the course's: the lesson is "passes the
easy configs but computes in TF32: the large-score config fails", said before the student
meets it. Pure functions; tensors float32 in, float64 arithmetic.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..core.config import PRECISIONS as POLICY

MATCH = 4.0                  # the kernel's error within this factor of a precision's, on every config


@dataclass(frozen=True)
class Arithmetic:
    name: str                  # as results.json's numerics.precision says it (grader/SCHEMA.md)
    bits: int | None           # explicit mantissa bits of the products' inputs; None: float32
    truncate: bool = False     # the low bits dropped instead of rounded to nearest
    policy: str | None = None  # its name in [precision] allowed (grader/core/config.py); None: not there


PRECISIONS = (Arithmetic("fp32", None, policy="fp32"),
              Arithmetic("TF32 or fp16 (10-bit mantissa)", 10, policy="tf32"),
              Arithmetic("TF32 truncated (Triton's default tl.dot)", 10, truncate=True, policy="tf32"),
              Arithmetic("bf16 (7-bit mantissa)", 7))


def round_mantissa(x: torch.Tensor, bits: int, truncate: bool = False) -> torch.Tensor:
    """`x` rounded to `bits` explicit mantissa bits (to nearest; or toward zero, the low bits
    dropped, with `truncate`), as float64."""
    x = x.double()
    m, e = torch.frexp(x)                        # x = m·2^e, 0.5 <= |m| < 1
    scale = 2.0 ** (bits + 1)
    return torch.ldexp((torch.trunc if truncate else torch.round)(m * scale) / scale, e)


def attention_in(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bits: int | None,
                 truncate: bool = False) -> torch.Tensor:
    """softmax(q kᵀ/√D) v as a kernel computing in that precision would: float32 throughout
    (bits None), or the matmuls' inputs rounded (or truncated) to `bits` mantissa bits,
    accumulated wide."""
    D = q.shape[-1]
    if bits is None:
        s = (q.float() @ k.float().transpose(-1, -2)) * (1.0 / math.sqrt(D))
        p = torch.softmax(s, dim=-1)
        return (p @ v.float()).double()
    r = lambda t: round_mantissa(t, bits, truncate)  # noqa: E731
    s = (r(q) @ r(k).transpose(-1, -2)) * (1.0 / math.sqrt(D))
    p = torch.softmax(s, dim=-1)
    return r(p) @ r(v)


def errors_by_precision(q, k, v, expected: torch.Tensor) -> dict[str, float]:
    """{precision: max |attention in it - truth|} on one config's inputs."""
    out = {}
    for a in PRECISIONS:
        err = (attention_in(q, k, v, a.bits, a.truncate) - expected).abs().max()
        out[a.name] = float(err) if bool(torch.isfinite(err)) else math.inf
    return out


KEEP_FP32 = ("keep the products and the stored scores in fp32 (a score buffer in fp16 or bf16 rounds like "
             "products in it), or split each product in three (3xTF32)")


def rounding_phrase(precision: str) -> str:
    """How a wrong config's message names a reduced precision the numerics matched."""
    if precision == PRECISIONS[3].name:
        return (f"the error is as large as a {precision} computation's rounding: a 16-bit float computation "
                "(bf16 inputs, or fp16 with its sums or exp() kept in fp16) (see numerics)")
    return f"the error is the rounding of a {precision} computation (see numerics)"


def _lesson(a: Arithmetic, fails: list[str], tolerance: float, allowed: tuple) -> str:
    """What a kernel that computed in `a` should learn, given the configs `a` fails."""
    if not fails:
        return ("within the tolerance on these configs, with little margin: larger scores or longer rows fail "
                "at this precision")
    which = ", ".join(fails)
    misses = f"{which} {'misses' if len(fails) == 1 else 'miss'} the tolerance {tolerance:g}"
    if a.truncate:
        return (f"Triton's default TF32: tl.dot truncates float32 operands to TF32, and at this precision "
                f"{misses}; set input_precision=\"ieee\" (fp32) or \"tf32x3\" in every tl.dot")
    if a.policy in allowed:
        return (f"at this precision {misses} (TF32 is allowed, but it cannot pass {which}: large scores "
                f"magnify q·k's rounding); {KEEP_FP32}")
    return (f"outside the precision policy: at this precision {misses} (large scores magnify q·k's "
            f"rounding); {KEEP_FP32}")


def likely_precision(judged: list[dict], tolerance: float, allowed: tuple = POLICY) -> dict:
    """From [{"name", "max_err", "errors": {precision: err}, "passed"}] of the public configs
    whose output was judged: {"precision", "evidence", "lesson"}. fp32 when the kernel's error
    is at most MATCH x fp32's everywhere (float64 accumulation is below it); a reduced
    precision when its error is within a factor of MATCH of the kernel's on every config (of
    several, the one with the smallest worst ratio); "mixed" between fp32 and the rest on a
    kernel that passed; "" (a bug, not rounding) when a config failed and nothing matches.
    `allowed`: the policy's arithmetic ([precision] allowed), which the lesson goes by."""
    usable = [c for c in judged if c.get("max_err") is not None and math.isfinite(c["max_err"])]
    if not usable:
        return {}

    def shown(name):
        return "; ".join(f"{c['name']}: {c['max_err']:.2g} vs {c['errors'][name]:.2g}" for c in usable)
    fp32 = PRECISIONS[0].name
    if all(c["max_err"] <= MATCH * max(c["errors"][fp32], 1e-9) for c in usable):
        found = {"precision": fp32, "evidence": f"your max_err vs an fp32 computation's: {shown(fp32)}",
                 "lesson": "within the precision policy"}
        if all(c["max_err"] * MATCH < c["errors"][fp32] for c in usable):
            found["better"] = True          # below fp32's own rounding everywhere: float64 sums, or compensated
        return found
    fits = []
    for a in PRECISIONS[1:]:
        ratios = [max(c["max_err"], 1e-12) / max(c["errors"][a.name], 1e-12) for c in usable]
        if all(1 / MATCH <= x <= MATCH for x in ratios):
            fits.append((max(abs(math.log(x)) for x in ratios), a))
    if fits:
        a = min(fits, key=lambda f: f[0])[1]
        fails = [c["name"] for c in usable if c["errors"][a.name] >= tolerance]
        return {"precision": a.name, "evidence": f"your max_err vs a {a.name} computation's: {shown(a.name)}",
                "lesson": _lesson(a, fails, tolerance, allowed)}
    if all(c.get("passed") for c in usable):
        return {"precision": "mixed", "evidence": f"your max_err vs an fp32 computation's: {shown(fp32)}",
                "lesson": "above fp32's rounding and below the reduced precisions': some products or sums in a "
                          "lower precision?"}
    return {"precision": "", "evidence": "the error matches no precision's: a bug, not rounding", "lesson": ""}
