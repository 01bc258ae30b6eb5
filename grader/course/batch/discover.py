"""Batch, discovery: which submissions a class folder holds, and the key of each grade.

A class folder holds one entry per student, named by the student id: a folder (one `.py`,
optionally `report.md` and `profiles/`), a bare `.py`, or a `.zip` of either. `discover`
lists them, `shard_of` slices them for a cluster array, `extract_zip` unpacks a zip
safely, `submission_key` hashes everything a grade depends on (for resume), and
`read_timestamps` reads the submission times.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ...core.config import Config

ZIP_MAX_BYTES = 64 << 20
ZIP_MAX_FILES = 2000
GRADER_KEY_VERSION = "1"


class BatchError(Exception):
    """The batch cannot run (the instructor's input, not a student's)."""


@dataclass(frozen=True)
class Entry:
    id: str              # student id: the entry's name (folder, or file stem), made safe (safe_id)
    path: Path           # as found in SUBMISSIONS_DIR
    kind: str            # folder | py | zip | invalid
    problem: str = ""    # kind "invalid": why it cannot be graded (a one-line gradebook message)


SUBMISSION_MAX_BYTES = ZIP_MAX_BYTES       # a folder or .py holds at most this much
SUBMISSION_MAX_FILES = ZIP_MAX_FILES
_SAFE_ID = re.compile(r"^[^\x00-\x1f\x7f/\\]{1,120}$")


def safe_id(name: str) -> str:
    """A student id fit for a folder name, a CSV cell and a report: the entry's name when it
    is printable text without control characters; otherwise its printable part and a hash
    of its bytes (a non-UTF-8 name, a newline in it: two such names never collide). Cells
    that start like a formula are neutralised by the gradebook, not here."""
    raw = os.fsencode(name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and _SAFE_ID.match(text) and text not in (".", ".."):
        return text
    shown = re.sub(r"[\x00-\x1f\x7f/\\]", "_", raw.decode("utf-8", "replace").replace("\ufffd", "?"))[:80]
    return f"{shown}~{hashlib.sha256(raw).hexdigest()[:8]}"


def discover(folder: Path) -> list[Entry]:
    """Every submission in `folder`, sorted by id (`discover_all` also says what it left out)."""
    return discover_all(folder)[0]


def discover_all(folder: Path) -> tuple[list[Entry], list[str]]:
    """(entries, one line per name not graded). Nothing is followed: a symbolic link or a
    special file (FIFO, device, socket) named like a submission is an `invalid` entry (a
    gradebook row saying why); names starting with '.' or '_' and files other than
    .py/.zip (the timestamps CSV, notes) are listed as not graded."""
    try:
        st = os.stat(folder)
    except OSError:
        st = None
    if st is None or not stat.S_ISDIR(st.st_mode):
        raise BatchError(f"{folder} is not a folder: pass the folder holding one subfolder, "
                         ".py or .zip per student")
    entries: dict[str, Entry] = {}
    skipped: list[str] = []
    for name in sorted(os.listdir(folder)):
        p = Path(folder) / name
        shown = safe_id(name)
        try:
            mode = os.lstat(p).st_mode
        except OSError as e:
            skipped.append(f"{shown}: cannot be read ({e.strerror})")
            continue
        if name.startswith((".", "_")):
            skipped.append(f"{shown}: ignored (names starting with '.' or '_' are not submissions)")
            continue
        stem, suffix = os.path.splitext(name)
        looks = stat.S_ISDIR(mode) or suffix in (".py", ".zip")
        if stat.S_ISLNK(mode) or not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            what = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file or folder"
            if looks or stat.S_ISLNK(mode):
                sid = safe_id(stem if suffix in (".py", ".zip") else name)
                entry = Entry(sid, p, "invalid", f"{shown} is {what}: hand in a folder, a .py or a .zip itself")
            else:
                skipped.append(f"{shown}: {what}, not graded")
                continue
        elif stat.S_ISDIR(mode):
            entry = Entry(safe_id(name), p, "folder")
        elif suffix in (".py", ".zip"):
            entry = Entry(safe_id(stem), p, suffix[1:])
        else:
            skipped.append(f"{shown}: not a submission (a folder, .py or .zip), not graded")
            continue
        sid = entry.id
        if sid in entries:          # alice/ and alice.zip: keep both, named apart
            sid = safe_id(name)
            if sid in entries:
                sid = f"{sid}~{hashlib.sha256(os.fsencode(name)).hexdigest()[:8]}"
        entries[sid] = Entry(sid, entry.path, entry.kind, entry.problem)
    return [entries[k] for k in sorted(entries)], skipped


def stage(entry: Entry, dest: Path) -> Path:
    """A copy of a folder or .py submission under `dest` (the batch's, out of every
    student's reach), read without following anything: each file opened with O_NOFOLLOW
    and checked to be regular, at most SUBMISSION_MAX_FILES files and SUBMISSION_MAX_BYTES
    in all. Grading reads only the copy, so the class folder cannot change under it.
    Raises ValueError with the reason (the row's message)."""
    from ...isolation.safefs import UnsafeFile, read_regular
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if entry.kind == "py":
        try:
            data = read_regular(entry.path.parent, entry.path.name, SUBMISSION_MAX_BYTES)
        except UnsafeFile as e:
            raise ValueError(f"{entry.id}: {e}") from None
        target = dest / f"{entry.id}.py"          # the id is safe; the name may not be
        target.write_bytes(data)
        return target
    total, count = 0, 0
    root = entry.path
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel = Path(dirpath).relative_to(root)
        for name in list(dirnames) + filenames:
            count += 1
            if count > SUBMISSION_MAX_FILES:
                raise ValueError(f"{entry.id}: holds more than {SUBMISSION_MAX_FILES} files")
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            shown = safe_id(str(rel / name))
            if stat.S_ISLNK(mode):
                raise ValueError(f"{entry.id}: {shown} is a symbolic link (hand in the file itself)")
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise ValueError(f"{entry.id}: {shown} is not a regular file")
            if safe_id(name) != name:
                raise ValueError(f"{entry.id}: the file name {shown} has characters a submission cannot use")
            if stat.S_ISDIR(mode):
                (dest / rel / name).mkdir(parents=True, exist_ok=True)
                continue
            try:
                data = read_regular(root, rel / name, SUBMISSION_MAX_BYTES - total)
            except UnsafeFile as e:
                raise ValueError(f"{entry.id}: {e} (at most {SUBMISSION_MAX_BYTES >> 20} MiB in all)") from None
            total += len(data)
            (dest / rel).mkdir(parents=True, exist_ok=True)
            (dest / rel / name).write_bytes(data)
    return dest


def shard_of(entries: list[Entry], k: int, n: int) -> list[Entry]:
    """Slice K of N (1-based), by position in the sorted list: stable across machines."""
    return [e for i, e in enumerate(entries) if i % n == k - 1]


def extract_zip(path: Path, dest: Path) -> Path:
    """Unpack a .zip safely into `dest`: no absolute paths, no `..`, no links, bounded
    size and count. Returns the folder that holds the submission (a single top folder is
    descended into). Raises ValueError with the reason."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise ValueError(f"{path.name} is not a readable zip file ({e})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > ZIP_MAX_FILES:
            raise ValueError(f"{path.name} holds {len(infos)} files (at most {ZIP_MAX_FILES})")
        if sum(i.file_size for i in infos) > ZIP_MAX_BYTES:
            raise ValueError(f"{path.name} unpacks to more than {ZIP_MAX_BYTES >> 20} MiB")
        for info in infos:
            name = info.filename
            parts = Path(name).parts
            if name.startswith("/") or ".." in parts or ":" in name:
                raise ValueError(f"{path.name}: unsafe path {name!r} in the zip")
            if stat.S_ISLNK(info.external_attr >> 16):
                raise ValueError(f"{path.name}: {name!r} is a symbolic link")
            if parts and parts[0] == "__MACOSX":
                continue
            target = dest / name
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
    children = [c for c in dest.iterdir() if c.name != "__MACOSX"]
    if len(children) == 1 and children[0].is_dir():
        return children[0]
    return dest


# what a config holds that the grade does not depend on: where it was read from (`batch --config
# FILE` with the same content is the same grade: a deadline or points change, in place or in
# another file, regrades nothing). The file's [precision] policy, which the grade reads through
# that path, is keyed instead. The tier boundaries stay keyed: the timing runs until its interval
# is clear of them, so new boundaries are timed again
_NOT_KEYED = ("source",)


def submission_key(folder_or_file: Path, cfg: Config, backend: str) -> str:
    """Hash of everything a grade depends on: every file of the submission, the config
    (hidden configs and seed included; not `_NOT_KEYED`), the backend asked for, the grader's
    version."""
    from ...build.compile import BUILD_VERSION
    h = hashlib.sha256()
    files = [folder_or_file] if folder_or_file.is_file() else sorted(
        p for p in folder_or_file.rglob("*") if p.is_file())
    for p in files:
        h.update(str(p.relative_to(folder_or_file if folder_or_file.is_dir() else p.parent)).encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    from ...core.config import load_precision
    keyed = {k: v for k, v in cfg.to_json().items() if k not in _NOT_KEYED}
    try:
        keyed["precision_allowed"] = list(load_precision(cfg.source).allowed) if cfg.source else None
    except Exception:  # noqa: BLE001 - the grade says what is wrong with the file
        keyed["precision_allowed"] = "unreadable"
    h.update(json.dumps(keyed, sort_keys=True).encode())
    h.update(f"{backend}|{BUILD_VERSION}|{GRADER_KEY_VERSION}".encode())
    return h.hexdigest()[:20]


def read_timestamps(path: Path | None) -> dict[str, str]:
    """submission -> submitted_at from a CSV with those two columns (header required)."""
    import csv
    if path is None or not path.is_file():
        return {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or not {"submission", "submitted_at"} <= set(reader.fieldnames):
            raise BatchError(f"{path}: needs a header with the columns submission,submitted_at")
        return {r["submission"].strip(): r["submitted_at"].strip() for r in reader if r.get("submission")}


