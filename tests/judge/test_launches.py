"""grader/judge/launches.py: whose GPU kernels a checked call ran, from the kernel names the
profiler reports (the names below are the forms Kineto gives on an H100: demangled,
`void` and the parameter list included; Triton's are the jit function's name).

The observation itself runs on a GPU (tests/judge/test_gpu.py); here, how the judge reads it."""
from conftest import REPO
from grader.judge.launches import base_name, classify, launch_flags, own_names, summarise
from grader.build.parse import parse, parse_python

OWN_FUSED = "void (anonymous namespace)::fused_attention_kernel<64>(float const*, float const*, float const*, float*, int, float)"
FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
        "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")
COPY = ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda"
        "(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>"
        "(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
        "const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, ...)")
SDPA = ("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, true, "
        "64, 64, 64, true, true>::Params)")
GEMM = "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
MUL = ("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
       "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, ...)")
SOFTMAX = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)"


def test_own_kernels_are_read_from_the_source():
    assert own_names(parse(REPO / "reference" / "naive.cu").sources["cuda"]) == {
        "scores_kernel", "softmax_rows_kernel", "weighted_sum_kernel"}
    assert own_names(parse(REPO / "reference" / "fused_tc.cu").sources["cuda"]) == {"fused_tc_kernel", "merge_splits_kernel"}
    assert {"_attention", "attention"} <= own_names(parse(REPO / "reference" / "fused.triton.py").sources["triton"])
    text = ('_CUDA_SRC = r"""\n// __global__ void commented_out(int x)\ntemplate <int D>\n__global__ void __launch_bounds__(256, 2)\n'
            'tiled(const float* q) {}\nextern "C" __global__ void plain (float* o) {}\n"""\n')
    assert own_names(parse_python(text, REPO / "a.py", "a").sources["cuda"]) == {"tiled", "plain"}


def test_a_launch_is_sorted_by_its_base_name():
    assert base_name(OWN_FUSED) == "fused_attention_kernel"
    assert base_name("_attention") == "_attention"
    own = frozenset({"fused_attention_kernel"})
    assert [classify(n, own) for n in (OWN_FUSED, FILL, COPY, SDPA, GEMM, SOFTMAX, MUL, "mystery_kernel(int)")] == [
        "own", "allocation", "allocation", "foreign", "foreign", "foreign", "aten", "unknown"]


def test_an_elementwise_aten_kernel_in_the_glue_is_a_warning_as_in_the_operation_audit():
    flags = launch_flags(summarise([_call(OWN_FUSED, MUL)], frozenset({"fused_attention_kernel"})))
    assert [(f["code"], f["tier"]) for f in flags] == [("aten_kernels", "warning")]


def _call(*names, stream=7):
    return {"kernels": [{"name": n, "stream": stream, "us": 3.0} for n in names], "error": None}


def test_an_honest_kernel_raises_nothing():
    own = frozenset({"fused_attention_kernel"})
    summary = summarise([_call(FILL, OWN_FUSED), _call(OWN_FUSED)], own)
    assert summary["kernels"][OWN_FUSED] == {"count": 2, "class": "own", "us": 6.0}
    assert launch_flags(summary) == []


def test_sdpa_behind_the_kernel_is_strict_and_named():
    own = frozenset({"fused_attention_kernel"})
    flags = launch_flags(summarise([_call(OWN_FUSED, SDPA)], own))
    assert [(f["code"], f["tier"]) for f in flags] == [("foreign_kernel", "strict")]
    assert "fmha_cutlassF" in flags[0]["detail"]


def test_no_own_kernel_unknown_kernels_side_streams_and_a_failed_profiler_are_said():
    own = frozenset({"k"})
    calls = [_call("k(float*)", stream=7), _call("k(float*)", stream=13), _call(), _call("other(int)"),
             {"kernels": [], "error": "the profiler could not start: RuntimeError: CUPTI"}]
    codes = {f["code"]: f["tier"] for f in launch_flags(summarise(calls, own))}
    assert codes == {"unknown_kernel": "review", "no_own_kernel": "review", "side_streams": "warning",
                     "launch_observation": "review"}


def test_hidden_calls_flag_without_names():
    flags = launch_flags(summarise([_call("k(float*)", SDPA)], frozenset({"k"})), hidden=True)
    assert [f["code"] for f in flags] == ["foreign_kernel"] and "fmha" not in flags[0]["detail"]
    assert "hidden" in flags[0]["detail"]


# ---- the watched timed round (grader/judge/gpu.py time_events `watch`) -------------------------------

# the harness's fill of one input set before each timed call (Pool.fill: the name an H100 gave)
NORMAL = ("void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, "
          "at::native::templates::cuda::normal_and_transform<float, float, at::CUDAGeneratorImpl*, "
          "at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl*>(at::TensorBase const&, double, double, "
          "at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(")


def _round(S, own_launches, us_each=10.0, events_ms=0.02, extra=(), stream=7, calls=16, harness=True):
    kernels = [{"name": OWN_FUSED, "stream": stream, "us": us_each} for _ in range(own_launches)]
    kernels += [{"name": FILL, "stream": stream, "us": 80.0} for _ in range(calls)]      # the L2 flushes
    kernels += [{"name": NORMAL, "stream": stream, "us": 2.0} for _ in range(calls)]    # the inputs' fills
    kernels += [{"name": n, "stream": stream, "us": 5.0} for n in extra]
    return {"S": S, "kernels": kernels, "error": None, "event_ms": [events_ms] * calls, "truncated": False,
            "harness": {FILL: calls, NORMAL: calls} if harness else {}}


