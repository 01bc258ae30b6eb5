"""Arithmetic-intensity model of attention: FLOPs, bytes and AI per kernel (pure, no torch).

    out = softmax(q kᵀ / √D) v,   q, k, v, out: (B, H, S, D), elements of `elem_bytes`

Assumptions (state them with every number): each tensor a kernel touches moves between
the kernel and memory exactly once per kernel (no re-reads, caches ignored); a
multiply-add counts 2 FLOPs; softmax work is counted by kind (scale, max, subtract,
exp, sum, divide), one operation per element each, separately from the two matrix
products. These are "algorithmic" bytes: a profiler can show fewer DRAM bytes (the
S×S scores of a small problem stay in L2) and more L2/L1 bytes (tiles re-read).

Naive = three kernels (scores, softmax, weighted sum) that write and re-read the S×S
tensors; fused = one kernel that reads q, k, v once and writes out once.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class KernelCost:
    """FLOPs and bytes of one kernel (or of a sum of kernels)."""
    name: str
    matmul_flops: int                     # 2·(multiply-adds) of the matrix products
    softmax_flops: dict = field(default_factory=dict)   # kind -> count (scale, max, sub, exp, sum, div)
    bytes_read: dict = field(default_factory=dict)      # tensor -> bytes
    bytes_written: dict = field(default_factory=dict)   # tensor -> bytes

    @property
    def flops(self) -> int:
        return self.matmul_flops + sum(self.softmax_flops.values())

    @property
    def bytes_moved(self) -> int:
        return sum(self.bytes_read.values()) + sum(self.bytes_written.values())

    @property
    def ai(self) -> float:
        """FLOP per byte, every FLOP counted."""
        return self.flops / self.bytes_moved

    @property
    def ai_matmul(self) -> float:
        """FLOP per byte counting only the matrix products (the usual convention)."""
        return self.matmul_flops / self.bytes_moved


def _add(a: dict, b: dict) -> dict:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {**a, **b}}


def total(name: str, kernels: list[KernelCost]) -> KernelCost:
    out = KernelCost(name, 0)
    for k in kernels:
        out = KernelCost(name, out.matmul_flops + k.matmul_flops, _add(out.softmax_flops, k.softmax_flops),
                         _add(out.bytes_read, k.bytes_read), _add(out.bytes_written, k.bytes_written))
    return out


def naive(B: int, H: int, S: int, D: int, elem_bytes: int = 4) -> list[KernelCost]:
    """The three kernels of the naive version, in launch order."""
    heads, qkv, ss = B * H, B * H * S * D * elem_bytes, B * H * S * S * elem_bytes
    scores = KernelCost("scores = q kᵀ/√D", matmul_flops=2 * heads * S * S * D,
                        softmax_flops={"scale": heads * S * S},
                        bytes_read={"q": qkv, "k": qkv}, bytes_written={"scores": ss})
    softmax = KernelCost("p = softmax(scores)", matmul_flops=0,
                         softmax_flops={k: heads * S * S for k in ("max", "sub", "exp", "sum", "div")},
                         bytes_read={"scores": ss}, bytes_written={"p": ss})
    weighted = KernelCost("out = p v", matmul_flops=2 * heads * S * S * D,
                          bytes_read={"p": ss, "v": qkv}, bytes_written={"out": qkv})
    return [scores, softmax, weighted]


def fused(B: int, H: int, S: int, D: int, elem_bytes: int = 4) -> KernelCost:
    """One kernel: q, k, v read once, out written once; the same arithmetic as naive.
    (Online softmax adds rescaling multiplies, ~S·D per row per key tile: not counted.)"""
    kernels = naive(B, H, S, D, elem_bytes)
    qkv = B * H * S * D * elem_bytes
    all_work = total("fused", kernels)
    return KernelCost("fused", all_work.matmul_flops, all_work.softmax_flops,
                      bytes_read={"q": qkv, "k": qkv, "v": qkv}, bytes_written={"out": qkv})


def limits(D: int, elem_bytes: int = 4) -> dict:
    """Large-S behaviour of the matmul-only AI. naive: 4·S²·D / (e·(4·S·D + 4·S²)) =
    S·D / (e·(S + D)), which rises with S toward D/e (16 for fp32 at D = 64); fused:
    4·S²·D / (e·4·S·D) = S/e, growing without bound."""
    return {"naive_limit": D / elem_bytes, "fused_per_S": 1 / elem_bytes}


def table(shapes: list[tuple[int, int, int, int]], elem_bytes: int = 4) -> list[dict]:
    """Rows for every shape: per naive kernel, naive total and fused FLOPs, bytes, AI."""
    rows = []
    for B, H, S, D in shapes:
        ks = naive(B, H, S, D, elem_bytes)
        for k in ks + [total("naive (total)", ks), fused(B, H, S, D, elem_bytes)]:
            rows.append({"B": B, "H": H, "S": S, "D": D, "kernel": k.name, "flops": k.flops,
                         "matmul_flops": k.matmul_flops, "bytes": k.bytes_moved,
                         "ai": k.ai, "ai_matmul": k.ai_matmul})
    return rows


def trend(S_values: list[int], B: int = 1, H: int = 8, D: int = 64, elem_bytes: int = 4) -> dict:
    """How AI moves with S: ratio of the largest-S AI to the smallest-S AI, naive and fused."""
    lo, hi = min(S_values), max(S_values)
    nv = [total("naive", naive(B, H, s, D, elem_bytes)).ai for s in (lo, hi)]
    fu = [fused(B, H, s, D, elem_bytes).ai for s in (lo, hi)]
    return {"S": (lo, hi), "naive_ai": tuple(nv), "fused_ai": tuple(fu),
            "naive_factor": nv[1] / nv[0], "fused_factor": fu[1] / fu[0]}


def profile_ranges(profiles: list) -> dict:
    """(name, S) -> the kernels of each NVTX range `<name>_S<S>` of a `make profile` export
    (tool kernels left out). `profiles` are grader.ncu.KernelProfile objects (or anything
    with the same fields)."""
    import re
    ranges: dict = {}
    for p in profiles:
        m = re.fullmatch(r"(\w+?)_S(\d+)", p.nvtx or "")
        if m and not p.tool_kernel:
            ranges.setdefault((m[1], int(m[2])), []).append(p)
    return ranges


def compare(profiles: list, B: int, H: int, D: int, elem_bytes: int = 4) -> list[dict]:
    """The model's bytes next to the measured DRAM and L2 bytes, per NVTX range
    `<name>_S<S>` of a `make profile` export (all kernels of a range summed)."""
    rows = []
    for (name, S), ps in profile_ranges(profiles).items():
        dram = [p.dram_bytes for p in ps]
        l2 = [p.l2_bytes for p in ps]
        rows.append({"range": f"{name}_S{S}", "S": S, "kernels": len(ps),
                     "dram_bytes": None if None in dram else sum(dram),
                     "l2_bytes": None if None in l2 else sum(l2),
                     "model_naive_bytes": total("naive", naive(B, H, S, D, elem_bytes)).bytes_moved,
                     "model_fused_bytes": fused(B, H, S, D, elem_bytes).bytes_moved,
                     "ss_bytes": B * H * S * S * elem_bytes,
                     "l2_cache_bytes": next((p.l2_cache_bytes for p in ps if p.l2_cache_bytes), None)})
    return rows


def format_compare(rows: list[dict]) -> str:
    """Table of model vs measured bytes, and why they differ."""
    mb = lambda x: "-" if x is None else f"{x / 1e6:.2f}"  # noqa: E731
    lines = [f"{'range':<16} {'kernels':>7} {'DRAM MB':>9} {'L2 MB':>9} {'model naive MB':>15} {'model fused MB':>15}"]
    for r in rows:
        lines.append(f"{r['range']:<16} {r['kernels']:>7} {mb(r['dram_bytes']):>9} {mb(r['l2_bytes']):>9} "
                     f"{mb(r['model_naive_bytes']):>15} {mb(r['model_fused_bytes']):>15}")
    if rows:
        S = max(r["S"] for r in rows)
        big = next(r for r in rows if r["S"] == S)
        l2 = big["l2_cache_bytes"]
        l2_text = f"the GPU's {l2 / 1e6:.0f} MB L2" if l2 else "the GPU's L2 (50-60 MB on H100/H200)"
        lines += ["", "why they differ: the model counts every tensor once per kernel and ignores caches.",
                  f"- DRAM below the model: at S={S} one S×S tensor is {big['ss_bytes'] / 1e6:.1f} MB; while it "
                  f"fits in {l2_text}, much of what one naive kernel writes is read back by the next from L2 "
                  "and never reaches DRAM; and writes still in L2 when a kernel ends are not yet counted as "
                  "DRAM traffic (so even a fused kernel can show less than q+k+v+out).",
                  "- L2 above the model: tiled kernels re-read each k/v tile once per block of query rows, so "
                  "L2 traffic exceeds the once-per-kernel count for naive and fused kernels alike."]
        naive_row = next((r for r in rows if r["range"].startswith("naive") and r["S"] == S and r["dram_bytes"]), None)
        if naive_row:
            lines.append(f"- here: naive at S={S} moved {naive_row['dram_bytes'] / 1e6:.1f} MB from DRAM against "
                         f"{naive_row['model_naive_bytes'] / 1e6:.1f} MB in the model "
                         f"({100 * naive_row['dram_bytes'] / naive_row['model_naive_bytes']:.0f}%), and "
                         f"{naive_row['l2_bytes'] / 1e6:.1f} MB through L2." if naive_row["l2_bytes"] else "")
    return "\n".join(lines)


def format_table(shapes: list[tuple[int, int, int, int]], elem_bytes: int = 4) -> str:
    lines = [f"{'B,H,S,D':<14} {'kernel':<22} {'GFLOP':>9} {'(matmul)':>9} {'MB moved':>10} "
             f"{'AI':>7} {'AI matmul':>10}"]
    for r in table(shapes, elem_bytes):
        shape = f"{r['B']},{r['H']},{r['S']},{r['D']}"
        lines.append(f"{shape:<14} {r['kernel']:<22} {r['flops'] / 1e9:>9.4f} "
                     f"{r['matmul_flops'] / 1e9:>9.4f} {r['bytes'] / 1e6:>10.3f} {r['ai']:>7.2f} "
                     f"{r['ai_matmul']:>10.2f}")
    t = trend([s[2] for s in shapes], *shapes[0][:2], shapes[0][3], elem_bytes)
    lines += ["", f"from S={t['S'][0]} to S={t['S'][1]}: naive AI x{t['naive_factor']:.2f} "
              f"({t['naive_ai'][0]:.2f} -> {t['naive_ai'][1]:.2f}, rising toward ~D/{elem_bytes} + softmax), "
              f"fused AI x{t['fused_factor']:.2f} ({t['fused_ai'][0]:.1f} -> {t['fused_ai'][1]:.1f}, ~S/{elem_bytes})",
              "assumes each tensor moves once per kernel, caches ignored; multiply-add = 2 FLOPs"]
    return "\n".join(lines)
