"""The red-team class: every attack on the judge we know of, batch-graded, and what held.

    python tools/redteam.py [DEST] [--gpu]   # make redteam: build the class, grade it, print the table

Each attack is a submission in tests/redteam/ (its docstring says the attack, the defence
and the row it must get: `Expect: status=...; without=...; flags=...; message=...; slowdown_min=...; cost_min_ms=...`
(`status=a|b`: either, where two defences can each decide first);
`open=ISSUE` marks a known hole: the row it should get without flags (`without=`, `without_message=`,
`slowdown_min=`) and does not yet, printed OPEN in every run; every other part still fails, and so
does the entry once the hole holds, so that the mark is dropped), plus
the sandbox escapes of tests/submissions/escape/ and hostile entries of the class folder
itself (links, a FIFO, non-UTF-8 and formula-like names, a folder holding a link, a file
too large). The class is graded like any class (sandbox, hidden config, secret seed), with
a secret in the batch's environment, then checked:

- every row is the expected one (status, flags, message; the verdict a strict flag
  replaced, and its message);
- the batch completed (exit 0, one row per submission);
- no file outside the students' work folders changed (the grader's modules, a canary file,
  the class folder, an earlier batch's OUT);
- no secret (the seed, the hidden shape, the environment's secret, another student's
  source, the hidden file) appears in any student-visible output;
- no process of the batch survives it.
`tests/test_redteam.py` runs the same on `make test`.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ATTACKS = REPO / "tests" / "redteam"
GPU_ATTACKS = ATTACKS / "gpu"          # CUDA attacks (--gpu: graded with --gpus 0)
ESCAPES = REPO / "tests" / "submissions" / "escape"
FAST = REPO / "tests" / "fast_config.toml"
HIDDEN_S = 173
# the hidden S as a figure: 173, not 0.173, 1730, 173.8, a percentage ("sdpa timings spread
# 173%" on a loaded machine was a bench_quality reason, not the shape) or part of a word (a build's
# hash, "attn_cpp_e173bc68e91bd539": b77992e's CI, 2026-11-28)
HIDDEN_S_RE = re.compile(rf"(?<![\w.]){HIDDEN_S}(?!\w|\.\d|\s*%)")
VICTIM_MARKER = "VICTIM_SOURCE_MARKER_7f3a"
HIDDEN_MARKER = "HIDDEN_FILE_MARKER_c41d"
SECRET_ENV = "GRADER_REDTEAM_SECRET"
OPEN = "open"      # a result's `held` for an attack whose Expect names a known hole (open=ISSUE) it still gets through


@dataclass
class Expect:
    status: str
    without: str | None = None
    flags: list = field(default_factory=list)
    message: str = ""
    without_message: str = ""
    slowdown_min: float | None = None
    cost_min_ms: float | None = None
    note: str = ""
    open: str = ""                 # a known hole (the issue that tracks it): the row it should get, not yet got


def _charged_cost(row: dict) -> float | None:
    """A benchmark row's call of the kernel in ms as the tier has it: its median as timed plus
    what the judge charged back (judge_clock.charged_ms), or None."""
    ms = row.get("student_ms")
    clock = row.get("judge_clock") if isinstance(row.get("judge_clock"), dict) else {}
    charged = clock.get("charged_ms", 0.0)
    if not isinstance(ms, (int, float)) or not isinstance(charged, (int, float)):
        return None
    return ms + charged


def parse_expect(text: str) -> Expect:
    """The `Expect:` line of an attack's docstring."""
    m = re.search(r"^Expect: (.*)$", text, re.M)
    if not m:
        raise ValueError("no Expect: line")
    fields = dict(part.strip().split("=", 1) for part in m[1].split(";") if part.strip())
    return Expect(status=fields["status"], without=fields.get("without"),
                  flags=[f for f in fields.get("flags", "").split(",") if f],
                  message=fields.get("message", ""), without_message=fields.get("without_message", ""),
                  slowdown_min=float(fields["slowdown_min"]) if "slowdown_min" in fields else None,
                  cost_min_ms=float(fields["cost_min_ms"]) if "cost_min_ms" in fields else None,
                  open=fields.get("open", ""))


