"""grader/isolation/landlock.py: after the rule, no file under /proc opens for writing (the
red team's procmem_window wrote its own code through /proc/self/mem for each call's length),
and everything else a grade writes still does."""
import subprocess
import sys
import textwrap

import pytest

from grader.isolation import landlock


def test_the_rule_grants_everything_but_the_procfs_trees(tmp_path):
    for d in ("a/proc", "a/b", "c"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "f").write_text("")
    (tmp_path / "lnk").symlink_to(tmp_path / "a")
    got = landlock.writable_roots([str(tmp_path / "a" / "proc")], str(tmp_path))
    # a link is not ruled itself: its target is, where it lies (a link into /proc: nowhere)
    assert sorted(got) == sorted(str(tmp_path / p) for p in ("a/b", "c", "f"))
    assert landlock.writable_roots([str(tmp_path / "a" / "proc")], str(tmp_path / "c")) == [str(tmp_path / "c")]
    assert landlock.writable_roots([str(tmp_path)], str(tmp_path)) == []
    assert "/proc" in landlock.proc_mounts()


@pytest.mark.skipif(landlock.abi() < 2, reason="no Landlock of ABI 2 in this kernel")
def test_a_restricted_process_cannot_write_proc_mem_and_writes_elsewhere(tmp_path):
    probe = textwrap.dedent(f"""
        import os, sys
        from grader.isolation.landlock import refuse_proc_writes
        with open("/proc/self/mem", "r+b"):             # before: opens (the attack's first step)
            pass
        why = refuse_proc_writes()
        assert why == "", why
        for path in ("/proc/self/mem", "/proc/self/comm", "/proc/self/attr/current"):
            try:
                open(path, "r+b").close()
                sys.exit("opened " + path)
            except PermissionError:
                pass
            except OSError as e:                    # a file some kernels lack: not a pass either
                if e.errno != 13 and path.endswith("mem"):
                    raise
        pid = os.fork()                              # a process it starts is bound too
        if pid == 0:
            try:
                open(f"/proc/{{os.getppid()}}/mem", "r+b")
                os._exit(3)
            except PermissionError:
                os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0, "the forked process opened its parent's mem"
        open("/proc/self/maps").read()               # reading /proc is untouched
        with open({str(tmp_path / "out.txt")!r}, "w") as f:
            f.write("written")
        os.makedirs({str(tmp_path / "a")!r}); os.makedirs({str(tmp_path / "b")!r})
        open({str(tmp_path / "a" / "x")!r}, "w").close()
        os.replace({str(tmp_path / "a" / "x")!r}, {str(tmp_path / "b" / "x")!r})   # across folders (Triton's cache)
        with open("/dev/null", "w") as f:
            f.write("x")
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
    assert (tmp_path / "out.txt").read_text() == "written"


@pytest.mark.skipif(landlock.abi() < 2, reason="no Landlock of ABI 2 in this kernel")
def test_a_thread_already_running_stops_the_rule_and_says_so():
    """The rule binds the thread that lays it and what it starts: one running before could open
    /proc/self/mem for the whole process (the worker lays it before torch starts any)."""
    probe = textwrap.dedent("""
        import threading, time
        from grader.isolation.landlock import refuse_proc_writes
        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
        print(refuse_proc_writes())
        open("/proc/self/mem", "r+b").close()          # not laid: still opens
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "threads already running" in out.stdout, out.stderr[-2000:]
