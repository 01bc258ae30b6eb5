"""Batch, sandbox policy: whether submissions run in the sandbox, and what they must not see.

The sandbox itself (bubblewrap, limits, measuring the child) is `grader/isolation/sandbox.py`; this
module decides how a batch uses it from the instructor's `--sandbox auto|on|off`.
"""
from __future__ import annotations

import sys
from pathlib import Path

from .discover import BatchError


def warn(text: str) -> None:
    """A warning nobody can miss on a terminal or in a job log."""
    bar = "!" * 78
    print(f"{bar}\n!! WARNING: {text}\n{bar}", file=sys.stderr, flush=True)


def sandbox_mode(choice: str, warn=warn) -> bool:
    """True when submissions run in the sandbox. `choice`: auto | on | off. As root, no
    usable sandbox is an error unless the instructor said `--sandbox off`: untrusted code
    would run as root."""
    from ...isolation.sandbox import as_root, bwrap_path
    if choice == "off":
        warn("--sandbox off: submissions run WITHOUT a sandbox" + (", AS ROOT" if as_root() else ""))
        return False
    if bwrap_path() is None:
        if choice == "on":
            raise BatchError("--sandbox on, but bubblewrap is not usable here: install it "
                             "(apt install bubblewrap) or set GRADER_BWRAP")
        if as_root():
            raise BatchError("refusing to run untrusted submissions as root without the sandbox: install "
                             "bubblewrap (apt install bubblewrap), run as an unprivileged user, or pass "
                             "--sandbox off to accept the risk")
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


def prove_sandbox(out: Path, hide: tuple, limits, log) -> dict:
    """The sandbox's self-test on this machine (grader/isolation/sandbox.py: no capabilities, no
    mount it can change, no hidden path visible, no network, not root, /tmp bounded),
    recorded in OUT/sandbox.json; BatchError when it does not hold."""
    from ...core.result import write_json_atomic
    from ...isolation.sandbox import SandboxError, bwrap_path, self_test
    workdir = out / ".work" / ".selftest"
    try:
        report = self_test(bwrap_path(), workdir, limits, hide)
    except SandboxError as e:
        raise BatchError(f"{e} (pass --sandbox off to grade without it)") from None
    finally:
        import shutil
        shutil.rmtree(workdir, ignore_errors=True)
    write_json_atomic(out / "sandbox.json", report)
    log(f"sandbox self-test: uid {report['uid']}, capabilities {report['cap_eff']}, no mount changes, "
        f"{len(hide)} hidden path(s) absent, no network, /tmp {report['tmp_bytes'] >> 20} MiB")
    return report