# escapes of tests/submissions/escape: what they must get here
ESCAPE_EXPECT = {
    "read_other": Expect("cheat_suspected", "runtime_error", ["strict:file_access"], "", "held"),
    "write_outside": Expect("cheat_suspected", "runtime_error", ["strict:file_access"], "", "held"),
    "connect": Expect("cheat_suspected", "runtime_error", ["strict:network"], "", "held"),
    "fork_storm": Expect("cheat_suspected", "runtime_error", ["strict:process"], "", "processes"),
    "memory_hog": Expect("runtime_error", None, [], "memory"),
}


@dataclass
class Class:
    """A built red-team class and everything the checks need."""
    subs: Path
    out: Path
    hidden: Path
    seed: int
    secret: str
    canary: Path
    old_out: Path
    expected: dict                 # id -> Expect
    port: int = 9
    gpu: bool = False


def _correct_source() -> str:
    return (ATTACKS / "_correct.inc").read_text()


def build(root: Path, port: int = 9, gpu: bool = False, only: str = "", extra: tuple = ()) -> Class:
    """Write the class under `root`: subs/, hidden.toml, a canary file, an old OUT.
    `only`: a regular expression; the attacks whose entry name it does not match are left
    out (the victim and the hostile file names always stay). `extra`: folders of attacks the
    project does not hold (a held-out set), in the same format, graded as `held_<name>`
    (`held_gpu_<name>` for those of their gpu/ folder, with --gpu)."""
    keep = (lambda name: re.search(only, name) is not None) if only else (lambda name: True)
    if root.exists():
        shutil.rmtree(root)
    subs, out = root / "subs", root / "out"
    subs.mkdir(parents=True)
    seed = secrets.randbelow(10**9) + 10**8
    hidden = root / "hidden.toml"
    hidden.write_text(f"# {HIDDEN_MARKER}\n[correctness]\nseed = {seed}\n[[correctness.configs]]\n"
                      f"B = 1\nH = 2\nS = {HIDDEN_S}\nD = 64\n")
    canary = root / "canary.txt"
    canary.write_text("canary: must never change\n")
    old_out = root / "old_out"
    (old_out / "students" / "victim").mkdir(parents=True)
    (old_out / "students" / "victim" / "results.json").write_text('{"secret": "an earlier batch"}\n')
    victim = subs / "victim"
    victim.mkdir()
    victim_src = ('"""The student every attack tries to read."""\n_CPP_SRC = r"""\n#include <torch/extension.h>\n'
                  f"// {VICTIM_MARKER}\n" + _correct_source() +
                  "torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {\n"
                  "    return correct_attention(q, k, v);\n}\n\"\"\"\n")
    (victim / "attention.py").write_text(victim_src)
    fill = {"@@CORRECT@@": _correct_source(), "@@ELF_LOOKUP@@": (ATTACKS / "_elf_lookup.inc").read_text(),
            "@@GNU_LOOKUP@@": (ATTACKS / "_gnu_lookup.inc").read_text(),
            "@@FLASH_FN@@": (ATTACKS / "_flash_fn.inc").read_text(),
            "@@SOCKET_PROBE@@": (ATTACKS / "_socket_probe.inc").read_text(),
            "@@HIDDEN_SYSCALL@@": (ATTACKS / "_hidden_syscall.inc").read_text(),
            "@@CANARY_FILE@@": str(canary), "@@HIDDEN_FILE@@": str(hidden),
            "@@OTHER_STUDENT@@": str(victim / "attention.py"), "@@OUT@@": str(out), "@@OLD_OUT@@": str(old_out),
            "@@SUBMISSIONS@@": str(subs), "@@REPO@@": str(REPO), "@@PORT@@": str(port),
            "@@TARGET@@": str(victim / "attention.py"),
            "@@TARGETS@@": "|".join([str(out / "pwned.txt"), str(subs / "pwned.txt"), str(REPO / "pwned.txt"),
                                     str(canary)])}
    expected: dict = {"victim": Expect("ok")}
    import importlib.util
    triton = importlib.util.find_spec("triton") is not None
    for path in sorted(ATTACKS.glob("*.py")):
        if not keep(path.stem):
            continue
        if not triton and "_TRITON_SRC" in path.read_text():
            print(f"left out {path.stem}: Triton is not installed in this Python (pip install -e '.[triton]')")
            continue
        _write_attack(path, path.stem, subs, fill, expected)
    for name, want in ESCAPE_EXPECT.items():
        if not keep(f"escape_{name}"):
            continue
        text = (ESCAPES / f"{name}.py").read_text()
        for key, value in fill.items():
            text = text.replace(key, value)
        (subs / f"escape_{name}.py").write_text(text)
        expected[f"escape_{name}"] = want
    fill["@@CORRECT_CUDA@@"] = (GPU_ATTACKS / "_correct_cuda.inc").read_text()
    if gpu:
        for path in sorted(GPU_ATTACKS.glob("*.py")):
            if keep(f"gpu_{path.stem}"):
                _write_attack(path, f"gpu_{path.stem}", subs, fill, expected)
    for folder in extra:
        for sub, prefix, needs_gpu in ((Path(folder), "held_", False), (Path(folder) / "gpu", "held_gpu_", True)):
            for path in sorted(sub.glob("*.py")) if gpu or not needs_gpu else ():
                if keep(f"{prefix}{path.stem}"):
                    _write_attack(path, f"{prefix}{path.stem}", subs, fill, expected)
    expected.update(_hostile_entries(subs, victim))
    return Class(subs=subs, out=out, hidden=hidden, seed=seed, secret=secrets.token_hex(16), canary=canary,
                 old_out=old_out, expected=expected, port=port, gpu=gpu)


