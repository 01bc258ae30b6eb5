"""Header tiers of the compile stage: where a build starts, and what each fallback says.

`grader/build/compile.py` builds a source against the fastest header tier that compiles it:

  proxy  grader/build/prelude_cuda/ (CUDA sources only): declarations whose every call runs
         in the binding module; ~1 s per nvcc pass
  lean   grader/build/prelude/: the real ATen tensor headers without pybind11 and the
         operator library
  full   the real torch headers

A tier changes the compile time, never a verdict: a build that fails in one tier,
whatever the error, is retried in the next, and only the full tier's errors are shown.
This module walks a build through them (`walk`, with the compiler as a callback) and
says why when it moves on:
- `plan` scans the source for what a tier cannot have (an #include it lacks, a
  PYBIND11_MODULE), so no time goes into a build that must fail;
- `Decisions` keeps, per source hash, the fallbacks an earlier build found, so each
  costs once;
- every fallback is one line (`Fallback.text`) naming the `.py` line that caused it and
  the time the next tier will take, from this machine's earlier builds (`Timings`).
"""
from __future__ import annotations

import json
import os
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

PROXY_DIR = Path(__file__).resolve().parent / "prelude_cuda"
TIERS = {"cuda": ("proxy", "lean", "full"), "cpp": ("lean", "full")}
WORDS = {"proxy": "the grader's proxy headers", "lean": "the lean torch headers", "full": "the full torch headers"}

# What a tier usually costs where nothing was measured yet (reference/NOTES.md §1: the
# 2-core CPU machine's nvcc, the H200 machine, the obvious load_inline).
TYPICAL = {"cuda": {"proxy": "typically 3-7 s", "lean": "typically 10-20 s", "full": "typically 45-160 s"},
           "cpp": {"lean": "typically 4-8 s", "full": "typically 30-60 s"}}

_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
_TORCH_HEADER = re.compile(r"^(torch|ATen|c10|caffe2|pybind11)/")
# real headers that define the factory functions the lean prelude defines itself (through
# ATen/Functions.h or one by one), or bring pybind11: the lean tier cannot compile them
_LEAN_CONFLICTS = re.compile(r"^(torch/(python|torch|all|script|library|csrc/.*)\.h|pybind11/.*|"
                             r"ATen/(Functions|NativeFunctions)\.h|"
                             r"ATen/ops/(empty|empty_like|empty_strided|zeros|zeros_like|ones|ones_like|full)\.h)$")
# constructs only the real <torch/extension.h> has (pybind11, the operator registry)
_NEEDS_FULL = re.compile(r"\b(PYBIND11_MODULE|TORCH_LIBRARY\w*|pybind11::|py::)")
# the proxy's optional parts (torch's own header-only templates), compiled in on demand
_NEEDS_HALF = re.compile(r"AT_DISPATCH|Half|BFloat16")
_NEEDS_ACCESSOR = re.compile(r"[Aa]ccessor")


def proxy_headers() -> frozenset[str]:
    """The torch headers the proxy tier stands in for (`ATen/cuda/CUDAContext.h`, ...)."""
    return frozenset(str(p.relative_to(PROXY_DIR)) for p in PROXY_DIR.rglob("*.h")
                     if p.relative_to(PROXY_DIR).parts[0] != "grader_proxy")


def proxy_defines(text: str) -> list[str]:
    """-D flags for the proxy tier: Half/BFloat16 and the accessors only where named."""
    return ((["-DGRADER_PROXY_HALF"] if _NEEDS_HALF.search(text) else [])
            + (["-DGRADER_PROXY_ACCESSOR"] if _NEEDS_ACCESSOR.search(text) else []))


@dataclass(frozen=True)
class Fallback:
    """A move from one tier to the next, and why."""
    from_tier: str
    to_tier: str
    line: int | None      # the .py line that caused it (None: the compiler named none)
    why: str              # the #include or construct, or the compiler's first error
    found: str            # "scan": seen in the source, nothing built; "build": its build failed;
                          # "earlier": an earlier build of this very source failed

    def text(self, file: str, cost: str) -> str:
        """The one line a student sees when this fallback starts."""
        where = f"{file}:{self.line}" if self.line else file
        if self.found == "scan":
            skipped = ("the grader's proxy or lean headers" if (self.from_tier, self.to_tier) == ("proxy", "full")
                       else WORDS[self.from_tier])
            cause = f"{self.why} is not in {skipped}"
        else:
            when = " (in an earlier build of this source)" if self.found == "earlier" else ""
            cause = f"{WORDS[self.from_tier]} did not compile it{when}: {self.why}"
        then = " before reporting an error" if self.to_tier == "full" and self.found != "scan" else ""
        return f"{where}: {cause}; compiling with {WORDS[self.to_tier]}{then} ({cost})"


def plan(lines: list[tuple[int, str]], kind: str) -> list[Fallback]:
    """The tiers a source cannot pass, from its text alone: `lines` are (.py line, source
    line). Returns the fallbacks to take before building anything (none: start at the first)."""
    proxy = proxy_headers()
    order = TIERS[kind]
    first: dict[str, tuple[int, str]] = {}     # tier -> the first (line, why) it cannot have
    for line, text in lines:
        include = _INCLUDE.match(text)
        if include and _TORCH_HEADER.match(include.group(1)):
            header = include.group(1)
            if header not in proxy:
                first.setdefault("proxy", (line, f"#include <{header}>"))
            if _LEAN_CONFLICTS.match(header):
                first.setdefault("lean", (line, f"#include <{header}>"))
        construct = _NEEDS_FULL.search(text.split("//")[0])
        if construct:
            first.setdefault("proxy", (line, construct.group(1)))
            first.setdefault("lean", (line, construct.group(1)))
    out: list[Fallback] = []
    for tier, nxt in zip(order, order[1:]):
        if tier not in first:
            break
        if out and (out[-1].line, out[-1].why) == first[tier]:     # one cause, one line: proxy -> full
            out[-1] = Fallback(out[-1].from_tier, nxt, *first[tier], found="scan")
        else:
            out.append(Fallback(tier, nxt, *first[tier], found="scan"))
    return out


