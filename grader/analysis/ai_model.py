"""Arithmetic-intensity model of attention: FLOPs, bytes and AI per kernel (pure, no torch).

    out = softmax(q kᵀ / √D) v,   q, k, v, out: (B, H, S, D), elements of `elem_bytes`

One FLOP convention for the whole grader (the benchmark's TFLOP/s, this model's AI, the
roofline, the speed review flags): FLOPs are the two matrix products, a multiply-add
counting 2, so 4·B·H·S²·D per forward pass. The softmax's work (scale, max, subtract, exp,
sum, divide: 6 operations per score, the scale in the scores kernel and the other 5 in the
softmax kernel) is counted separately, as `other_ops`, and never added to FLOPs (at D = 64
it would add 6/(4·64) = 2.3%). A profiler counts something else again: Nsight Compute's
FP32 "FLOPs" are executed instructions (2·FFMA + FADD + FMUL), so an exp that compiles to
several instructions counts several and a tensor-core product counts none (grader/analysis/ncu.py).

Bytes: each tensor a kernel touches moves between the kernel and memory exactly once per
kernel ("algorithmic" bytes: no re-reads, no caches), reads and writes kept apart. A
profile taken with cold caches (Nsight Compute's default flushes every cache before each
kernel) shows these reads at DRAM; writes can still sit in L2 when a kernel ends and reach
DRAM outside it. With warm caches (kernels back to back) a kernel can find its input in L2
and read less from DRAM. Tiled kernels re-read tiles, so their L2 traffic exceeds the model.

Naive = three kernels (scores, softmax, weighted sum) that write and re-read the S×S
tensors; fused = one kernel that reads q, k, v once and writes out once.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class KernelCost:
    """FLOPs, other operations and bytes of one kernel (or of a sum of kernels)."""
    name: str
    flops: int                                          # the matrix products: 2·(multiply-adds)
    other_ops: dict = field(default_factory=dict)       # softmax work, kind -> count (not FLOPs)
    bytes_read: dict = field(default_factory=dict)      # tensor -> bytes
    bytes_written: dict = field(default_factory=dict)   # tensor -> bytes

    @property
    def reads(self) -> int:
        return sum(self.bytes_read.values())

    @property
    def writes(self) -> int:
        return sum(self.bytes_written.values())

    @property
    def bytes_moved(self) -> int:
        return self.reads + self.writes

    @property
    def ai(self) -> float:
        """FLOP per byte (the convention: matrix-product FLOPs over all bytes moved)."""
        return self.flops / self.bytes_moved

    @property
    def ops_per_byte(self) -> float:
        """Every counted operation (FLOPs + softmax operations) per byte."""
        return (self.flops + sum(self.other_ops.values())) / self.bytes_moved


def _add(a: dict, b: dict) -> dict:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {**a, **b}}


def total(name: str, kernels: list[KernelCost]) -> KernelCost:
    out = KernelCost(name, 0)
    for k in kernels:
        out = KernelCost(name, out.flops + k.flops, _add(out.other_ops, k.other_ops),
                         _add(out.bytes_read, k.bytes_read), _add(out.bytes_written, k.bytes_written))
    return out


def naive(B: int, H: int, S: int, D: int, elem_bytes: int = 4) -> list[KernelCost]:
    """The three kernels of the naive version, in launch order."""
    heads, qkv, ss = B * H, B * H * S * D * elem_bytes, B * H * S * S * elem_bytes
    scores = KernelCost("scores = q kᵀ/√D", flops=2 * heads * S * S * D, other_ops={"scale": heads * S * S},
                        bytes_read={"q": qkv, "k": qkv}, bytes_written={"scores": ss})
    softmax = KernelCost("p = softmax(scores)", flops=0,
                         other_ops={k: heads * S * S for k in ("max", "sub", "exp", "sum", "div")},
                         bytes_read={"scores": ss}, bytes_written={"p": ss})
    weighted = KernelCost("out = p v", flops=2 * heads * S * S * D,
                          bytes_read={"p": ss, "v": qkv}, bytes_written={"out": qkv})
    return [scores, softmax, weighted]


def fused(B: int, H: int, S: int, D: int, elem_bytes: int = 4) -> KernelCost:
    """One kernel: q, k, v read once, out written once; the same arithmetic as naive. The
    online softmax's rescaling (per query row and key tile: D + 2 multiplies and an exp, so
    ~B·H·S·(S/tile)·D in all, 1/(4·tile) of the FLOPs: 0.4% with 64-key tiles) is not counted."""
    qkv = B * H * S * D * elem_bytes
    work = total("fused", naive(B, H, S, D, elem_bytes))
    return KernelCost("fused", work.flops, work.other_ops,
                      bytes_read={"q": qkv, "k": qkv, "v": qkv}, bytes_written={"out": qkv})


def fused_tiled(B: int, H: int, S: int, D: int, block_rows: int, elem_bytes: int = 4) -> KernelCost:
    """A tiled fused kernel whose k and v re-reads all miss the caches: each block of
    `block_rows` query rows reads all of k and v, so k and v move ceil(S / block_rows) times.
    Its AI tends to 2·block_rows / e as S grows (FlashAttention's Θ(S²·D²/M) traffic for an
    on-chip memory of M elements, Dao et al. 2022): the fused AI grows like S / e only while
    those re-reads hit in cache."""
    qkv = B * H * S * D * elem_bytes
    blocks = math.ceil(S / block_rows)
    work = fused(B, H, S, D, elem_bytes)
    return KernelCost(f"fused, {block_rows}-row blocks, k/v re-read", work.flops, work.other_ops,
                      bytes_read={"q": qkv, "k": qkv * blocks, "v": qkv * blocks}, bytes_written={"out": qkv})


def limits(D: int, elem_bytes: int = 4) -> dict:
    """AI (FLOP/byte) as S grows, per kernel: the scores and p·v kernels tend to 2·D/e
    (2·S²·D over about S² elements each), the softmax kernel has no FLOPs (its 5 operations
    per score over 2·e bytes stay at 5 / (2·e) operations per byte whatever S is), the naive
    total S·D / (e·(S + D)) tends to D/e, and the fused kernel's S/e has no limit."""
    return {"scores": 2 * D / elem_bytes, "pv": 2 * D / elem_bytes, "softmax": 0.0,
            "softmax_ops_per_byte": 5 / (2 * elem_bytes), "naive": D / elem_bytes, "fused_per_S": 1 / elem_bytes}


