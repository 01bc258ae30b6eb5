"""grader/analysis/ncu.py on real Nsight Compute 2025.3.1 exports (tests/fixtures/ncu, from an H200).

Expected values were read from the files by hand (shared/ncu/FORMATS.md §4.2 works them
out): e.g. qk_kernel's raw_base.csv row has gpu__time_duration.sum = "589,440" ns,
dram__bytes_read.sum = "2,103,296", dram__bytes_write.sum = "17,408".
"""
import json
import subprocess
import sys

import pytest

from grader.analysis.ncu import NcuError, classify, read_files, to_base, to_number

from conftest import REPO, TESTS, without_columns

NCU = TESTS / "fixtures" / "ncu"


def _by_name(profiles):
    return {p.kernel.split("(")[0].replace("void ", ""): p for p in profiles}


@pytest.mark.parametrize("name", ["raw_base.csv", "raw.csv"])
def test_raw_page_base_and_auto_units_give_the_same_roofline(name):
    k = _by_name(read_files([NCU / name]))
    qk, flash = k["qk_kernel"], k["attn::flash_fwd<64, 32, 64>"]
    assert qk.duration_us == pytest.approx(589.44, rel=1e-6)
    assert qk.dram_bytes == pytest.approx(2_103_296 + 17_408, rel=1e-5)
    assert qk.flop_per_s / 1e9 == pytest.approx(917.9, abs=0.1)
    assert qk.ai_dram == pytest.approx(255.1, abs=0.1)
    assert qk.ai_l2 == pytest.approx(4.95, abs=0.01)
    assert k["softmax_kernel"].ai_dram == pytest.approx(1.66, abs=0.01)
    assert k["av_kernel"].ai_dram == pytest.approx(30.09, abs=0.05)
    assert flash.duration_us == pytest.approx(571.23, abs=0.01)
    assert flash.ai_dram == pytest.approx(431.2, abs=0.2) and flash.ai_l2 == pytest.approx(121.6, abs=0.1)
    assert qk.peak_fp32_flop_per_s / 1e12 == pytest.approx(66.9, abs=0.1)
    assert qk.peak_dram_bytes_per_s / 1e12 == pytest.approx(4.81, abs=0.01)
    assert qk.memory_pct == pytest.approx(98.58, abs=0.01) and qk.compute_pct == pytest.approx(11.15, abs=0.05)


def test_details_page_gives_sol_and_duration_but_not_flops():
    k = _by_name(read_files([NCU / "details_base.csv"]))
    qk = k["qk_kernel"]
    assert qk.duration_us == pytest.approx(589.44) and qk.memory_pct == pytest.approx(98.58)
    assert qk.dram_pct == pytest.approx(0.07) and qk.bound == "memory-bound"
    assert qk.flop_per_s is None and qk.ai_dram is None     # the details page has no FLOP inputs


def test_details_auto_units_and_label_name_forms_agree():
    auto = _by_name(read_files([NCU / "details.csv"]))["qk_kernel"]
    labelled = _by_name(read_files([NCU / "details_labelname.csv"]))["qk_kernel"]
    assert auto.duration_us == pytest.approx(589.44) == labelled.duration_us
    assert auto.compute_pct == labelled.compute_pct


def test_live_stdout_with_prof_lines_and_counts():
    k = _by_name(read_files([NCU / "live_metrics_stdout.txt"]))
    qk = k["qk_kernel"]
    assert qk.flop == 2 * 268_435_456 + 0 + 4_194_304            # 2·FFMA + FADD + FMUL
    assert qk.duration_us == pytest.approx(589.472)
    assert len(k) == 4


def test_roofline_details_all_has_rates_without_duration():
    k = _by_name(read_files([NCU / "details_roofline_all.csv"]))
    assert k["qk_kernel"].duration_us is None
    assert k["qk_kernel"].flop_per_s / 1e9 == pytest.approx(918, abs=1)   # rounded auto values
    assert k["attn::flash_fwd<64, 32, 64>"].ai_dram == pytest.approx(431, abs=2)


def test_nvtx_columns_and_python_processes():
    assert len(read_files([NCU / "live_nvtx_raw_stdout.txt"])) == 1
    assert all(p.duration_us > 0 for p in read_files([NCU / "live_python_raw_stdout.txt"]))


