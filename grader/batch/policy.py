"""Batch, sandbox policy: whether submissions run in the sandbox, and what they must not see.

The sandbox itself (bubblewrap, limits, measuring the child) is `grader/sandbox.py`; this
module decides how a batch uses it from the instructor's `--sandbox auto|on|off`.
"""
from __future__ import annotations

import sys

from .discover import BatchError


def warn(text: str) -> None:
    """A warning nobody can miss on a terminal or in a job log."""
    bar = "!" * 78
    print(f"{bar}\n!! WARNING: {text}\n{bar}", file=sys.stderr, flush=True)


def sandbox_mode(choice: str, warn=warn) -> bool:
    """True when submissions run in the sandbox. `choice`: auto | on | off."""
    from ..sandbox import bwrap_path
    if choice == "off":
        warn("--sandbox off: submissions run WITHOUT a sandbox")
        return False
    if bwrap_path() is None:
        if choice == "on":
            raise BatchError("--sandbox on, but bubblewrap is not usable here: install it "
                             "(apt install bubblewrap) or set GRADER_BWRAP")
        warn("bubblewrap (bwrap) is not available: submissions run WITHOUT a sandbox. "
             "They can use the network and read other submissions and the hidden "
             "config. Install it: apt install bubblewrap")
        return False
    return True


def hidden_paths(opts) -> tuple:
    """Paths a sandboxed submission must not see: the class, OUT, the hidden config, the
    timestamps file."""
    hide = [opts.submissions.resolve(), opts.out.resolve()]
    if opts.hidden_file:
        hide.append(opts.hidden_file.resolve())
    if opts.timestamps:
        hide.append(opts.timestamps.resolve())
    return tuple(hide)