def table(shapes: list[tuple[int, int, int, int]], elem_bytes: int = 4) -> list[dict]:
    """Rows for every shape: per naive kernel, naive total and fused."""
    rows = []
    for B, H, S, D in shapes:
        ks = naive(B, H, S, D, elem_bytes)
        for k in ks + [total("naive (total)", ks), fused(B, H, S, D, elem_bytes)]:
            rows.append({"B": B, "H": H, "S": S, "D": D, "kernel": k.name, "flops": k.flops,
                         "other_ops": sum(k.other_ops.values()), "bytes": k.bytes_moved, "reads": k.reads,
                         "writes": k.writes, "ai": k.ai, "ops_per_byte": k.ops_per_byte})
    return rows


def trend(S_values: list[int], B: int = 1, H: int = 8, D: int = 64, elem_bytes: int = 4) -> dict:
    """How AI moves with S: ratio of the largest-S AI to the smallest-S AI, naive and fused."""
    lo, hi = min(S_values), max(S_values)
    nv = [total("naive", naive(B, H, s, D, elem_bytes)).ai for s in (lo, hi)]
    fu = [fused(B, H, s, D, elem_bytes).ai for s in (lo, hi)]
    return {"S": (lo, hi), "naive_ai": tuple(nv), "fused_ai": tuple(fu),
            "naive_factor": nv[1] / nv[0], "fused_factor": fu[1] / fu[0]}


# ---- the model next to a `make profile` export ----------------------------------------------

RANGE = re.compile(r"(\w+?)_S(\d+)")


def profile_ranges(profiles: list) -> dict:
    """(name, S) -> the kernels of each NVTX range `<name>_S<S>` of one `make profile` export
    (one cache state; tool kernels left out). `profiles` are grader.analysis.ncu.KernelProfile objects
    (or anything with the same fields)."""
    ranges: dict = {}
    for p in profiles:
        m = RANGE.fullmatch(p.nvtx or "")
        if m and not p.tool_kernel:
            ranges.setdefault((m[1], int(m[2])), []).append(p)
    return ranges


def _sum(values: list):
    return None if not values or None in values else sum(values)


