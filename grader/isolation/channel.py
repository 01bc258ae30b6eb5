"""The channel between the judge (the parent) and the worker (the child): framed messages
on a pair of pipes.

The child runs untrusted code, so every byte it writes is hostile. A frame is a 4-byte
little-endian length, a JSON object of at most `MAX_HEADER` bytes, then `nbytes` raw
bytes (a tensor) when the object names them. The parent reads with a deadline on
non-blocking pipes (`select`), caps every size at what it expects before reading it, and
turns anything else into `ChannelError`: a child that stalls, floods, lies about sizes
or closes the pipe cannot block, crash or mislead the parent. The child (trusting its
parent) reads blocking.

Nothing travels through files the child can write, so there is nothing to replace with a
symlink or a FIFO; the child's printed output goes through a third pipe the parent drains
(`sandbox.OutputCap`).
"""
from __future__ import annotations

import json
import os
import re
import select
import struct
import time

MAX_HEADER = 1 << 20          # one JSON object: 1 MiB is far more than any honest reply
MAX_DEPTH = 32                # nesting of a JSON object: an honest reply nests 5 deep
_LEN = struct.Struct("<I")


class ChannelError(Exception):
    """The other side broke the protocol (or went away); the message says how."""


class ChannelTimeout(ChannelError):
    """No complete frame before the deadline."""


class ChannelClosed(ChannelError):
    """The other side closed its end (it exited or crashed)."""


def _encode(header: dict, payload) -> list:
    nbytes = 0 if payload is None else memoryview(payload).nbytes
    head = json.dumps({**header, "nbytes": nbytes}, allow_nan=False).encode()
    if len(head) > MAX_HEADER:
        raise ChannelError(f"message header of {len(head)} bytes (at most {MAX_HEADER})")
    parts = [_LEN.pack(len(head)), head]
    if nbytes:
        parts.append(memoryview(payload).cast("B"))
    return parts


PIPE_BYTES = 1 << 20          # the pipes' capacity (Linux's default is 64 KiB; 1 MiB the unprivileged limit)


def widen(*fds: int) -> None:
    """Give each pipe PIPE_BYTES of capacity where the kernel allows it: a request's canaries
    (120 MB at S = 1024, when the judge sent its own inputs) crossed a 64 KiB pipe in ~2000
    wake-ups each way."""
    import fcntl
    for fd in fds:
        try:
            fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
        except OSError:
            pass             # a lower /proc/sys/fs/pipe-max-size: the default stays