def test_merging_details_and_raw_of_one_report():
    k = _by_name(read_files([NCU / "details_base.csv", NCU / "raw_base.csv"]))
    assert k["qk_kernel"].ai_dram == pytest.approx(255.1, abs=0.1) and k["qk_kernel"].launches == 1


def test_units_and_numbers():
    assert to_number('1,166,986') == 1166986.0 and to_number("16,384 (16,384)") == 16384.0
    assert to_number("NVIDIA H200") == "NVIDIA H200"
    assert to_base(589.44, "us") == pytest.approx(589.44e-6) and to_base(3.2, "Ghz") == 3.2e9
    assert to_base(1.504, "Kbyte/cycle") == pytest.approx(1504) and to_base(5.56, "Gbyte/s") == 5.56e9


def test_classification_is_nsight_computes_sol_rule():
    """Thresholds of ncu's SOLBottleneck rule: a side at 80% limits, both under 60% is latency,
    in between balanced within 10 points (a 0.2-point lead is not a verdict), else the busier
    side "more heavily utilized": memory-heavy or compute-heavy, not balanced (issue 28, B5)."""
    assert classify(98.6, 11.2) == "memory-bound"
    assert classify(20.0, 85.0) == "compute-bound"
    assert classify(80.0, 80.0) == "compute-bound"          # a tie goes to compute, as in ncu's rule
    assert classify(79.48, 79.65) == "balanced"             # the naive scores kernel at S = 1024
    assert classify(64.67, 57.34) == "balanced"             # one side at 60% or more: not latency
    assert classify(75.5, 18.6) == "memory-heavy"           # Triton's naive scores kernel, H100, S = 1024
    assert classify(30.0, 70.0) == "compute-heavy"
    assert classify(59.9, 59.9) == "latency-bound"
    assert classify(45.3, 41.9) == "latency-bound"
    assert classify(None, 3.0) is None


EXPORTS = ["references_h200", "naive_h200", "fused_tc_h200", "triton_h100"]


@pytest.mark.parametrize("export", EXPORTS + [f"{e}_warm" for e in EXPORTS])
def test_classify_agrees_with_every_verdict_ncu_wrote(export):
    """The details pages hold Nsight Compute's own SOLBottleneck rule text per kernel: the
    grader's verdict is the same wherever ncu gave one (every kernel of the eight exports)."""
    ps = read_files([NCU / f"{export}_details.csv", NCU / f"{export}_raw.csv"])
    judged = [p for p in ps if p.ncu_verdict]
    assert len(judged) == len(ps) > 10
    expected = {"The kernel is utilizing greater than": None,   # compute- or memory-bound: the busier side
                "This workload is utilizing greater than": None,
                "This kernel grid is too small": "latency-bound", "This workload exhibits low compute": "latency-bound",
                "This kernel exhibits low compute": "latency-bound", "Compute and Memory are well-balanced": "balanced",
                "Compute is more heavily utilized": "compute-heavy", "Memory is more heavily utilized": "memory-heavy"}
    for p in judged:
        start = next(k for k in expected if p.ncu_verdict.startswith(k))
        assert p.bound == (expected[start] or p.bound), (p.nvtx, p.kernel, p.ncu_verdict)
        if expected[start] is None:
            assert p.bound in ("compute-bound", "memory-bound")


def test_more_heavily_utilized_is_not_balanced():
    """Issue 28, B5: the rows the old rule printed as "balanced" though ncu said "Memory is
    more heavily utilized than Compute" (Triton's naive kernels on an H100, S = 1024)."""
    ps = read_files([NCU / "triton_h100_details.csv", NCU / "triton_h100_raw.csv"])
    by = {(p.nvtx, p.kernel): p for p in ps}
    for kernel, memory, sm in (("_scores", 75.5, 18.6), ("_softmax", 65.3, 22.2)):
        p = by[("naive_S1024", kernel)]
        assert (round(p.memory_pct, 1), round(p.compute_pct, 1)) == (memory, sm)
        assert p.ncu_verdict.startswith("Memory is more heavily utilized") and p.bound == "memory-heavy"