def compare(profiles: list, B: int, H: int, D: int, elem_bytes: int = 4) -> list[dict]:
    """The model next to what Nsight Compute measured, per cache state and NVTX range
    `<name>_S<S>` (all kernels of a range summed), counted the same way on both sides:
    reads against reads, writes against writes. Measured: DRAM reads and writes, the reads at
    the L2 level (`l2_delivered`: what the SMs received, each SM's copy, where the export has it;
    `l2_read`: L2's output as ncu's L2 roofline counts it, 32 B × lts2xbar cycles, a line sent to
    many SMs at once counted once; writes into L2 are in neither) and FP32 instruction FLOPs;
    model: the naive and the fused count, and the FLOP convention."""
    rows = []
    for cache in sorted({getattr(p, "cache", "") for p in profiles}, key=lambda c: (c == "warm", c)):
        mine = [p for p in profiles if getattr(p, "cache", "") == cache]
        for (name, S), ps in profile_ranges(mine).items():
            nv, fu = total("naive", naive(B, H, S, D, elem_bytes)), fused(B, H, S, D, elem_bytes)
            rows.append({"range": f"{name}_S{S}", "name": name, "S": S, "cache": cache or "cold", "kernels": len(ps),
                         "dram_read": _sum([p.dram_bytes_read for p in ps]),
                         "dram_write": _sum([p.dram_bytes_write for p in ps]),
                         "l2_read": _sum([p.l2_bytes for p in ps]), "measured_flop": _sum([p.flop for p in ps]),
                         "l2_delivered": _sum([getattr(p, "l2_delivered_bytes", None) for p in ps]),
                         "model_flops": fu.flops, "naive_read": nv.reads, "naive_write": nv.writes,
                         "fused_read": fu.reads, "fused_write": fu.writes,
                         "ss_bytes": B * H * S * S * elem_bytes,
                         "l2_cache_bytes": next((p.l2_cache_bytes for p in ps if p.l2_cache_bytes), None)})
    return rows


def explain_compare(rows: list[dict]) -> list[str]:
    """Why measured and model bytes differ, in sentences, with this export's own numbers."""
    if not rows:
        return []
    S = max(r["S"] for r in rows)
    big = next(r for r in rows if r["S"] == S)
    l2 = big["l2_cache_bytes"]
    l2_text = f"the GPU's {l2 / 2**20:.0f} MiB L2" if l2 else "the GPU's L2"
    lines = ["Cold export (Nsight Compute's default, --cache-control all: every cache flushed before each "
             "kernel): each kernel reads its inputs from DRAM, so DRAM reads match the model's reads, except "
             "where one kernel reads back what another wrote (a key-split kernel's merge re-reads the partial "
             "results: more than the model's reads); what a "
             "kernel writes can still sit in L2 when it ends and is written back outside it, so DRAM writes "
             "fall below the model's writes.",
             *_l2_sentences(rows),
             f"Warm export (--cache-control none, kernels back to back): a kernel can find in L2 what the one "
             f"before it wrote, and read less from DRAM than the model; whether it does depends on size. At "
             f"S = {S} one S×S tensor is {big['ss_bytes'] / 2**20:.0f} MiB and the naive reference keeps two "
             f"(scores and p, {2 * big['ss_bytes'] / 2**20:.0f} MiB) against {l2_text}."]
    naive_row = next((r for r in rows if r["name"] == "naive" and r["S"] == S and r["cache"] == "cold"
                      and r["dram_read"] is not None), None)
    if naive_row:
        lines.append(f"Here, cold: naive at S = {S} read {naive_row['dram_read'] / 1e6:.1f} MB from DRAM against "
                     f"the model's {naive_row['naive_read'] / 1e6:.1f} MB of reads, and wrote "
                     f"{naive_row['dram_write'] / 1e6:.1f} MB against {naive_row['naive_write'] / 1e6:.1f} MB.")
    warm = next((r for r in rows if r["name"] == "naive" and r["S"] == S and r["cache"] == "warm"
                 and r["dram_read"] is not None), None)
    if warm:
        lines.append(f"Here, warm: naive at S = {S} read {warm['dram_read'] / 1e6:.1f} MB from DRAM "
                     f"({100 * warm['dram_read'] / warm['naive_read']:.0f}% of the model's reads).")
    return lines