class Endpoint:
    """One side of the channel: frames out on `wfd`, frames in on `rfd`.

    `nonblocking=True` (the parent): reads and writes wait with `select` until a deadline
    and never block past it."""

    def __init__(self, rfd: int, wfd: int, nonblocking: bool = False):
        self.rfd, self.wfd = rfd, wfd
        self.nonblocking = nonblocking
        self._buf = bytearray()
        if nonblocking:
            os.set_blocking(rfd, False)
            os.set_blocking(wfd, False)

    def close(self) -> None:
        for fd in (self.rfd, self.wfd):
            try:
                os.close(fd)
            except OSError:
                pass

    # -- writing ------------------------------------------------------------------------
    def send(self, header: dict, payload=None, deadline: float | None = None) -> None:
        """Write one frame. `payload`: bytes-like (a tensor's bytes) or None."""
        for part in _encode(header, payload):
            view = memoryview(part)
            while view.nbytes:
                if self.nonblocking:
                    self._wait(self.wfd, write=True, deadline=deadline)
                try:
                    n = os.write(self.wfd, view)
                except BlockingIOError:
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    raise ChannelClosed("the other side closed the channel") from None
                view = view[n:]

    # -- reading ------------------------------------------------------------------------
    def recv(self, deadline: float | None = None, max_payload: int = 0) -> tuple[dict, bytes | bytearray]:
        """Read one frame: (header dict, payload bytes). Raises ChannelError if it is not a
        well-formed frame, if its payload is larger than `max_payload`, or (non-blocking
        side) if it is not complete by `deadline` (time.monotonic())."""
        raw = self._read_exact(_LEN.size, deadline)
        (size,) = _LEN.unpack(raw)
        if size > MAX_HEADER:
            raise ChannelError(f"a message header of {size} bytes (at most {MAX_HEADER})")
        raw = self._read_exact(size, deadline)
        if _depth(raw) > MAX_DEPTH:
            # json.loads recurses once per level: 50 000 levels raise RecursionError, and a
            # few hundred would still sink whatever walks the object after it
            raise ChannelError(f"a message nested more than {MAX_DEPTH} levels deep")
        try:
            header = json.loads(raw)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ChannelError("a message that is not JSON") from None
        if not isinstance(header, dict):
            raise ChannelError("a message that is not a JSON object")
        nbytes = header.get("nbytes", 0)
        if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 0:
            raise ChannelError(f"a message with a bad payload size {nbytes!r}")
        if nbytes > max_payload:
            raise ChannelError(f"a payload of {nbytes} bytes where at most {max_payload} were expected")
        return header, self._read_payload(nbytes, deadline) if nbytes else b""

    def _read_exact(self, n: int, deadline: float | None) -> bytes:
        while len(self._buf) < n:
            if self.nonblocking:
                self._wait(self.rfd, write=False, deadline=deadline)
            try:
                chunk = os.read(self.rfd, max(n - len(self._buf), 1 << 16))
            except BlockingIOError:
                continue
            if not chunk:
                raise ChannelClosed("the other side closed the channel")
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def _read_payload(self, n: int, deadline: float | None) -> bytearray:
        """n bytes read straight into one buffer (a payload: up to hundreds of MB of inputs or outputs;
        `_read_exact`'s way, a fresh n-byte read buffer per pipe-full, cost more than the
        transfer), returned as a bytearray (torch.frombuffer takes it without a copy)."""
        out = bytearray(n)
        view = memoryview(out)
        got = min(n, len(self._buf))
        view[:got] = self._buf[:got]
        del self._buf[:got]
        while got < n:
            if self.nonblocking:
                self._wait(self.rfd, write=False, deadline=deadline)
            try:
                k = os.readv(self.rfd, [view[got:]])
            except BlockingIOError:
                continue
            if not k:
                raise ChannelClosed("the other side closed the channel")
            got += k
        return out

    @staticmethod
    def _wait(fd: int, write: bool, deadline: float | None) -> None:
        timeout = None if deadline is None else deadline - time.monotonic()
        if timeout is not None and timeout <= 0:
            raise ChannelTimeout("no answer before the deadline")
        poller = select.poll()           # not select(): a batch may hold fds past FD_SETSIZE
        poller.register(fd, select.POLLOUT if write else select.POLLIN)
        if not poller.poll(None if timeout is None else max(1, int(timeout * 1000))):
            raise ChannelTimeout("no answer before the deadline")


_SPECIAL = re.compile(rb'[][{}"\\]')


def _depth(raw: bytes) -> int:
    """The deepest nesting of [ and { in a JSON text, strings skipped: one pass over the
    special bytes alone, no recursion and no backtracking (it runs before the parser, on
    bytes the child chose: a pattern that matched whole strings took minutes on a frame of
    unterminated escapes)."""
    depth = deepest = 0
    in_string = False
    skip = -1                                   # the byte after a backslash inside a string
    for m in _SPECIAL.finditer(raw):
        pos, c = m.start(), m.group()
        if pos == skip:
            continue
        if in_string:
            if c == b"\\":
                skip = pos + 1
            elif c == b'"':
                in_string = False
        elif c == b'"':
            in_string = True
        elif c in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif c in (b"]", b"}"):
            depth -= 1
    return deepest


def check_fields(header: dict, spec: dict) -> dict:
    """`header` if each key of `spec` is present with the given type (a type or a tuple of
    types; bool is never an int here), else ChannelError naming the field."""
    for key, types in spec.items():
        value = header.get(key)
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in (
                types if isinstance(types, tuple) else (types,))):
            raise ChannelError(f"field {key!r} of the reply is {type(value).__name__}, not the expected type")
    return header