def _write_attack(path: Path, name: str, subs: Path, fill: dict, expected: dict) -> None:
    """One attack file into the class as `name`.py, its placeholders filled, its Expect: kept."""
    text = path.read_text()
    expected[name] = parse_expect(text)
    for key, value in fill.items():
        text = text.replace(key, value)
    (subs / f"{name}.py").write_text(text)


def _hostile_entries(subs: Path, victim: Path) -> dict:
    """Entries of the class folder itself that must each be one row, never a stopped batch."""
    bad = (REPO / "tests" / "submissions" / "invalid" / "syntax_error.py").read_text()
    os.symlink(victim / "attention.py", subs / "link_victim.py")
    os.symlink("/etc/shadow", subs / "link_shadow.py")
    os.symlink("/proc/self/mem", subs / "link_procmem.py")
    os.symlink(victim, subs / "link_folder")
    os.mkfifo(subs / "fifo.py")
    inner = subs / "link_inside"
    (inner / "profiles").mkdir(parents=True)
    (inner / "attention.py").write_text(bad)
    os.symlink(victim / "attention.py", inner / "profiles" / "after_raw.csv")
    with open(subs / "huge.py", "wb") as f:          # sparse: 65 MiB that take no disk
        f.truncate(65 << 20)
    (subs / "grades.csv.py").write_text(bad)
    (subs / "=SUM(1,2)*cmd.py").write_text(bad)
    (subs / "new\nline.py").write_text(bad)
    with open(os.path.join(os.fsencode(subs), b"caf\xe9.py"), "w") as f:
        f.write(bad)
    (subs / "notes.txt").write_text("not a submission")
    invalid = lambda msg: Expect("invalid_submission", None, [], msg)  # noqa: E731
    return {"link_victim": invalid("symbolic link"), "link_shadow": invalid("symbolic link"),
            "link_procmem": invalid("symbolic link"), "link_folder": invalid("symbolic link"),
            "fifo": invalid("not a regular file"), "link_inside": invalid("symbolic link"),
            "huge": invalid("bytes"), "grades.csv": invalid("syntax"),
            '=SUM(1,2)*cmd': invalid("syntax"), "~new_line": invalid("syntax"),
            "~caf": invalid("syntax")}


def _matching(rows: dict, sid: str) -> str | None:
    """The row id for an expected id; ids starting with "~" name a sanitised id (prefix match
    on what follows the "~", the id carrying a "~hash" of the raw name)."""
    if sid in rows:
        return sid
    if sid.startswith("~"):
        stem = sid[1:]
        hits = [r for r in rows if "~" in r and r.startswith(stem[:3])]
        return hits[0] if hits else None
    return None


