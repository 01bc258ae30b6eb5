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


# ---- a child's whole folder: measured and removed however deep it goes -------------------------
# A folder tree can be deeper than PATH_MAX (2 600 levels made with mkdirat, each a relative
# step): a path-based walk then fails past the limit (and counted nothing there: it failed
# open), and shutil.rmtree recursed until Python's recursion limit (a grader_error and no
# gradebook row). Both below work on descriptors, one directory level at a time, iteratively.
MAX_DEPTH = 256          # deeper than this, a child's folder is a breach (a build is ~10 deep)


def folder_usage(root: Path, max_entries: int) -> tuple[int, int, bool]:
    """(bytes, entries, too_deep) of the tree under `root`, never following links, stopping
    after `max_entries` entries or at MAX_DEPTH levels (too_deep True): a tree it cannot
    measure is never read as small. The descriptors held are the current chain of folders."""
    total, count = 0, 0
    try:
        top = os.open(root, _DIR_FLAGS)
        stack = [(top, os.scandir(top))]
    except OSError:
        try:
            os.close(top)
        except (OSError, UnboundLocalError):
            pass
        return 0, 0, False
    try:
        while stack and count <= max_entries:
            fd, it = stack[-1]
            entry = next(it, None)
            if entry is None:
                it.close()
                os.close(fd)
                stack.pop()
                continue
            count += 1
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += st.st_blocks * 512 if st.st_blocks else st.st_size
            if stat.S_ISDIR(st.st_mode):
                if len(stack) >= MAX_DEPTH:
                    return total, count, True
                try:
                    sub = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue
                try:
                    stack.append((sub, os.scandir(sub)))
                except OSError:
                    os.close(sub)
        return total, count, False
    finally:
        for fd, it in stack:
            it.close()
            os.close(fd)


def remove_tree(root: Path) -> bool:
    """Remove `root` and everything under it, however deep, never following links: one
    descriptor held at a time (a folder's entries unlinked relative to it, a subfolder
    entered, and left by its `..` once empty), so neither the depth nor the path's length
    matters. True when it is gone. For a folder no process writes any more."""
    root = Path(root)
    try:
        fd = os.open(root, _DIR_FLAGS)
    except FileNotFoundError:
        return True
    except OSError:
        try:
            os.unlink(root)                    # a link or a file where the folder was
            return True
        except OSError:
            return False
    names: list[str] = []                      # the folders entered, below root
    try:
        try:
            os.fchmod(fd, 0o700)                   # a folder the child made unwritable
        except OSError:
            pass
        while True:
            entered = None
            with os.scandir(fd) as it:
                for entry in it:
                    try:
                        is_dir = stat.S_ISDIR(entry.stat(follow_symlinks=False).st_mode)
                    except OSError:
                        continue
                    if is_dir:
                        entered = entry.name
                        break
                    try:
                        os.unlink(entry.name, dir_fd=fd)
                    except OSError:
                        pass
            if entered is not None:
                try:
                    os.chmod(entered, 0o700, dir_fd=fd)   # one the child closed (a folder: checked above)
                except OSError:
                    pass
                try:
                    sub = os.open(entered, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    return False               # a folder it cannot enter: not removable here
                os.close(fd)
                fd = sub
                names.append(entered)
                continue
            if not names:
                break
            try:
                parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            except OSError:
                return False
            os.close(fd)
            fd = parent
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                return False
    except OSError:
        return False
    finally:
        os.close(fd)
    try:
        os.rmdir(root)
    except OSError:
        pass
    return not os.path.lexists(root)