def test_an_honest_timed_round_accounts_for_its_calls():
    from grader.judge.launches import judge_watched
    own = frozenset({"fused_attention_kernel"})
    summary, flags = judge_watched([_round(512, 16), _round(1024, 16)], own, {512: 1, 1024: 1})
    assert flags == [] and summary["rounds"] == 2
    assert summary["by_S"]["512"] == [{"calls": 16, "own_launches": 16, "expected": 16, "own_us": 160.0,
                                       "event_us": 320.0}]
    assert summary["harness"] == {FILL: 32, NORMAL: 32} and set(summary["kernels"]) == {OWN_FUSED}


def test_the_harness_fills_between_timed_calls_are_not_the_kernels_and_cannot_hide_its_work():
    """The harness writes each call's inputs just before the call (Pool.fill), inside the watched
    round: ATen's normal_ kernel, 16 a round. On an H100 they were read as the references' own
    ATen work (`aten_kernels`) until the child said which kernels are its own. What it says
    takes out at most that many ATen or allocation kernels: never the submission's, never a
    library's attention kernel."""
    from grader.judge.launches import judge_watched
    own = frozenset({"fused_attention_kernel"})
    _, flags = judge_watched([_round(512, 16, harness=False)], own, {512: 1})
    assert [f["code"] for f in flags] == ["aten_kernels"]           # unsaid: the fills read as the kernel's
    # the kernel's own normal_ beyond the harness's count stays its own
    _, flags = judge_watched([_round(512, 16, extra=[NORMAL] * 3)], own, {512: 1})
    assert [f["code"] for f in flags] == ["aten_kernels"] and "x3" in flags[0]["detail"]
    # a report naming the submission's kernels or SDPA as the harness's hides neither
    forged = _round(512, 16, extra=[SDPA] * 16)
    forged["harness"] = {**forged["harness"], OWN_FUSED: 16, SDPA: 16}
    summary, flags = judge_watched([forged], own, {512: 1})
    assert [f["code"] for f in flags] == ["foreign_kernel"] and summary["kernels"][OWN_FUSED]["count"] == 16


def test_a_timed_round_that_launches_sdpa_or_skips_calls_or_runs_past_its_events_is_flagged():
    """The attacks the watch is for: compute only while timed (a library's attention kernel),
    answers from elsewhere on some timed calls (fewer of its kernels than its untimed calls
    launch), and work outside the timed windows (another stream: GPU time the events did not see)."""
    from grader.judge.launches import judge_watched
    own = frozenset({"fused_attention_kernel"})
    _, flags = judge_watched([_round(512, 16, extra=[SDPA] * 16)], own, {512: 1})
    assert [(f["code"], f["tier"]) for f in flags] == [("foreign_kernel", "strict")] and "timed calls" in flags[0]["detail"]
    _, flags = judge_watched([_round(512, 12)], own, {512: 1})
    assert [f["code"] for f in flags] == ["timed_launches"] and "launched 12 of its own kernels" in flags[0]["detail"]
    _, flags = judge_watched([_round(512, 16, us_each=100.0, events_ms=0.01)], own, {512: 1})
    assert [f["code"] for f in flags] == ["untimed_work"], flags
    # nothing of its own in a timed round, and a profiler that failed: said, never clean
    _, flags = judge_watched([_round(512, 0)], own, {512: 1})
    assert {f["code"] for f in flags} == {"no_own_kernel", "timed_launches"}
    _, flags = judge_watched([{"S": 512, "kernels": [], "error": "the profiler could not start: X", "event_ms": []}],
                             own, {512: 1})
    assert [f["code"] for f in flags] == ["launch_observation"]


def test_the_childs_report_of_a_watched_round_is_bounded():
    from grader.judge.gpu import CALLS, FILL_LAUNCHES, HARNESS_NAMES
    from grader.judge.judge import _plausible_watch
    good = {"round": 3, "kernels": [{"name": "k", "stream": 1, "us": 2.0}], "event_ms": [0.1] * CALLS, "error": None}
    assert _plausible_watch(good, 3)["kernels"] == [{"name": "k", "stream": 1, "us": 2.0}]
    assert _plausible_watch(good, 4) is None                      # not the round asked for
    assert _plausible_watch({**good, "event_ms": [0.1] * 3}, 3) is None
    assert _plausible_watch({**good, "event_ms": [float("nan")] * CALLS}, 3) is None
    odd = _plausible_watch({**good, "kernels": [{"name": "x" * 10_000, "stream": "s", "us": float("inf")}, 7]}, 3)
    assert odd["kernels"] == [{"name": "x" * 400, "stream": -1, "us": 0.0}]
    # the harness's launches (a counter fill and an L2 flush a call): a few names, no more than
    # FILL_LAUNCHES + 1 launches a call in all
    said = {f"k{i}": CALLS for i in range(HARNESS_NAMES + 5)} | {"many": CALLS * FILL_LAUNCHES + 1, "neg": -1,
                                                                 "str": "3", "bool": True}
    assert _plausible_watch({**good, "harness": said}, 3)["harness"] == {f"k{i}": CALLS for i in range(HARNESS_NAMES)}
    assert _plausible_watch({**good, "harness": {"many": CALLS * FILL_LAUNCHES + 1, "bool": True}}, 3)["harness"] == {}
    assert _plausible_watch({**good, "harness": "x"}, 3)["harness"] == {}
    heavy = {"a": CALLS * FILL_LAUNCHES, "b": 2 * CALLS}          # more than a fill and a flush a call: none taken
    assert _plausible_watch({**good, "harness": heavy}, 3)["harness"] == {}