def _l2_sentences(rows: list[dict]) -> list[str]:
    """What the two L2 columns count and why they differ, with this export's own numbers."""
    out = ["L2→SM (what the SMs received from L2, each SM's copy counted) exceeds the model's reads: tiled "
           "kernels re-read tiles of q, k, v (or of the S×S tensors) once per block of rows. L2 out (Nsight "
           "Compute's L2 roofline traffic, 32 B a lts2xbar cycle) is lower wherever many SMs read the same lines "
           "at once, as the blocks of one head read the same k and v: L2 sends such a line once and every SM "
           "gets its copy. Writes into L2 are in neither."]
    both = [r for r in rows if r["cache"] == "cold" and r.get("l2_delivered") and r["l2_read"]]
    if not both:
        return out + ["This export has no L2→SM bytes (make profile records them since it asks for "
                      "l1tex__m_xbar2l1tex_read_sectors): its L2 column is L2 out, which counts a shared read once."]
    r = max(both, key=lambda r: (r["name"] == "fused", r["S"]))
    ai = ("" if not r["measured_flop"] else
          f" So its AI at L2 is {r['measured_flop'] / r['l2_delivered']:.1f} FLOP/byte counted at the SMs and "
          f"{r['measured_flop'] / r['l2_read']:.1f} counted at L2's output: the roofline's L2 level is L2→SM, the "
          "bytes the kernel consumed.")
    return out + [f"Here, cold: {r['range']} received {r['l2_delivered'] / 1e6:.1f} MB at the SMs, L2 sent out "
                  f"{r['l2_read'] / 1e6:.1f} MB ({r['l2_delivered'] / r['l2_read']:.1f}x); the model's reads are "
                  f"{r['fused_read'] / 1e6:.1f} MB (each byte once)." + ai]


def format_compare(rows: list[dict]) -> str:
    """Table of model vs measured bytes and FLOPs, and why they differ."""
    mb = lambda x: "-" if x is None else f"{x / 1e6:.2f}"  # noqa: E731
    lines = [f"{'cache':<6} {'range':<16} {'kernels':>7} {'DRAM rd MB':>10} {'DRAM wr MB':>10} {'L2→SM MB':>9} "
             f"{'L2 out MB':>9} "
             f"{'naive rd/wr MB':>16} {'fused rd/wr MB':>15} {'ncu GFLOP':>9} {'model GFLOP':>11}"]
    for r in rows:
        gf = "-" if r["measured_flop"] is None else f"{r['measured_flop'] / 1e9:.4f}"
        lines.append(f"{r['cache']:<6} {r['range']:<16} {r['kernels']:>7} {mb(r['dram_read']):>10} "
                     f"{mb(r['dram_write']):>10} {mb(r.get('l2_delivered')):>9} {mb(r['l2_read']):>9} "
                     f"{mb(r['naive_read']) + '/' + mb(r['naive_write']):>16} "
                     f"{mb(r['fused_read']) + '/' + mb(r['fused_write']):>15} {gf:>9} {r['model_flops'] / 1e9:>11.4f}")
    if rows:
        lines += ["", "ncu GFLOP: FP32 instructions (2·FFMA + FADD + FMUL); model GFLOP: the two products "
                  "(4·B·H·S²·D). They differ where a kernel does more than multiply-adds (softmax: exp, sums) "
                  "or multiplies on tensor cores (not counted)."]
        lines += ["- " + line for line in explain_compare(rows)]
    return "\n".join(lines)


def format_table(shapes: list[tuple[int, int, int, int]], elem_bytes: int = 4) -> str:
    lines = [f"{'B,H,S,D':<14} {'kernel':<22} {'GFLOP':>9} {'other Gops':>10} {'MB moved':>10} "
             f"{'AI':>7} {'ops/byte':>9}"]
    for r in table(shapes, elem_bytes):
        shape = f"{r['B']},{r['H']},{r['S']},{r['D']}"
        lines.append(f"{shape:<14} {r['kernel']:<22} {r['flops'] / 1e9:>9.4f} {r['other_ops'] / 1e9:>10.4f} "
                     f"{r['bytes'] / 1e6:>10.3f} {r['ai']:>7.2f} {r['ops_per_byte']:>9.2f}")
    t = trend([s[2] for s in shapes], *shapes[0][:2], shapes[0][3], elem_bytes)
    lim = limits(shapes[0][3], elem_bytes)
    lines += ["", f"from S={t['S'][0]} to S={t['S'][1]}: naive total AI x{t['naive_factor']:.2f} "
              f"({t['naive_ai'][0]:.2f} -> {t['naive_ai'][1]:.2f}, rising toward D/e = {lim['naive']:g}; its scores "
              f"and p·v kernels toward 2·D/e = {lim['scores']:g}, its softmax kernel has no FLOPs), fused AI "
              f"x{t['fused_factor']:.2f} ({t['fused_ai'][0]:.1f} -> {t['fused_ai'][1]:.1f}, S/e)",
              "FLOPs = the two matrix products (multiply-add = 2); softmax operations counted apart (other Gops); "
              "each tensor moved once per kernel, caches ignored"]
    return "\n".join(lines)