def test_busiest_units_name_what_sm_and_memory_percent_measure():
    """SM % is the busiest SM unit, Memory % the busiest memory unit (SOL breakdown, raw page)."""
    ps = read_files([NCU / "references_h200_raw.csv"])
    by = {(p.nvtx, name): p for p in ps
          for name in ("scores_kernel", "softmax_rows_kernel", "fused_tc_kernel", "fused_attention_kernel")
          if name in p.kernel}
    scores = by[("naive_S1024", "scores_kernel")]
    assert (scores.sm_unit, scores.memory_unit) == ("issue slots", "L1")        # not the FMA pipe, not DRAM
    softmax = by[("naive_S1024", "softmax_rows_kernel")]
    assert (softmax.sm_unit, softmax.memory_unit) == ("issue slots", "DRAM")
    assert by[("fused_opt_S1024", "fused_tc_kernel")].sm_unit == "tensor pipe"
    assert by[("fused_S1024", "fused_attention_kernel")].sm_unit == "LSU pipe"
    assert by[("fused_S1024", "fused_attention_kernel")].waves_per_sm == pytest.approx(0.32)
    from grader.analysis.ncu import unit_text
    assert unit_text(scores) == "issue slots 79.7%"
    details_only = _by_name(read_files([NCU / "details_base.csv"]))["qk_kernel"]
    assert details_only.sm_unit is None and details_only.memory_unit in ("L1", "L2", "DRAM")


@pytest.mark.parametrize("export", EXPORTS + [f"{e}_warm" for e in EXPORTS])
def test_memory_percent_is_the_highest_of_ncus_breakdown(export):
    """Issue 28, W2: Memory % (gpu__compute_memory_throughput) is the larger of Mem Busy and Max
    Bandwidth, and the highest entry of the SOL memory breakdown in the raw page, in every kernel
    of every export; the unit named for it is that entry's. Where only the details page is read,
    the unit named is that one or none, never another."""
    from grader.analysis.ncu import busiest_units, read_launches
    pct = ".avg.pct_of_peak_sustained_elapsed"
    launches = read_launches((NCU / f"{export}_raw.csv").read_text(), export)
    assert len(launches) > 10
    for launch in launches:
        m = launch.metrics
        memory = m["gpu__compute_memory_throughput" + pct]
        assert memory == max(m["gpu__compute_memory_access_throughput" + pct], m["gpu__compute_memory_request_throughput" + pct])
        assert busiest_units(m)[3] == pytest.approx(memory, abs=0.011), (launch.nvtx, launch.kernel)
    raw = {(p.nvtx, p.kernel): p for p in read_files([NCU / f"{export}_raw.csv"])}
    details = {(p.nvtx, p.kernel): p for p in read_files([NCU / f"{export}_details.csv"])}
    assert raw.keys() == details.keys()
    for key, p in raw.items():
        assert p.memory_unit in ("L1", "L2", "DRAM") and details[key].memory_unit in (None, p.memory_unit), key


def test_the_l2_line_can_stand_above_memory_percent():
    """Issue 28, W2: the SOL's L2 Cache Throughput (lts__throughput) is not bounded by Memory %:
    the naive softmax kernel at S = 1024 shows L2 52.4% beside Memory 31.8%, which is its DRAM;
    the merge kernel L2 45.6%, Memory 32.9% (DRAM). The old details-page rule, the highest of the
    three SOL lines, named L2 there; the grader names DRAM, and says what Memory % is."""
    from grader.analysis.ncu import BOUND_RULE, memory_unit_of_sol
    for page in ("raw", "details"):
        by = {(p.nvtx, p.kernel.split("(")[0].split("::")[-1].split("<")[0]): p
              for p in read_files([NCU / f"references_h200_{page}.csv"])}
        for key, l2, memory in ((("naive_S1024", "softmax_rows_kernel"), 52.42, 31.84),
                                (("fused_opt_S1024", "merge_splits_kernel"), 45.55, 32.94)):
            p = by[key]
            assert (round(p.l2_pct, 2), round(p.memory_pct, 2), p.memory_unit) == (l2, memory, "DRAM"), (page, key)
            assert max((p.l1_pct, "L1"), (p.l2_pct, "L2"), (p.dram_pct, "DRAM"))[1] == "L2"      # the old rule
    assert memory_unit_of_sol(79.48, 82.30, 15.46, 3.00) == "L1"       # only L1's line reaches it
    assert memory_unit_of_sol(23.01, 28.67, 34.68, 1.94) is None       # L1 and L2 both could: unknown
    rule = " ".join(BOUND_RULE.split())
    assert "the highest of Nsight Compute's memory breakdown" in rule and "L2 can stand above Memory %" in rule
    assert "busiest memory unit" not in rule


