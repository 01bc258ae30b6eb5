"""The CUDA path on a real GPU (`pytest -m gpu` on the GPU machine; skipped elsewhere)."""
import pytest

from grader.run import grade

from conftest import REPO, SUBMISSIONS

pytestmark = pytest.mark.gpu
GPU = SUBMISSIONS / "gpu"


@pytest.fixture(scope="module")
def grade_cuda(cfg):
    memo = {}

    def run(path, bench=False):
        if (path, bench) not in memo:
            memo[(path, bench)] = grade(path, cfg, backend="cuda", bench=bench)
        return memo[(path, bench)]
    return run


@pytest.mark.parametrize("name", ["naive", "fused", "fused_tc"])
def test_cuda_reference_is_ok_within_1e4(grade_cuda, name):
    result = grade_cuda(REPO / "reference" / f"{name}.cu", bench=True)
    assert result.verdict == "ok", result.message
    assert result.backend == "cuda"
    assert all(c.max_err <= 1e-4 for c in result.checks), [c.max_err for c in result.checks]
    assert all(b.recheck_max_err <= 1e-4 for b in result.bench)
    assert result.system["gpu"] and result.system["sm_count"] > 0
    assert result.compile.headers == "proxy", "a reference kernel left the fast proxy headers"
    assert all(b.sdpa_ms > 0 and b.naive_ms > 0 and b.fused_ms > 0 and b.fused_opt_ms > 0
               for b in result.bench)
    # the slowdown's interval from the per-round figures (grader/analysis/confidence.py), and the judge's
    # NVML samples while timing (grader/judge/quality.py ClockMonitor)
    assert all(b.interval and b.interval["low"] <= b.slowdown <= b.interval["high"] and b.interval["rounds"] >= 10
               for b in result.bench), [b.interval for b in result.bench]
    health = [q.get("gpu_health") or {} for q in result.bench_quality["per_size"]]
    assert all(h.get("sampled") and h["samples"] > 0 and h["sm_clock_mhz_median"] > 0 for h in health), health
    # the persisting-L2 limit forced to 0 and the lines reset before every timed call, both calls succeeding
    assert result.timing["l2_persisting_reset_by_S"] and all(result.timing["l2_persisting_reset_by_S"].values())
    # whose kernels the checked calls ran (grader/judge/launches.py): the reference's own, and nothing foreign
    launched = result.launches
    # every checked call, and two untimed calls per benchmark request (before and after its timing)
    assert launched["observed"] == launched["calls"] > len(result.checks), launched
    assert launched["without_own"] == 0 and not launched["errors"], launched
    assert {e["class"] for e in launched["kernels"].values()} <= {"own", "allocation"}, launched["kernels"]
    assert not [f for f in result.flags if f["code"] in ("foreign_kernel", "unknown_kernel", "no_own_kernel", "aten_kernels",
                                                        "timed_launches", "untimed_work", "launch_observation")]
    # one timed round watched at every size: its kernels are the reference's own, as many as its
    # untimed calls launch, busy no longer than the calls measured
    timed = launched["timed"]
    assert len(timed["by_S"]) == len(result.bench) and not timed["errors"] and timed["without_own"] == 0, timed
    assert {e["class"] for e in timed["kernels"].values()} <= {"own", "allocation"}, timed["kernels"]
    assert timed["harness"], timed        # the fills and flushes between the calls, taken out as the harness's
    for S, rounds in timed["by_S"].items():
        assert all(r["own_launches"] >= r["expected"] > 0 and r["own_us"] <= 1.25 * r["event_us"] for r in rounds), (S, rounds)
    # SDPA timed again in a clean process on the same GPU (grader/judge/baseline.py): the baseline beside an
    # honest kernel agrees with it, so nothing is capped or flagged
    clean = result.timing["clean_sdpa"]["sdpa_ms_by_S"]
    ratios = {b.S: b.sdpa_ms / clean[str(b.S)] for b in result.bench}
    assert all(0.85 < r < 1.10 for r in ratios.values()), ratios
    assert not any((b.judge_clock or {}).get("sdpa_capped_ms") for b in result.bench)
    assert "baseline" in result.stage_seconds and not [f for f in result.flags if f["code"] == "baseline_slowed"]
    # the canaries: CANARIES per method per request, at least MIN_REQUESTS requests a size, every one
    # checked (grader/judge/gpu.py): >= 99% to catch a kernel wrong on 5% of its timed calls
    from grader.analysis.confidence import MIN_REQUESTS
    from grader.judge.gpu import CANARIES, detection
    checked = result.timing["checked_calls_by_S"]
    assert set(checked) == {b.S for b in result.bench} and min(checked.values()) >= CANARIES * MIN_REQUESTS, checked
    assert result.timing["canaries_per_size"] == min(checked.values())
    assert detection(min(checked.values())) >= 0.99 and "caught with probability" in result.timing["checked"]


@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("S", [1, 31, 64, 65, 200, 1000])
def test_cuda_references_at_odd_sizes(S, D):
    """Partial tiles in every position, against float64, through the grader's build."""
    import torch
    from grader.build import compile as build
    from grader.judge.check import make_inputs, truth
    from grader.core.config import Shape, load
    from grader.build.parse import parse
    cfg = load()
    q, k, v = make_inputs(Shape(2, 3, S, D), seed=S * D, device="cuda")
    expected = truth(q, k, v)
    for name in ("naive", "fused", "fused_tc"):
        _, kernel = build.compile_source(parse(REPO / "reference" / f"{name}.cu").sources["cuda"], cfg)
        err = (kernel(q, k, v).double() - expected).abs().max().item()
        assert err <= 1e-4, (name, S, D, err)
    torch.cuda.synchronize()