# ---- the walk through the tiers ----------------------------------------------------------

class Stop(Exception):
    """Raised by an attempt that must not go on to the next tier (the compiler timed out)."""

    def __init__(self, log: str):
        super().__init__(log)
        self.log = log


@dataclass(frozen=True)
class Walk:
    """Where a source's walk through the header tiers ended."""
    ok: bool
    tier: str          # the tier that compiled it, or the last one tried (whose log this is)
    log: str           # that tier's raw compiler output ("" when it compiled)
    payload: str       # what a successful attempt returned (the library path)
    fallback: str      # one line per fallback taken ("" when the first tier compiled it)


def walk(kind: str, file: str, lines: list[tuple[int, str]], key: str,
         attempt: Callable[[str], tuple[bool, str, str]], on_note: Callable[[str], None] | None,
         cache: Path) -> Walk:
    """Try the header tiers of `kind` in order: `attempt(tier)` -> (ok, raw log, payload).
    Tiers that the scan of the source (`lines`: (.py line, source line)) or an earlier build
    of it (`key`: its source hash) shows it cannot pass are skipped; every other failure goes
    on to the next tier, so only the last tier's errors count. `on_note` gets each fallback's
    line (`file` is the name the compiler uses) as it starts."""
    order = TIERS[kind]
    decisions, timings = Decisions(cache / "tiers"), Timings(cache)
    fallbacks: list[Fallback] = []
    said: list[str] = []

    def fall(fb: Fallback) -> None:
        fallbacks.append(fb)
        said.append(fb.text(file, timings.estimate(kind, fb.to_tier)))
        if on_note is not None:
            on_note(said[-1])

    earlier = decisions.load(key)
    for fb in earlier if earlier is not None else plan(lines, kind):
        fall(fb)
    start = order.index(fallbacks[-1].to_tier) if fallbacks else 0
    for i, tier in enumerate(order[start:], start=start):
        t0 = time.perf_counter()
        try:
            ok, raw, payload = attempt(tier)
        except Stop as stop:
            return Walk(ok=False, tier=tier, log=stop.log, payload="", fallback="\n".join(said))
        if ok:
            timings.record(kind, tier, time.perf_counter() - t0)
        if ok or i + 1 == len(order):
            decisions.save(key, fallbacks)
            return Walk(ok=ok, tier=tier, log="" if ok else raw, payload=payload, fallback="\n".join(said))
        fall(Fallback(tier, order[i + 1], first_py_line(raw, file), first_error(raw), found="build"))
    raise AssertionError("unreachable: the last tier always returns")


# ---- reading a failed build's log -------------------------------------------------------

def first_py_line(log: str, file: str) -> int | None:
    """The `.py` line a failed build's log blames: its first error in the student's file,
    else the first line of that file the log names (an include, an instantiation)."""
    f = re.escape(file)
    error = re.compile(rf"^{f}(?::(\d+):\d+:|\((\d+)\):) (?:fatal |catastrophic )?error")
    named = re.compile(rf"(?:^|from |at line (\d+) of \"?){f}(?::(\d+)|\((\d+)\))?")
    for line in log.splitlines():
        m = error.match(line)
        if m:
            return int(m.group(1) or m.group(2))
    for line in log.splitlines():
        m = named.search(line)
        if m and any(m.groups()):
            return int(next(g for g in m.groups() if g))
    return None


def first_error(log: str) -> str:
    """The message of a log's first error, one line, at most ~120 characters."""
    for line in log.splitlines():
        m = re.search(r"\b(?:fatal |catastrophic )?error(?: #\S+)?: (.*)", line)
        if m:
            msg = m.group(1).strip()
            return msg if len(msg) <= 120 else msg[:117] + "..."
    return "no error message"


# ---- what this machine remembers ---------------------------------------------------------

class Decisions:
    """The fallbacks found for each source hash (`<root>/<key>.json`): a rebuild of the
    same source, or a check-compile of it, starts where the last one ended."""

    def __init__(self, root: Path):
        self.root = root

    def load(self, key: str) -> list[Fallback] | None:
        try:
            doc = json.loads((self.root / f"{key}.json").read_text())
            return [Fallback(**{**f, "found": "earlier" if f["found"] != "scan" else "scan"})
                    for f in doc["fallbacks"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, key: str, fallbacks: list[Fallback]) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = self.root / f".{key}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps({"fallbacks": [asdict(f) for f in fallbacks]}))
            os.replace(tmp, self.root / f"{key}.json")
        except OSError:            # a read-only cache (the sandbox): the decision is not kept
            pass


class Timings:
    """Seconds of this machine's recent successful builds per kind and tier
    (`<root>/tier_seconds.json`), for the cost a fallback line announces."""
    KEEP = 5

    def __init__(self, root: Path):
        self.path = root / "tier_seconds.json"

    def _read(self) -> dict:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}

    def record(self, kind: str, tier: str, seconds: float) -> None:
        doc = self._read()
        doc[f"{kind}/{tier}"] = (doc.get(f"{kind}/{tier}", []) + [round(seconds, 1)])[-self.KEEP:]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(doc))
            os.replace(tmp, self.path)
        except OSError:
            pass

    def estimate(self, kind: str, tier: str) -> str:
        seen = self._read().get(f"{kind}/{tier}")
        if seen:
            return f"about {statistics.median(seen):.0f} s here"
        return TYPICAL[kind][tier]
