"""grader/judge/bench.py: FLOP counts and statistics with literal numbers."""
from grader.judge.bench import flops, make_row, summarize
from grader.core.config import Shape


def test_flops_is_four_b_h_s2_d():
    assert flops(Shape(1, 8, 1024, 64)) == 2_147_483_648        # 2.15 GFLOP (MEASURED.md)
    assert flops(Shape(2, 3, 5, 7)) == 4 * 2 * 3 * 25 * 7


def test_summarize_median_and_spread():
    t = summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (t.median_ms, t.min_ms, t.max_ms, t.reps) == (3.0, 1.0, 5.0, 5)
    assert t.iqr_ms == 3.0     # quartiles 1.5 and 4.5 (exclusive method)


def test_row_slowdown_and_gflops():
    timings = {"student": summarize([4.0]), "sdpa": summarize([2.0]), "naive": summarize([8.0]),
               "fused": None}
    row = make_row(Shape(1, 8, 1024, 64), timings, 1e-6)
    assert row.slowdown == 2.0 and row.naive_ms == 8.0 and row.fused_ms is None
    assert abs(row.student_gflops - 2_147_483_648 / 4e6) < 1e-9


def test_cuda_canaries_are_drawn_over_every_timed_call_and_catch_a_kernel_wrong_on_5_percent():
    """grader/judge/gpu.py: CANARIES calls of each timing method in every request, uniform over its
    timed calls (no round or call is safer to get wrong), and the stated detection holds."""
    import random
    from collections import Counter

    from grader.analysis.confidence import MIN_REQUESTS
    from grader.core.config import Shape
    from grader.judge.gpu import CALLS, CANARIES, GRAPH_MAX_S, detection, event_slots, graph_slots, pick_canaries
    rng = random.Random(5)
    small, large = Shape(1, 8, GRAPH_MAX_S, 64), Shape(1, 8, 1024, 64)
    picks = pick_canaries(small, rng)
    assert len(picks) == len(set(picks)) == 2 * CANARIES
    assert sum(p >= event_slots() for p in picks) == CANARIES
    # drawn after the reply said which method ran: no graph call where the graph was not used
    assert all(p < event_slots() for p in pick_canaries(small, rng, method="events"))
    assert len(pick_canaries(large, rng)) == CANARIES and max(pick_canaries(large, rng)) < event_slots()
    # uniform: every round of the event method, the last ones included, gets its share
    rounds = Counter(p // CALLS for _ in range(4000) for p in pick_canaries(large, rng))
    share = 4000 * CANARIES / (event_slots() // CALLS)
    assert set(rounds) == set(range(event_slots() // CALLS)) and all(abs(n - share) < 0.1 * share for n in rounds.values())
    graph = Counter(p - event_slots() for _ in range(2000) for p in pick_canaries(small, rng) if p >= event_slots())
    assert len(graph) == graph_slots()
    # the stated probability, and a simulation of it: a kernel wrong on 5% of its calls
    assert detection(CANARIES * MIN_REQUESTS) >= 0.99
    caught = 0
    for _ in range(2000):
        wrong = {i for i in range(MIN_REQUESTS * event_slots()) if rng.random() < 0.05}
        checked = [r * event_slots() + p for r in range(MIN_REQUESTS) for p in pick_canaries(large, rng)]
        caught += any(c in wrong for c in checked)
    assert caught / 2000 >= 0.985, caught


def test_the_timed_calls_inputs_are_counter_based_unit_variance_and_made_again_by_the_judge():
    """grader/judge/gpu.py `counter_fill`: a timed call's inputs are a function of (the request's
    key, its slot, the position) alone, in integer arithmetic exact on every device, so that the
    judge can make any call's inputs again after the fact (commit-reveal canaries). Unit variance
    (q and k times qk_std), no two slots or tensors alike, and few enough launches for the
    watched round's census bound (FILL_LAUNCHES)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from grader.core.config import Shape
    from grader.judge.gpu import FILL_LAUNCHES, SQRT3, _layout, counter_fill, counter_inputs, counter_seed
    shape = Shape(1, 8, 1024, 64)
    q, k, v = counter_inputs(shape, 12345, 7)
    again = counter_inputs(shape, 12345, 7)
    assert all(torch.equal(a, b) for a, b in zip((q, k, v), again))
    other = counter_inputs(shape, 12345, 8)
    assert not torch.equal(q, other[0]) and not torch.equal(q, counter_inputs(shape, 12346, 7)[0])
    for t in (q, k, v):
        assert t.shape == (1, 8, 1024, 64) and t.dtype == torch.float32
        assert abs(float(t.mean())) < 0.01 and abs(float(t.std()) - 1.0) < 0.01, (float(t.mean()), float(t.std()))
        # uniform on [-sqrt(3), sqrt(3)), almost no value repeated (24 bits of hash a value)
        assert float(t.abs().max()) <= SQRT3 * (1 + 2 ** -23)
        assert t.unique().numel() > 0.95 * t.numel()
    corr = torch.corrcoef(torch.stack([q.flatten(), k.flatten(), v.flatten(), other[0].flatten()]))
    assert float((corr - torch.eye(4)).abs().max()) < 0.01, corr
    # consecutive positions are not related (a hash of the position, not a stride through it)
    flat = q.flatten()
    assert abs(float(torch.corrcoef(torch.stack([flat[:-1], flat[1:]]))[0, 1])) < 0.01
    big = counter_inputs(Shape(1, 2, 64, 64, qk_std=8.0), 1, 0)
    assert abs(float(big[0].std()) - 8.0) < 0.3 and abs(float(big[2].std()) - 1.0) < 0.05
    assert counter_seed(1, 2) != counter_seed(2, 1)

    class Count(TorchDispatchMode):
        ops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Count.ops += func.__name__ not in ("empty.memory_format", "arange.start_step", "view.default",
                                               "slice.Tensor", "arange.default")
            return func(*args, **(kwargs or {}))
    # the device's side (torch, int64: what the GPU runs) makes what the judge's side (numpy,
    # uint32) makes, bit for bit, here on the CPU; tests/judge/test_gpu.py compares the GPU's
    for s in (shape, Shape(2, 3, 200, 64), Shape(1, 2, 64, 64, qk_std=8.0)):
        numel, stride = _layout(s)
        buf = torch.empty(3 * stride)
        views = tuple(buf[i * stride:i * stride + numel].view(s.B, s.H, s.S, s.D) for i in range(3))
        Count.ops = 0
        with Count():
            counter_fill(buf, torch.arange(3 * stride), counter_seed(3, 4), views, s.qk_std)
        assert 0 < Count.ops <= FILL_LAUNCHES, Count.ops
        assert all(torch.equal(a, b) for a, b in zip(views, counter_inputs(s, 3, 4)))


class _CpuCuda:
    """torch as grader/judge/gpu.py sees it, with CUDA's events, streams and device memory
    stood in by the CPU's: the harness's Python logic (slots, fills, kept outputs, commits)
    runs on a machine without a GPU; tests/judge/test_gpu.py runs the real thing."""

    def __init__(self, torch):
        import time
        import types

        class Event:
            def __init__(self, enable_timing=True):
                self.t = 0.0

            def record(self, stream=None):
                self.t = time.perf_counter()

            def elapsed_time(self, other):
                return (other.t - self.t) * 1e3
        self._torch = torch
        self.cuda = types.SimpleNamespace(Event=Event, synchronize=lambda: None, current_stream=lambda: None,
                                          _sleep=lambda cycles: None)

    def __getattr__(self, name):
        return getattr(self._torch, name)

    def empty(self, *a, device=None, **k):
        return self._torch.empty(*a, **k)

    def arange(self, *a, device=None, **k):
        return self._torch.arange(*a, **k)

    def Generator(self, device=None):
        return self._torch.Generator()


def test_the_gpu_harness_commits_to_every_timed_call_of_the_student_before_any_more_of_its_code_runs(monkeypatch):
    """grader/judge/gpu.py `bench_size` with CUDA stood in by the CPU (`_CpuCuda`): every timed call
    of the student's is kept and committed to by slot, on the inputs the judge makes again
    (`counter_inputs`), and nothing of the kernel's runs between its last timed call and the
    commitment (the wall probe's calls come first)."""
    import random

    import torch
    import torch.nn.functional as F

    from grader.core.config import Shape
    from grader.judge import gpu
    from grader.judge.check import row_error
    from grader.judge.judge import _check_canaries, _plausible_commit
    monkeypatch.setattr(gpu, "torch", _CpuCuda(torch))
    monkeypatch.setattr(gpu, "L2_FLUSH_BYTES", 1 << 16)
    shape = Shape(1, 2, 512, 64)                   # above GRAPH_MAX_S: the event method alone
    seen: list = []
    committed = []
    real_commit = gpu.commit_outputs

    def commit_outputs(kept, s):
        committed.append(len(seen))
        return real_commit(kept, s)
    monkeypatch.setattr(gpu, "commit_outputs", commit_outputs)

    def student(q, k, v):
        seen.append(q.clone())
        return F.scaled_dot_product_attention(q, k, v)
    timed = gpu.bench_size({"student": student, "sdpa": F.scaled_dot_product_attention}, shape, None, 7, 4242)
    assert sorted(timed.canary_outputs) == sorted(timed.commit) == list(range(gpu.event_slots()))
    assert all(len(d) == 2 * gpu.DIGEST_BYTES for d in timed.commit.values())
    assert committed == [len(seen)]                # the last of the kernel's calls came before the commitment
    for slot in random.Random(1).sample(range(gpu.event_slots()), 5):
        out = gpu.output_bytes(timed.canary_outputs[slot])
        assert gpu.digest(out) == timed.commit[slot]
        assert row_error(out, *gpu.counter_inputs(shape, 4242, slot), random.Random(2), 4) < 1e-5
    # the judge's side of the same: drawn slots checked, a changed output caught
    commit = _plausible_commit([[s, d] for s, d in timed.commit.items()])
    picked = gpu.pick_canaries(shape, random.Random(3), method="events")
    data = b"".join(gpu.output_bytes(timed.canary_outputs[s]) for s in picked)
    errs, changed = _check_canaries(shape, 4242, picked, [commit[s] for s in picked], [True] * len(picked), data, 5)
    assert changed == [] and max(errs) < 1e-5
    forged = bytearray(data)
    forged[:4] = b"\0\0\0\0"
    errs, changed = _check_canaries(shape, 4242, picked, [commit[s] for s in picked], [True] * len(picked),
                                    bytes(forged), 5)
    assert changed == [picked[0]] and errs[0] is None
    # an output with no digest committed counts for nothing, however right
    errs, changed = _check_canaries(shape, 4242, picked[:1], [""], [True], data[:len(data) // len(picked)], 5)
    assert errs == [None] and changed == [picked[0]]


def test_the_childs_commitments_are_bounded():
    from grader.judge.gpu import DIGEST_BYTES, event_slots, graph_slots
    from grader.judge.judge import _plausible_commit
    d = "ab" * DIGEST_BYTES
    got = _plausible_commit([[0, d], [0, "cd" * DIGEST_BYTES], [5, ""], [-1, d], [event_slots() + graph_slots(), d],
                             [3, d + "0"], [4, d.upper()], ["6", d], [True, d], [7], "x"])
    assert got == {0: d, 5: ""}                     # the first of a slot; only slots and digests of the harness's
    assert _plausible_commit("x") == {} and _plausible_commit([[1, d]] * 100_000) == {1: d}


def test_a_refill_of_every_set_at_once_makes_each_sets_own_numbers(monkeypatch):
    """Pool.refill's one counter pass over every set (a row each, its own seed) makes what each
    set's own fill makes, and what the judge makes again; qk_std scales q and k of every row."""
    import torch

    from grader.core.config import Shape
    from grader.judge import gpu
    monkeypatch.setattr(gpu, "torch", _CpuCuda(torch))
    for shape in (Shape(1, 2, 64, 64), Shape(2, 3, 40, 32, qk_std=4.0)):
        pool = gpu.Pool(shape, 4, 1, key=99)
        pool.refill({j: 100 + 7 * j for j in range(4)})
        for j in range(4):
            want = gpu.counter_inputs(shape, 99, 100 + 7 * j)
            assert all(torch.equal(g, w) for g, w in zip(pool.sets[j], want)), (shape, j)
        pool.fill(2, 5)
        assert all(torch.equal(g, w) for g, w in zip(pool.sets[2], gpu.counter_inputs(shape, 99, 5)))