def test_cold_and_warm_exports_are_told_apart_by_the_driver_range(tmp_path):
    """Code path only, on a clearly synthetic file: a copy of the real cold export whose outer
    NVTX range is renamed `profile_warm` (what `make profile`'s warm run writes). Nothing
    measured comes from it: its numbers are the cold export's."""
    cold = read_files([NCU / "references_h200_raw.csv"])
    text = (NCU / "references_h200_raw.csv").read_text().replace(":profile:", ":profile_warm:")
    synthetic = tmp_path / "synthetic_warm_raw.csv"
    synthetic.write_text(text)
    warm = read_files([synthetic])
    assert {p.cache for p in cold} == {"cold"} and {p.cache for p in warm} == {"warm"}
    both = read_files([NCU / "references_h200_raw.csv", synthetic])
    assert len(both) == 2 * len(cold)                  # grouped per cache state, never merged
    assert "cache" in subprocess.run([sys.executable, "-m", "grader", "ncu", str(synthetic)], cwd=REPO,
                                     capture_output=True, text=True).stdout


@pytest.mark.parametrize("content,phrase", [
    (b"", "is empty"),
    (b"a,b,c\n1,2,3\n", "no Nsight Compute CSV table"),
    (b"NVIDIA\x00\x01binary", "binary file"),
])
def test_bad_input_is_one_clear_error(tmp_path, content, phrase):
    f = tmp_path / "x.csv"
    f.write_bytes(content)
    with pytest.raises(NcuError, match=phrase) as e:
        read_files([f])
    assert "ncu -i report.ncu-rep --csv --page raw --print-units base" in str(e.value)


def test_truncated_raw_file(tmp_path):
    text = (NCU / "raw_filtered.csv").read_text()
    f = tmp_path / "cut.csv"
    f.write_text(text[: len(text) - 40])                          # the last row is cut short
    with pytest.raises(NcuError, match="truncated"):
        read_files([f])


def test_cli_table_json_and_errors(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "grader", "ncu", *a], cwd=REPO,  # noqa: E731
                                    capture_output=True, text=True)
    table = run(str(NCU / "raw_base.csv"))
    assert table.returncode == 0 and "qk_kernel" in table.stdout and "SOL bottleneck rule" in table.stdout
    doc = json.loads(run(str(NCU / "raw_base.csv"), "--json").stdout)
    required = {"kernel", "launches", "duration_us", "memory_pct", "compute_pct", "dram_pct", "dram_bytes",
                "flop_per_s", "ai_dram", "ai_l2", "bound", "sm_unit", "memory_unit", "cache"}
    assert len(doc) == 4 and all(required <= set(d) for d in doc)
    empty = tmp_path / "e.csv"
    empty.write_text("")
    bad = run(str(empty))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_make_profile_exports_of_the_references_round_trip():
    """The CSVs `make profile` wrote on the H200 parse back, one row per NVTX range and kernel."""
    ps = read_files([NCU / "references_h200_details.csv", NCU / "references_h200_raw.csv"])
    by = {(p.nvtx, p.kernel.split("::")[-1].split("(")[0]): p for p in ps}
    assert len(ps) == 21                                      # (student, 3 naive, fused, 2 fused_opt) x 3 sizes
    naive_scores = by[("naive_S1024", "scores_kernel")]
    assert naive_scores.bound == "balanced"                   # SOL SM 79.7%, Memory 79.5%: neither reaches 80%
    fused = by[("fused_S1024", "fused_attention_kernel<64>")]
    assert fused.duration_us == pytest.approx(138.59, abs=0.01)
    assert fused.ai_dram > 300 and naive_scores.ai_l2_delivered < 9   # the S×S scores cost shows at L2, not DRAM
    assert all(p.flop_per_s and p.dram_bytes for p in ps)


