"""Where builds and measurements are cached, and the lock two graders take on one folder:
a shared leaf (imports only the config's repo root).

`cache_root()` is $GRADER_CACHE, else `.cache/grader` in the repo (git-ignored);
`shared_root()` a read-only cache looked in first (the batch's sandboxed children);
`_locked(path)` an exclusive flock held while a folder is built or measured.
"""
from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path

from .config import REPO_ROOT


def cache_root() -> Path:
    """Where builds live: $GRADER_CACHE, else `.cache/grader` in the repo (git-ignored)."""
    return Path(os.environ.get("GRADER_CACHE", REPO_ROOT / ".cache" / "grader"))


def shared_root() -> Path | None:
    """A read-only cache to look in first ($GRADER_SHARED_CACHE): in the sandbox, the
    binding module and the reference kernels built once by the batch, outside it."""
    value = os.environ.get("GRADER_SHARED_CACHE")
    return Path(value) if value else None


@contextmanager
def _locked(path: Path):
    """Hold an exclusive lock on `path` (two graders never build one folder at once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
