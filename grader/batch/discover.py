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
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..config import Config

ZIP_MAX_BYTES = 64 << 20
ZIP_MAX_FILES = 2000
GRADER_KEY_VERSION = "1"


class BatchError(Exception):
    """The batch cannot run (the instructor's input, not a student's)."""


@dataclass(frozen=True)
class Entry:
    id: str              # student id: the entry's name (folder, or file stem)
    path: Path           # as found in SUBMISSIONS_DIR
    kind: str            # folder | py | zip


def discover(folder: Path) -> list[Entry]:
    """Every submission in `folder`, sorted by id; names starting with '.' or '_' and
    files other than .py/.zip (the timestamps CSV, notes) are skipped."""
    if not folder.is_dir():
        raise BatchError(f"{folder} is not a folder: pass the folder holding one subfolder, "
                         ".py or .zip per student")
    entries: dict[str, Entry] = {}
    for p in sorted(folder.iterdir()):
        if p.name.startswith((".", "_")):
            continue
        if p.is_dir():
            kind, sid = "folder", p.name
        elif p.suffix in (".py", ".zip") and p.is_file():
            kind, sid = p.suffix[1:], p.stem
        else:
            continue
        if sid in entries:          # alice/ and alice.zip: keep both, named apart
            sid = p.name
        entries[sid] = Entry(sid, p, kind)
    return [entries[k] for k in sorted(entries)]


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


def submission_key(folder_or_file: Path, cfg: Config, backend: str) -> str:
    """Hash of everything a grade depends on: every file of the submission, the config
    (hidden configs and seed included), the backend asked for, the grader's version."""
    from ..compile import BUILD_VERSION
    h = hashlib.sha256()
    files = [folder_or_file] if folder_or_file.is_file() else sorted(
        p for p in folder_or_file.rglob("*") if p.is_file())
    for p in files:
        h.update(str(p.relative_to(folder_or_file if folder_or_file.is_dir() else p.parent)).encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    h.update(json.dumps(cfg.to_json(), sort_keys=True).encode())
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


