"""Similarity of the kernels of a class: winnowing fingerprints, like MOSS.

Each kernel source (`_CPP_SRC` / `_CUDA_SRC`, as graded) is lexed by Pygments' C++/CUDA
lexer; comments and whitespace are dropped, every identifier becomes `N`, every number
`#` and every string `S`, so renaming variables, reformatting or rewording comments
changes nothing. The token stream is cut into k-grams, each hashed, and winnowing keeps
the smallest hash of every window of w hashes (Schleimer, Wilkerson and Aiken, "Winnowing:
local algorithms for document fingerprinting", SIGMOD 2003): any run of at least
w + k - 1 tokens two kernels share leaves a fingerprint in both. Fingerprints of the
handout's template are removed first, so the lines every student starts from match
nobody.

The score of a pair is the share of the smaller kernel's fingerprints found in the other
(1.0: one kernel is contained in the other). A high score is a reason to read both
sources, never a verdict: kernels for one small problem converge.
"""
from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

K_TOKENS = 10          # k-gram length in tokens (shorter matches are noise: `for (int N = # ; N < N ; ...`)
WINDOW = 8             # winnowing window: every shared run of >= WINDOW + K_TOKENS - 1 = 17 tokens is found
MIN_FINGERPRINTS = 8   # kernels with fewer (after the template is removed) are not compared
REPORT_ABOVE = 0.5     # summary.pdf lists the pairs at or above this score


@dataclass(frozen=True)
class Fingerprints:
    student: str
    kind: str                          # cpp | cuda
    lines: dict                        # hash -> source lines (1-based) where the k-gram starts


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    kind: str
    score: float                       # shared / fingerprints of the smaller kernel, 0..1
    shared: int
    size_a: int
    size_b: int
    lines_a: str                       # lines of a holding shared fingerprints, e.g. "12-30, 41"
    lines_b: str


def tokens(source: str, kind: str) -> list[tuple[str, int]]:
    """(normalised token, line) of a C++ or CUDA source, comments and layout dropped."""
    from pygments.lexers import CppLexer, CudaLexer
    from pygments.token import Comment, Literal, Name, Text
    lexer = CudaLexer() if kind == "cuda" else CppLexer()
    out, line = [], 1
    for _, tok, text in lexer.get_tokens_unprocessed(source):
        start = line
        line += text.count("\n")
        if tok in Text or tok in Comment.Single or tok in Comment.Multiline or not text.strip():
            continue
        if tok in Comment.Preproc or tok in Comment.PreprocFile:     # #include, #define: keep the words
            norm = " ".join(text.split())
        elif tok in Name:
            norm = "N"
        elif tok in Literal.Number:
            norm = "#"
        elif tok in Literal.String or tok in Literal.Char:
            norm = "S"
        else:
            norm = text.strip()
        out.append((norm, start))
    return out


def _hash(gram: tuple[str, ...]) -> int:
    return int.from_bytes(hashlib.blake2b("\x1f".join(gram).encode(), digest_size=8).digest(), "big")


def winnow(toks: list[tuple[str, int]], k: int = K_TOKENS, w: int = WINDOW) -> dict[int, set[int]]:
    """hash -> lines: the smallest k-gram hash of every window of `w` (the rightmost on ties)."""
    grams = [(_hash(tuple(t for t, _ in toks[i:i + k])), toks[i][1]) for i in range(len(toks) - k + 1)]
    picked: dict[int, set[int]] = {}
    last = -1
    for start in range(max(1, len(grams) - w + 1)):
        window = grams[start:start + w]
        if not window:
            break
        best = min(range(len(window)), key=lambda i: (window[i][0], -i))
        if start + best != last:
            last = start + best
            h, line = grams[last]
            picked.setdefault(h, set()).add(line)
    return picked


def fingerprints(student: str, kind: str, source: str, template: set[int] = frozenset()) -> Fingerprints:
    """A kernel's fingerprints without the template's."""
    return Fingerprints(student, kind, {h: lines for h, lines in winnow(tokens(source, kind)).items()
                                        if h not in template})


def template_hashes(template_py: Path) -> dict[str, set[int]]:
    """kind -> fingerprints of the handout's template kernels (the lines everyone starts from)."""
    from ..build.parse import parse
    sub = parse(template_py)
    return {kind: set(winnow(tokens(src.text, kind))) for kind, src in (sub.sources or {}).items()}


def _ranges(lines: set[int]) -> str:
    out, run = [], []
    for n in sorted(lines):
        if run and n > run[-1] + 1:
            out.append(run)
            run = []
        run.append(n)
    if run:
        out.append(run)
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in out)


def compare(sources: dict[str, dict[str, str]], template: dict[str, set[int]] | None = None) -> list[Pair]:
    """Every pair of kernels of the same kind, most similar first. `sources`: student ->
    {kind: source}; `template`: kind -> fingerprints to ignore."""
    template = template or {}
    prints: dict[str, list[Fingerprints]] = {}
    for student, kinds in sorted(sources.items()):
        for kind, text in sorted(kinds.items()):
            fp = fingerprints(student, kind, text, template.get(kind, set()))
            if len(fp.lines) >= MIN_FINGERPRINTS:
                prints.setdefault(kind, []).append(fp)
    pairs = []
    for kind, fps in prints.items():
        for a, b in combinations(fps, 2):
            shared = a.lines.keys() & b.lines.keys()
            if not shared:
                continue
            score = len(shared) / min(len(a.lines), len(b.lines))
            pairs.append(Pair(a.student, b.student, kind, round(score, 4), len(shared), len(a.lines), len(b.lines),
                              _ranges(set().union(*(a.lines[h] for h in shared))),
                              _ranges(set().union(*(b.lines[h] for h in shared)))))
    pairs.sort(key=lambda p: (-p.score, -p.shared, p.a, p.b))
    return pairs


def class_sources(docs: list[dict]) -> dict[str, dict[str, str]]:
    """student -> {kind: kernel source} from results documents (those that parsed)."""
    return {d["submission"]["name"]: dict(d.get("sources") or {}) for d in docs if d.get("sources")}


def to_csv(pairs: list[Pair]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["rank", "a", "b", "kernel", "similarity", "shared_fingerprints", "fingerprints_a",
                "fingerprints_b", "lines_a", "lines_b"])
    from ..score.gradebook import cell
    for i, p in enumerate(pairs, start=1):
        w.writerow([i, cell(p.a), cell(p.b), p.kind, p.score, p.shared, p.size_a, p.size_b, p.lines_a, p.lines_b])
    return buf.getvalue()


def format_table(pairs: list[Pair], top: int = 20) -> str:
    if not pairs:
        return "no two kernels share a fingerprint beyond the template"
    out = [f"{'#':>3}  {'a':<20} {'b':<20} {'kernel':<6} {'similarity':>10} {'shared':>7}  lines (a | b)"]
    for i, p in enumerate(pairs[:top], start=1):
        out.append(f"{i:>3}  {p.a:<20} {p.b:<20} {p.kind:<6} {p.score:>10.0%} {p.shared:>7}  {p.lines_a} | {p.lines_b}")
    if len(pairs) > top:
        out.append(f"... {len(pairs) - top} more pairs in similarity.csv")
    return "\n".join(out)
