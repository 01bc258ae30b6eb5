"""Numerics forensics: which precision a kernel most likely computed in, from its error.

The judge knows each public config's inputs and the kernel's max_err against float64. It
computes the same attention itself in each precision a student's kernel may use, and names
the one whose error the kernel's matches across the configs (their sizes, D and the
large-score config move each precision's error differently):

- fp32: every product and sum in float32 (3xTF32 on tensor cores lands here too);
- TF32 or fp16 (10-bit mantissa): q, k rounded before q·kᵀ, p and v before p·v (tensor
  cores' single-pass TF32; fp16 inputs round the same mantissa);
- bf16 (7-bit mantissa): the same with bfloat16 inputs.

A precision is named only when the kernel's error is within a factor of MATCH of that
precision's on every config it was judged on; otherwise nothing is claimed. The policy
(the tolerance on every config) is the course's: the lesson is "passes the easy configs but
computes in TF32: the large-score config fails", said before the student meets it.
Pure functions; tensors float32 in, float64 arithmetic.
"""
from __future__ import annotations

import math

import torch

MATCH = 4.0                  # the kernel's error within this factor of a precision's, on every config
PRECISIONS = (("fp32", None), ("TF32 or fp16 (10-bit mantissa)", 10), ("bf16 (7-bit mantissa)", 7))


def round_mantissa(x: torch.Tensor, bits: int) -> torch.Tensor:
    """`x` rounded to `bits` explicit mantissa bits (round to nearest), as float64."""
    x = x.double()
    m, e = torch.frexp(x)                        # x = m·2^e, 0.5 <= |m| < 1
    scale = 2.0 ** (bits + 1)
    return torch.ldexp(torch.round(m * scale) / scale, e)


def attention_in(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bits: int | None) -> torch.Tensor:
    """softmax(q kᵀ/√D) v as a kernel computing in that precision would: float32 throughout
    (bits None), or the matmuls' inputs rounded to `bits` mantissa bits, accumulated wide."""
    D = q.shape[-1]
    if bits is None:
        s = (q.float() @ k.float().transpose(-1, -2)) * (1.0 / math.sqrt(D))
        p = torch.softmax(s, dim=-1)
        return (p @ v.float()).double()
    r = lambda t: round_mantissa(t, bits)  # noqa: E731
    s = (r(q) @ r(k).transpose(-1, -2)) * (1.0 / math.sqrt(D))
    p = torch.softmax(s, dim=-1)
    return r(p) @ r(v)


def errors_by_precision(q, k, v, expected: torch.Tensor) -> dict[str, float]:
    """{precision: max |attention in it - truth|} on one config's inputs."""
    out = {}
    for name, bits in PRECISIONS:
        got = attention_in(q, k, v, bits)
        err = (got - expected).abs().max()
        out[name] = float(err) if bool(torch.isfinite(err)) else math.inf
    return out


def likely_precision(judged: list[dict], tolerance: float) -> dict:
    """From [{"name", "max_err", "errors": {precision: err}, "passed"}] of the public configs
    whose output was judged: {"precision", "evidence", "lesson"}. fp32 when the kernel's error
    is at most MATCH x fp32's everywhere (float64 accumulation is below it); a reduced
    precision when its error is within a factor of MATCH of the kernel's on every config;
    "mixed" between fp32 and the rest on a kernel that passed; "" (a bug, not rounding) when
    a config failed and nothing matches."""
    usable = [c for c in judged if c.get("max_err") is not None and math.isfinite(c["max_err"])]
    if not usable:
        return {}

    def shown(name):
        return "; ".join(f"{c['name']}: {c['max_err']:.2g} vs {c['errors'][name]:.2g}" for c in usable)
    fp32 = PRECISIONS[0][0]
    if all(c["max_err"] <= MATCH * max(c["errors"][fp32], 1e-9) for c in usable):
        found = {"precision": fp32, "evidence": f"your max_err vs an fp32 computation's: {shown(fp32)}",
                 "lesson": "within the precision policy"}
        if all(c["max_err"] * MATCH < c["errors"][fp32] for c in usable):
            found["better"] = True          # below fp32's own rounding everywhere: float64 sums, or compensated
        return found
    for name, _ in PRECISIONS[1:]:
        ratios = [max(c["max_err"], 1e-12) / max(c["errors"][name], 1e-12) for c in usable]
        if all(1 / MATCH <= x <= MATCH for x in ratios):
            fails = [c["name"] for c in usable if c["errors"][name] >= tolerance]
            if fails:
                lesson = (f"outside the precision policy: at this precision {', '.join(fails)} "
                          f"{'is' if len(fails) == 1 else 'are'} off by more than the tolerance {tolerance:g} "
                          "(large scores magnify q·k's rounding); keep the products and the stored scores in fp32 "
                          "(a score buffer in fp16 or bf16 rounds like products in it), or split each product in "
                          "three (3xTF32)")
            else:
                lesson = ("within the tolerance on these configs, with little margin: larger scores or longer "
                          "rows fail at this precision")
            return {"precision": name, "evidence": f"your max_err vs a {name} computation's: {shown(name)}",
                    "lesson": lesson}
    if all(c.get("passed") for c in usable):
        return {"precision": "mixed", "evidence": f"your max_err vs an fp32 computation's: {shown(fp32)}",
                "lesson": "above fp32's rounding and below the reduced precisions': some products or sums in a "
                          "lower precision?"}
    return {"precision": "", "evidence": "the error matches no precision's: a bug, not rounding", "lesson": ""}
