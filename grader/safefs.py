"""Reading files that untrusted code could have written, without being fooled by them.

Every path under a child's work folder may be a symbolic link (to another student's file,
to /etc/shadow, to /proc/self/mem), a FIFO (an open that never returns), a device, or a
file of many gigabytes. `read_regular` opens each component with `O_NOFOLLOW` relative to
the folder before it, opens the file non-blocking, checks on the open descriptor that it
is a regular file, and reads at most a cap: it returns the bytes or raises `UnsafeFile`
with the reason. `list_regular` lists a folder's regular files the same way.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path


class UnsafeFile(Exception):
    """The path is missing, not a regular file, reached through a link, or too large."""


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)


def _open_dir(root: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of root/parts..., no component followed if it is a link (root itself
    is the caller's, trusted)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            if part in ("", ".", "..") or "/" in part:
                raise UnsafeFile(f"bad path component {part!r}")
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                raise UnsafeFile(f"{part}: {e.strerror}") from None
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _split(rel: str | Path) -> tuple[str, ...]:
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute():
        raise UnsafeFile(f"{rel}: not a relative path")
    return parts


def read_regular(root: Path, rel: str | Path, max_bytes: int) -> bytes:
    """The bytes of the regular file root/rel (at most `max_bytes`), or UnsafeFile."""
    parts = _split(rel)
    dfd = _open_dir(Path(root), parts[:-1])
    try:
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=dfd)
        except OSError as e:
            raise UnsafeFile(f"{rel}: {e.strerror}") from None
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"{rel}: not a regular file")
        if st.st_size > max_bytes:
            raise UnsafeFile(f"{rel}: {st.st_size} bytes (at most {max_bytes})")
        os.set_blocking(fd, True)
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise UnsafeFile(f"{rel}: grew past {max_bytes} bytes while being read")
        return data
    finally:
        os.close(fd)


def list_regular(root: Path, rel: str | Path = ".") -> list[str]:
    """Names of the regular files directly in root/rel (links and special files left out)."""
    parts = () if str(rel) in ("", ".") else _split(rel)
    dfd = _open_dir(Path(root), parts)
    try:
        names = []
        with os.scandir(dfd) as it:
            for entry in it:
                if entry.is_file(follow_symlinks=False):
                    names.append(entry.name)
        return sorted(names)
    finally:
        os.close(dfd)