def test_the_l2_level_counts_what_the_sms_received(tmp_path):
    """Issue 28, item 1: two counts at L2. What the SMs received (32 B x xbar2l1tex sectors, each
    SM's copy) is the fused kernel's tiling exactly: q once, k and v once per 64-row block, 16
    times a head at S = 1024. What L2 sent out (32 B x lts2xbar cycles, ncu's L2 roofline) is a
    third of it: a line the 16 blocks of a head read at once is one transfer. AI at L2 is the
    first (31.6 FLOP/byte, the tiled limit 2·64/e = 32), not the second (105.7)."""
    from grader.analysis.ncu import l2_level
    ps = read_files([NCU / "references_h200_details.csv", NCU / "references_h200_raw.csv"])
    by = {(p.nvtx, p.kernel.split("::")[-1].split("(")[0]): p for p in ps}
    fused = by[("fused_S1024", "fused_attention_kernel<64>")]
    qkv = 8 * 1024 * 64 * 4                                   # one of q, k, v: H x S x D floats
    assert fused.l2_delivered_bytes == qkv + 2 * 16 * qkv == 69_206_016
    assert fused.l2_bytes == pytest.approx(20.71e6, rel=1e-3) and fused.l2_bytes < fused.l2_delivered_bytes / 3
    assert fused.ai_l2_delivered == pytest.approx(31.63, abs=0.01) and fused.ai_l2 == pytest.approx(105.71, abs=0.01)
    assert l2_level(fused)[:3] == ("L2→SM", fused.l2_delivered_bytes, fused.ai_l2_delivered)
    naive = [by[("naive_S1024", k)] for k in ("scores_kernel", "softmax_rows_kernel", "weighted_sum_kernel")]
    assert [round(p.ai_l2_delivered, 2) for p in naive] == [8.47, 5.41, 8.0]
    older = read_files([without_columns(NCU / "naive_h200_raw.csv", tmp_path / "old_raw.csv")])   # L2→SM columns removed
    assert older and all(p.l2_delivered_bytes is None and l2_level(p)[0] == "L2 out" for p in older)
    assert all(p.l2_delivered_bytes and l2_level(p)[0] == "L2→SM" for p in read_files([NCU / "naive_h200_raw.csv"]))


@pytest.mark.parametrize("name", ["raw.csv", "raw_base.csv", "details.csv", "details_base.csv",
                                  "details_labelname.csv", "details_roofline_all.csv", "live_metrics_stdout.txt",
                                  "live_sol_roofline_stdout.txt", "live_nvtx_raw_stdout.txt",
                                  "live_python_raw_stdout.txt", "raw_filtered.csv", "raw_instances_values.csv",
                                  "raw_fp.csv", "raw_mangled.csv"])
def test_every_export_form_parses(name):
    profiles = read_files([NCU / name])
    assert profiles and all(p.launches >= 1 for p in profiles)
    qk = [p for p in profiles if "qk_kernel" in p.kernel or "9qk_kernel" in p.kernel]
    for p in qk:                                      # wherever qk_kernel's duration is exported
        if p.duration_us is not None:
            assert p.duration_us == pytest.approx(589.5, abs=0.2)   # separate runs: 589.44-589.57 us


def test_live_output_with_warnings_between_kernels():
    k = _by_name(read_files([NCU / "live_sol_roofline_stdout.txt"]))
    assert len(k) == 4 and k["qk_kernel"].memory_pct > 90


def test_mangled_names_and_instance_lists():
    assert any(p.kernel.startswith("_Z") for p in read_files([NCU / "raw_mangled.csv"]))
    assert read_files([NCU / "raw_instances_values.csv"])          # "16,384 (16,384)" cells


def test_tool_kernels_are_kept_but_marked():
    from grader.analysis.ncu import TOOL_KERNEL
    assert TOOL_KERNEL.search("void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4>")
    assert TOOL_KERNEL.search("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>")
    assert not TOOL_KERNEL.search("fused_attention_kernel<64>(const float *, const float *)")