def snapshot(paths: list[Path]) -> dict:
    """sha256 of every regular file under `paths` (links and special files by their lstat)."""
    out = {}
    for root in paths:
        items = [root] if root.is_file() or root.is_symlink() else sorted(root.rglob("*"))
        for p in items:
            st = os.lstat(p)
            if p.is_symlink() or not p.is_file():
                out[str(p)] = f"mode {st.st_mode}"
            else:
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# compiles at once: 2 on a CI runner, up to 8 on a bigger machine (the GPU machine's 16 cores);
# a CPU submission's timing holds every slot whatever the number, so only compiling overlaps
JOBS = max(2, min(8, (os.cpu_count() or 2) // 2))


def _config(cls: Class) -> Path:
    """The fast test config with enough timed rounds at each size (60) for the judge's CPU
    sampling to decide (grader/judge/cpusample.py needs 100 samples of the kernel's calls' time:
    the fast config's 5 rounds at S = 200 give about 8), S = 256 for its larger size, and 4 heads:
    SDPA's calls there ran 3.1-6.0 CPU samples of torch's code each with 2 heads, at the edge of
    the rule comparing a kernel's to them (cpusample.TORCH_WORK_SDPA, 3), 5.7-7.2 with 4."""
    text = FAST.read_text()
    text = re.sub(r"(?m)^S = \[64, 200\]$", "S = [64, 256]", text)
    head, bench = text.split("[benchmark]", 1)
    text = head + "[benchmark]" + re.sub(r"(?m)^H = \d+$", "H = 4", bench, count=1)
    text = re.sub(r"(?m)^min_reps = \d+$", "min_reps = 60", text)
    text = re.sub(r"(?m)^max_reps = \d+$", "max_reps = 60", text)
    path = cls.subs.parent / "config.toml"
    path.write_text(text)
    return path


def run(cls: Class, timeout: float = 3000) -> subprocess.CompletedProcess:
    env = {**os.environ, SECRET_ENV: cls.secret}
    cmd = [sys.executable, "-m", "grader", "batch", str(cls.subs), "--out", str(cls.out), "--config", str(_config(cls)),
           "--hidden", str(cls.hidden), "--jobs", str(JOBS), "--timeout-run", "30", "--memory-limit", "2",
           "--no-pdf"] + (["--gpus", "0"] if cls.gpu else [])
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env)


def _guarded() -> list[Path]:
    return [REPO / "grader", REPO / "tools", REPO / "tests" / "redteam"]


def check(cls: Class, proc: subprocess.CompletedProcess, before: dict) -> list[tuple[str, bool, str]]:
    """(what, held, detail) for every row and every invariant."""
    results: list[tuple[str, bool, str]] = []
    results.append(("the batch completed (exit 0)", proc.returncode == 0,
                    f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"))
    rows = {}
    if (cls.out / "grades.csv").is_file():
        with open(cls.out / "grades.csv", newline="") as f:
            rows = {r["submission"].lstrip("'"): r for r in csv.DictReader(f)}
    for sid, want in cls.expected.items():
        rid = _matching(rows, sid)
        if rid is None:
            results.append((sid, False, "no row in grades.csv"))
            continue
        row = rows[rid]
        doc = _results(cls.out, rid)
        problems = []
        if row["status"] not in want.status.split("|"):
            problems.append(f"status {row['status']} (want {want.status}): {row['message'][:200]}")
        flags = set(row["flags"].split(";")) - {""}
        # "*:code": the flag in any tier (a judge's-clock flag is strict on a quiet machine, review
        # on one other processes kept busy)
        missing = [f for f in want.flags if f not in flags
                   and not (f.startswith("*:") and any(x.split(":", 1)[-1] == f[2:] for x in flags))]
        if missing:
            problems.append(f"flags {sorted(flags)} lack {missing}")
        if want.message and want.message.lower() not in row["message"].lower():
            problems.append(f"message {row['message'][:200]!r} lacks {want.message!r}")
        hole: list = []          # the structural defence's part: what an `open=` mark may excuse
        beneath, beneath_message = structural(doc)
        if want.without and beneath != want.without:
            hole.append(f"verdict without flags {beneath} (want {want.without}): {str(beneath_message)[:200]}")
        if want.without_message and want.without_message.lower() not in str(beneath_message or "").lower():
            hole.append(f"message without flags {str(beneath_message)[:200]!r} lacks {want.without_message!r}")
        if "ESCAPE" in row["message"] or "ESCAPE" in str(beneath_message):
            problems.append("the kernel says it escaped")
        if want.slowdown_min is not None:      # the attack's real cost must show in every size's slowdown
            low = [(b.get("S"), b.get("slowdown")) for b in (doc or {}).get("bench") or []
                   if not (isinstance(b.get("slowdown"), (int, float)) and b["slowdown"] >= want.slowdown_min)]
            if low or not (doc or {}).get("bench"):
                hole.append(f"slowdown below {want.slowdown_min:g} (its real cost hidden): {low or 'no benchmark'}")
        if want.cost_min_ms is not None:       # ... in ms, SDPA's speed aside: its call as timed, plus what was charged
            low = [(b.get("S"), cost) for b in (doc or {}).get("bench") or []
                   if (cost := _charged_cost(b)) is None or cost < want.cost_min_ms]
            if low or not (doc or {}).get("bench"):
                hole.append(f"its call's cost below {want.cost_min_ms:g} ms (its real cost hidden): {low or 'no benchmark'}")
        if want.open and hole and not problems:   # the known hole alone: said in every run, not a regression
            results.append((rid, OPEN, f"OPEN ({want.open}): " + "; ".join(hole)))
            continue
        if want.open and not hole:
            problems.append(f"holds now, though its Expect says open={want.open}: drop open= (and say so in the issue)")
        problems += hole
        results.append((rid, not problems, "; ".join(problems) or f"{row['status']}: {row['message'][:90]}"))
    after = snapshot(_guarded() + [cls.canary, cls.subs, cls.old_out])
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    results.append(("no file outside the work folders changed", not changed, ", ".join(changed[:5])))
    pwned = [p for p in (cls.out / "pwned.txt", cls.subs / "pwned.txt", REPO / "pwned.txt") if p.exists()]
    results.append(("no file written outside (pwned.txt)", not pwned, ", ".join(map(str, pwned))))
    leaks = leaked_secrets(cls)
    results.append(("no secret in any student-visible output", not leaks, "; ".join(leaks[:5])))
    cache = _output(cls.out, "answer_cache")
    results.append(("the answer cache never hit", "CACHE HIT" not in cache, "CACHE HIT printed" if "CACHE HIT" in cache
                    else "fresh inputs for every timed call"))
    flood = (cls.out / "students" / "stdout_flood" / "output.log")
    if "stdout_flood" in cls.expected:                  # (--only may leave an attack out)
        results.append(("the printed output is capped", flood.is_file() and flood.stat().st_size < 64 << 10,
                        f"{flood.stat().st_size if flood.is_file() else 0} bytes kept"))
    shown = []
    for path in sorted((cls.out / "students").glob("*/results.json")):
        doc = json.loads(path.read_text())
        shown += [f"{path.parent.name}: {c['name']}" for c in doc.get("checks", [])
                  if c.get("hidden") and (c.get("max_err") is not None or c.get("config") is not None)]
    results.append(("hidden configs carry no shape and no max_err", not shown, "; ".join(shown[:5])))
    private = cls.out / "instructor" / "hidden_error_leak.json"
    if "hidden_error_leak" in cls.expected:
        kept = private.is_file() and any(c.get("max_err") for c in json.loads(private.read_text())["hidden_checks"])
        results.append(("the instructor keeps the hidden configs' results", kept, str(private)))
    if "hidden_finish_time" in cls.expected:
        results.append(("no student-visible time moves with the hidden phase", *_finish_stamp_held(cls.out)))
    measured = []
    for path in sorted((cls.out / "students").glob("*/results.json")):
        doc = json.loads(path.read_text())
        if "hidden" in (doc.get("stage_seconds") or {}):
            measured.append(f"{path.parent.name}: stage_seconds.hidden")
    results.append(("no time, byte or op count of the hidden phase in student-visible results", not measured,
                    "; ".join(measured[:5])))
    controls = control_characters(cls.out)
    results.append(("no control character in any output (CSV, JSON strings, logs)", not controls,
                    "; ".join(controls[:5])))
    alive = surviving_processes(cls.out)
    results.append(("no process of the batch survives it", not alive, "; ".join(alive[:3])))
    return results


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def control_characters(out: Path) -> list[str]:
    """Every output file (gradebook, results and Gradescope JSON, logs) that would send a
    control character to whoever reads it: raw in the file, or inside a JSON string (which
    `jq -r` prints as it is)."""
    found = []
    for path in sorted(out.rglob("*")):
        if not path.is_file() or path.suffix not in (".csv", ".json", ".log", ".txt", ".md"):
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        texts = [text]
        if path.suffix == ".json":
            try:
                texts = list(_strings(json.loads(text)))
            except ValueError:
                pass
        hit = next((m for t in texts for m in [_CONTROL.search(t)] if m), None)
        if hit:
            found.append(f"{path.relative_to(out)}: {hit.group()!r}")
    return found


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def _finish_stamp_held(out: Path, sid: str = "hidden_finish_time") -> tuple[bool, str]:
    """The attack's batch.json `finished_at` and its files' times no later than the hidden phase's
    start: the instructor's record (written just before batch.json) less the hidden seconds,
    with a few seconds for the files written between them."""
    import datetime
    try:
        private = out / "instructor" / f"{sid}.json"
        hidden_s = float(json.loads(private.read_text()).get("stage_seconds_hidden") or 0.0)
        started_hidden = private.stat().st_mtime - hidden_s
        record = json.loads((out / "students" / sid / "batch.json").read_text())
        stamp = datetime.datetime.strptime(record["finished_at"], "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except (OSError, ValueError, KeyError) as e:
        return False, f"could not read the stamps: {e}"
    files = [p for p in (out / "students" / sid).iterdir() if p.is_file()]
    late = [p.name for p in files if p.stat().st_mtime > started_hidden + 3]
    held = hidden_s > 3 and stamp <= started_hidden + 3 and not late
    return held, (f"hidden phase {hidden_s:.1f} s; finished_at {stamp - started_hidden:+.1f} s from its start; "
                  f"files stamped later: {late or 'none'}")


def structural(doc: dict | None) -> tuple[str | None, str | None]:
    """The verdict and message beneath the flags, as the gradebook scores them: the one a strict
    flag replaced, else the verdict itself (a plain wrong_answer has no `verdict_without_flags`)."""
    doc = doc or {}
    if doc.get("verdict_without_flags"):
        return doc["verdict_without_flags"], doc.get("message_without_flags")
    return doc.get("verdict"), doc.get("message")


def _results(out: Path, sid: str) -> dict | None:
    try:
        return json.loads((out / "students" / sid / "results.json").read_text())
    except (OSError, ValueError):
        return None


def _output(out: Path, sid: str) -> str:
    try:
        return (out / "students" / sid / "output.log").read_text(errors="replace")
    except OSError:
        return ""


# the judge's own counts of public-phase work (rounds, calls, repetitions, the process limit):
# decided before any hidden config exists, so they cannot carry its shape, and any of them may
# happen to equal HIDDEN_S (a CI run saw one do so, 2026-11-25)
PUBLIC_COUNTERS = {"reps", "samples", "rounds", "runs", "checked_calls", "max_processes", "reps_by_S",
                   "checked_calls_by_S", "calls", "cpu_samples_by_S"}


# ... and the same counts said in a flag's words: the CPU samples of the kernel's calls ("(0 against
# 173)": held-out median_mix's flag on 2026-11-28, read as the hidden S), its calls counted
PUBLIC_COUNT_WORDS = re.compile(r"\(\d+ against \d+\)|\d+ of its \d+ timed calls|\d+ and \d+ calls|"
                                r"over the \d+ timings|mapped executable code \d+ time|\d+ of them over")


def _without_public_counters(text: str) -> str:
    """A JSON document's text with the numbers under PUBLIC_COUNTERS, and those PUBLIC_COUNT_WORDS
    say in its strings, left out (other text as it is); the text itself when it is not JSON."""
    try:
        doc = json.loads(text)
    except ValueError:
        return text

    def strip(x, key=""):
        if key in PUBLIC_COUNTERS and not isinstance(x, str):
            return None
        if isinstance(x, dict):
            return {k: strip(v, k) for k, v in x.items()}
        if isinstance(x, list):
            return [strip(v, key) for v in x]
        return PUBLIC_COUNT_WORDS.sub("#", x) if isinstance(x, str) else x
    return json.dumps(strip(doc), indent=1)


def leaked_secrets(cls: Class) -> list[str]:
    """Every student-visible file (OUT/students/*/...) that holds a secret."""
    found = []
    hidden_s = HIDDEN_S_RE
    for path in sorted((cls.out / "students").rglob("*")):
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        if path.suffix == ".pdf":
            try:
                from pypdf import PdfReader
                text = "".join(p.extract_text() for p in PdfReader(path).pages)
            except Exception:  # noqa: BLE001 - no pypdf: the raw bytes are searched
                pass
        shape_text = _without_public_counters(text) if path.suffix == ".json" else text
        shape_hit = hidden_s.search(shape_text) if path.name != "batch.json" else None
        checks = {"the hidden seed": str(cls.seed) in text, "the environment's secret": cls.secret in text,
                  "the hidden file": HIDDEN_MARKER in text, "the hidden shape": bool(shape_hit)}
        if path.parent.name != "victim":
            checks["another student's source"] = VICTIM_MARKER in text
        where = {"the hidden shape": f" ({shape_text[max(0, shape_hit.start() - 60):shape_hit.end() + 20]!r})"
                 if shape_hit else ""}
        found += [f"{path.relative_to(cls.out)}: {what}{where.get(what, '')}" for what, hit in checks.items() if hit]
    return found


def _ancestors() -> set[int]:
    """This process and those that started it (a shell whose own command line names OUT, as a
    GPU session's did on 2026-11-28, is no process of the batch)."""
    seen, pid = set(), os.getpid()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return seen


def surviving_processes(out: Path) -> list[str]:
    """Processes whose command line names the batch's OUT (bwrap's binds do), still alive,
    other than this one and its ancestors."""
    alive, mine = [], _ancestors()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            cmd = Path(f"/proc/{entry.name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(out) in cmd:
            alive.append(f"{entry.name}: {cmd[:120]}")
    return alive


def listen() -> tuple[socket.socket, int]:
    """A local TCP port the connect escape tries (nothing may reach it from the sandbox)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    threading.Thread(target=lambda: [listener.accept() for _ in range(8)], daemon=True).start()
    return listener, listener.getsockname()[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", nargs="?", default=str(REPO / "report" / "redteam"))
    ap.add_argument("--gpu", action="store_true", help="add the CUDA attacks (tests/redteam/gpu) and grade with --gpus 0")
    ap.add_argument("--only", default="", metavar="REGEX", help="only the attacks whose name matches (e.g. '^gpu_')")
    ap.add_argument("--attacks", action="append", default=[], metavar="DIR",
                    help="a folder of attacks the project does not hold (held-out), graded beside the class")
    args = ap.parse_args()
    listener, port = listen()
    cls = build(Path(args.dest).resolve(), port, gpu=args.gpu, only=args.only, extra=tuple(args.attacks))
    print(f"{len(cls.expected)} entries in {cls.subs}; grading (sandboxed, hidden config, secret seed) ...",
          flush=True)
    before = snapshot(_guarded() + [cls.canary, cls.subs, cls.old_out])
    proc = run(cls)
    listener.close()
    results = check(cls, proc, before)
    width = max(len(what) for what, _, _ in results)
    for what, held, detail in results:
        print(f"{'OPEN  ' if held == OPEN else 'held  ' if held else 'FAILED'} {what:<{width}}  {detail}")
    failed = sum(1 for _, held, _ in results if not held)
    known = sum(1 for _, held, _ in results if held == OPEN)
    print(f"\n{len(results) - failed - known} held, {failed} failed, {known} open (known holes, Expect: open=); "
          f"the gradebook: {cls.out / 'grades.csv'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