CASES = [
    ("correct_rows.py", "ok", "correct"),
    ("never_launches.py", "wrong_answer", "NaN"),
    ("never_writes_tail.py", "wrong_answer", "NaN"),
    ("out_of_bounds.py", "runtime_error", "illegal memory access"),
    ("hangs.py", "timeout", "took longer than"),
    # issue 32, item 2: the kernel's faults in its own terms, never "the grader's worker failed"
    ("smem_over_48k.py", "runtime_error", "48 KiB"),
    # the held-out set of 2026-11-27 (issue 32): real-world-style kernels written without the
    # diagnosis code, graded on an H200 before they were kept here; each names its real bug
    ("heldout_atomic_rowsum.py", "wrong_answer", "reads memory it never wrote"),
    ("heldout_blockreduce_softmax.py", "wrong_answer", "changes from run to run"),
    ("heldout_fa2_smem_tiles.py", "runtime_error", "48 KiB"),
    ("heldout_flash_tiles32.py", "wrong_answer", "only the first 320 of S = 333 keys"),
    ("heldout_half2_fast.py", "wrong_answer", "16-bit float computation"),
    ("heldout_leetgpu_exp.py", "wrong_answer", "without the max shift"),
    ("heldout_row_block_smem.py", "wrong_answer", "applied after the softmax"),
    ("heldout_warp_per_row_3dgrid.py", "wrong_answer", "batch/head offset"),
    ("heldout_three_kernel_warp.py", "ok", "correct"),
    ("prints_numbers.py", "ok", "correct"),
    ("check_with_numbers.py", "runtime_error", "S=333 is over this kernel's limit of 200 (shape [2, 3, 333, 64], scale 0.125)"),
    ("heldout_warp_kv_tiles.py", "ok", "correct"),
]


@pytest.mark.parametrize("name,verdict,phrase", CASES, ids=[c[0] for c in CASES])
def test_gpu_verdicts(grade_cuda, name, verdict, phrase):
    result = grade_cuda(GPU / name)
    assert result.verdict == verdict, result.message
    assert phrase in result.message and "grader's worker failed" not in result.message, result.message


def test_a_fault_found_during_benchmarking_is_the_kernels(grade_cuda):
    """Correct at the check sizes, an illegal address at the benchmark's sizes: the
    message names the kernel's fault, not a failure of the grader's worker."""
    result = grade_cuda(GPU / "fault_in_bench.py", bench=True)
    assert result.verdict == "runtime_error", result.message
    assert "faulted on the GPU" in result.message and "grader's worker failed" not in result.message, result.message


def test_partial_tile_defect_fails_only_the_odd_config(grade_cuda):
    result = grade_cuda(GPU / "never_writes_tail.py")
    odd = [c.config["S"] % 64 != 0 for c in result.checks]      # S = 333: the only partial tile
    assert [c.passed for c in result.checks] == [not o for o in odd] and sum(odd) == 1



def test_a_kernel_on_the_legacy_default_stream_is_timed_with_events(grade_cuda):
    """torch captures graphs on a non-blocking stream: a `<<<grid, block>>>` launch is left out
    of the graph without an error. The grader sees that the replay is not the kernel's and
    times it with events (it was judged wrong on its benchmark inputs before)."""
    result = grade_cuda(GPU / "legacy_stream.py", bench=True)
    assert result.verdict == "ok", result.message
    small = [s for s in result.timing["method_by_S"] if int(s) <= 256]
    assert small and all("graph" not in result.timing["method_by_S"][s] for s in small), result.timing
    assert all(b.slowdown > 0.5 for b in result.bench), [b.slowdown for b in result.bench]

def test_proxy_headers_launch_on_torchs_stream():
    """The proxy's CUDA half: getCurrentCUDAStream is torch's current stream. Capturing
    the kernel in a CUDA graph proves it (a launch on any other stream breaks the capture)."""
    import torch
    from grader.build import compile as build
    from grader.judge.check import truth
    from grader.core.config import load
    from grader.build.parse import parse
    result, kernel = build.compile_source(parse(REPO / "reference" / "fused.cu").sources["cuda"], load())
    assert result.ok and result.headers == "proxy", result.log
    q, k, v = (torch.randn(1, 2, 70, 64, device="cuda") for _ in range(3))
    kernel(q, k, v)                    # warm-up outside the capture (the shared-memory attribute)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = kernel(q, k, v)
    out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    assert (out.double() - truth(q, k, v)).abs().max().item() <= 1e-4


def test_the_gpus_counter_inputs_are_the_judges_bit_for_bit():
    """Commit-reveal canaries (grader/judge/gpu.py): the judge checks a timed output against
    inputs it makes again on its CPU (numpy), so the GPU's `counter_fill` (torch, int64) must make
    the same numbers, the one float32 rounding (times sqrt(3), qk_std) included."""
    import torch

    from grader.core.config import Shape
    from grader.judge.gpu import Pool, counter_inputs
    for shape in (Shape(1, 8, 1024, 64), Shape(2, 3, 200, 64), Shape(1, 2, 64, 128, qk_std=8.0)):
        pool = Pool(shape, 2, 1, key=987654321)
        for slot in (0, 159, 800):
            pool.fill(1, slot)
            torch.cuda.synchronize()
            want = counter_inputs(shape, 987654321, slot)
            assert all(torch.equal(g.cpu(), w) for g, w in zip(pool.sets[1], want)), (shape, slot)
