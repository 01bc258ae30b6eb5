"""The red-team suite (tools/redteam.py): every attack on the judge we know of, graded as a
class in the sandbox, as root on CI. Each attack must get its row, and the batch must
complete with no file changed outside the work folders, no secret in any student-visible
output and no process left. Without bubblewrap the sandbox part skips with the reason;
the judge-side rules (the parent's own reads, the trust boundary) are tested below and in
tests/judge/test_judge.py."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.core.result import VERDICTS
from grader.isolation.sandbox import bwrap_path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import redteam  # noqa: E402

HAVE_BWRAP = bwrap_path() is not None


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    listener, port = redteam.listen()
    cls = redteam.build(tmp_path_factory.mktemp("redteam") / "class", port)
    before = redteam.snapshot(redteam._guarded() + [cls.canary, cls.subs, cls.old_out])
    proc = redteam.run(cls)
    listener.close()
    return cls, redteam.check(cls, proc, before)


def test_every_attack_file_says_what_it_expects():
    attacks = sorted(redteam.ATTACKS.glob("*.py")) + sorted(redteam.GPU_ATTACKS.glob("*.py"))
    assert len(attacks) + len(redteam.ESCAPE_EXPECT) >= 20
    for path in attacks:
        text = path.read_text()
        assert "Attack:" in text and "Defence:" in text, path.name
        redteam.parse_expect(text)
    # a known hole says so (open=ISSUE): printed OPEN while it gets through, a failure once it holds
    assert redteam.parse_expect("x\nExpect: status=wrong_answer; open=issue 26\n").open == "issue 26"
    for path in attacks:                  # every status named (either of two where two defences race)
        assert set(redteam.parse_expect(path.read_text()).status.split("|")) <= set(VERDICTS), path.name


@pytest.mark.skipif(not HAVE_BWRAP, reason="needs bubblewrap (apt install bubblewrap): the attacks run sandboxed")
def test_every_attack_gets_its_row_and_every_invariant_holds(graded):
    cls, results = graded
    failed = [f"{what}: {detail}" for what, held, detail in results if not held]
    assert not failed, "\n".join(failed)
    assert len([r for r in results if r[0] in cls.expected or "~" in r[0]]) == len(cls.expected)


def test_the_cuda_attacks_compile_with_nvcc(tmp_path):
    """The GPU attacks run on the GPU machine (pytest -m gpu); here they must at least compile."""
    import shutil
    from grader.core import config
    from grader.build.compile import compile_only
    from grader.build.parse import parse
    if not (shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").exists()):
        pytest.skip("needs nvcc")
    cfg = config.load(REPO / "tests" / "fast_config.toml")
    inc = (redteam.GPU_ATTACKS / "_correct_cuda.inc").read_text()
    lookup = (redteam.ATTACKS / "_elf_lookup.inc").read_text()       # as redteam.build fills them
    probe = (redteam.ATTACKS / "_socket_probe.inc").read_text()
    from concurrent.futures import ThreadPoolExecutor

    def build(path: Path):
        (tmp_path / path.name).write_text(path.read_text().replace("@@CORRECT_CUDA@@", inc)
                                          .replace("@@ELF_LOOKUP@@", lookup).replace("@@SOCKET_PROBE@@", probe))
        return path.name, compile_only(parse(tmp_path / path.name).sources["cuda"], cfg)
    # one nvcc per core: each attack's build is one process (12 of them took 182 s one by one)
    # and in the proxy or lean headers: a batch's compile memory does not hold the full ones (on
    # an H100, compute_ahead_cuda's from_blob made it a compile_error, not the attack it is)
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        for name, result in pool.map(build, sorted(redteam.GPU_ATTACKS.glob("*.py"))):
            assert result.ok, (name, result.log)
            assert result.headers in ("proxy", "lean"), (name, result.headers, result.fallback)


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_BWRAP, reason="needs bubblewrap (apt install bubblewrap)")
def test_the_suite_holds_on_the_gpu(tmp_path):
    """The whole suite with the CUDA attacks, graded with --gpus 0 (the GPU machine)."""
    listener, port = redteam.listen()
    cls = redteam.build(tmp_path / "class", port, gpu=True)
    before = redteam.snapshot(redteam._guarded() + [cls.canary, cls.subs, cls.old_out])
    proc = redteam.run(cls)
    listener.close()
    failed = [f"{what}: {detail}" for what, held, detail in redteam.check(cls, proc, before) if not held]
    assert not failed, "\n".join(failed)


def test_the_hidden_shape_is_found_as_a_figure_not_inside_another():
    """The secret check looks for the hidden S as a figure: in a config or a message, not in
    0.173, 1730, 173.8, or a percentage (on a loaded CI machine a bench_quality reason,
    "sdpa timings spread 173%", failed the whole class)."""
    found = lambda text: bool(redteam.HIDDEN_S_RE.search(text))   # noqa: E731
    assert redteam.HIDDEN_S == 173
    assert all(found(t) for t in ("S=173", '"S": 173,', "B=1 H=2 S=173 D=64", "S = 173)"))
    assert not any(found(t) for t in ("spread 173%", "spread 173 %", "0.173", "1730", "173.8",
                                      '"module": "attn_cpp_e173bc68e91bd539"', "x173", "173_"))
    # the judge's public counts in a flag's words are not the shape (held-out median_mix's flag,
    # "(0 against 173)" samples, failed the class on 2026-11-28); a shape beside them still is
    import json
    flag = lambda detail: redteam._without_public_counters(json.dumps({"flags": [{"detail": detail}]}))  # noqa: E731
    assert not any(found(flag(t)) for t in ("ran (0 against 173), each call", "173 of its 200 timed calls with",
                                            "(99%; 173 and 173 calls, each"))
    assert found(flag("S=173: its own code got 0% (0 against 12)"))


def test_the_verdict_beneath_the_flags_is_the_verdict_itself_where_no_strict_flag_replaced_it(tmp_path):
    """An Expect's `without=` is the verdict as scored beneath the flags: a plain wrong_answer
    (no strict flag, so no `verdict_without_flags` in its results) is wrong_answer beneath too.
    The CI run of 2026-11-28 failed right_then_zeros on exactly that: its usual wrong_answer read
    as "verdict without flags None"."""
    import csv
    import json
    out = tmp_path / "out"
    docs = {"plain": {"verdict": "wrong_answer", "message": "wrong on the benchmark inputs at S=64"},
            "flagged": {"verdict": "cheat_suspected", "message": "sampler",
                        "verdict_without_flags": "wrong_answer",
                        "message_without_flags": "wrong on the benchmark inputs at S=64"},
            "passed": {"verdict": "ok", "message": "correct"}}
    for sid, doc in docs.items():
        (out / "students" / sid).mkdir(parents=True)
        (out / "students" / sid / "results.json").write_text(json.dumps(doc))
    with open(out / "grades.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["submission", "status", "flags", "message"])
        w.writeheader()
        for sid, doc in docs.items():
            w.writerow({"submission": sid, "status": doc["verdict"], "flags": "", "message": doc["message"]})
    want = redteam.parse_expect("Expect: status=wrong_answer|cheat_suspected; without=wrong_answer; "
                                "without_message=benchmark inputs")
    cls = redteam.Class(subs=tmp_path / "subs", out=out, hidden=tmp_path / "h", seed=0, secret="s",
                        canary=tmp_path / "canary", old_out=tmp_path / "old", expected=dict.fromkeys(docs, want))
    rows = {what: (held, detail) for what, held, detail in redteam.check(
        cls, subprocess.CompletedProcess([], 0, "", ""), {})}
    assert rows["plain"][0] is True, rows["plain"]
    assert rows["flagged"][0] is True, rows["flagged"]
    assert rows["passed"][0] is False and "status ok" in rows["passed"][1], rows["passed"]


def test_a_process_naming_out_survives_but_the_tools_own_ancestors_do_not_count(tmp_path):
    """`surviving_processes`: a process left running with OUT on its command line is reported; the
    shell that started the tool, whose own command line may name OUT, is not a process of the
    batch (a GPU session's wrapper shell read as a survivor on 2026-11-28)."""
    out = tmp_path / "out"
    probe = ("import sys; sys.path.insert(0, sys.argv[2]); import redteam; "
             "from pathlib import Path; print(redteam.surviving_processes(Path(sys.argv[1])))")
    # a shell (not replaced by its one command: two of them) whose own command line names OUT
    shell = f"{sys.executable} -c '{probe}' '{out}' '{Path(redteam.__file__).parent}'; true '{out}'"
    me = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, check=True)
    assert me.stdout.strip() == "[]", me.stdout
    left = subprocess.Popen([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)", str(out)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert left.stdout.readline().strip() == "up"     # started: its command line is its own by now
        alive = redteam.surviving_processes(out)
        assert any(a.startswith(f"{left.pid}: ") for a in alive), alive
    finally:
        left.kill()
        left.wait()


def test_an_attacks_real_cost_is_read_in_ms_as_the_tier_has_it():
    """got_clock_shave's rows of 2026-11-28: the same 1.5 ms a call (1.2 shaved off the clock,
    0.82-0.91 charged back) read 11.4x SDPA alone and 5.8x in a class run, SDPA's call at S = 64
    taking 0.13 then 0.26 ms, so a slowdown bar failed an attack that held. Its call as timed plus
    what was charged does not hang on SDPA's speed; uncharged, the shaved call falls below."""
    want = redteam.parse_expect("Expect: status=ok; cost_min_ms=1.3")
    assert want.cost_min_ms == 1.3 and want.slowdown_min is None
    alone = {"S": 64, "student_ms": 0.5764, "judge_clock": {"charged_ms": 0.907}}
    in_class = {"S": 64, "student_ms": 0.7209, "judge_clock": {"charged_ms": 0.8201}}
    assert all(redteam._charged_cost(r) >= want.cost_min_ms for r in (alone, in_class))
    assert redteam._charged_cost({"S": 64, "student_ms": 0.5764, "judge_clock": {}}) < want.cost_min_ms
    assert redteam._charged_cost({"S": 64, "student_ms": "x"}) is None
