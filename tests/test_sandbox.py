"""grader/sandbox.py: what a sandboxed child is given (the policy is proven end to end by
the red-team suite and the batch tests; these are the unit checks)."""

def test_a_compiler_outside_usr_is_bound_with_its_prefix(tmp_path, monkeypatch):
    """A GPU image's GCC lives in /opt/gcc: the sandboxed build must see /opt/gcc (bin,
    libexec, lib), not only /usr, or every build in the batch fails with 'g++: not found'."""
    from grader.sandbox import python_paths, toolchain_prefixes
    prefix = tmp_path / "opt" / "gcc"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "libexec").mkdir()
    gxx = prefix / "bin" / "g++"
    gxx.write_text("#!/bin/sh\n")
    gxx.chmod(0o755)
    monkeypatch.setenv("CXX", str(gxx))
    assert str(prefix) in toolchain_prefixes()
    assert prefix in python_paths()
    monkeypatch.setenv("CXX", "/opt/g++")                   # a top-level folder is never bound whole
    assert "/opt" not in toolchain_prefixes()


def test_a_tool_under_a_home_folder_binds_its_bin_folder_only(tmp_path, monkeypatch):
    """pip install --user puts ninja in ~/.local/bin: ~/.local (keyrings, tokens) stays out."""
    from grader.sandbox import toolchain_prefixes
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    ninja = home / ".local" / "bin" / "ninja"
    ninja.write_text("#!/bin/sh\n")
    ninja.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / '.local' / 'bin'}:/usr/bin:/bin")
    found = toolchain_prefixes()
    assert str(home / ".local" / "bin") in found and str(home / ".local") not in found


def test_a_process_not_yet_in_the_sandbox_counts_no_tmpfs():
    """At a child's start its process tree is bwrap still in the judge's own root: the
    machine's /tmp is not the sandbox's and must not count in its memory (a fresh clone's CI
    read 24.3 GiB there and stopped a child before it ran a line)."""
    import os
    from grader.sandbox import tmpfs_bytes
    assert tmpfs_bytes([os.getpid()], 3 << 30) == 0
    assert tmpfs_bytes([], 3 << 30) == 3 << 30                  # nothing readable: the full sizes
