"""grader/analysis/roofline.py and grader/evidence/advisor.py: ceilings, points, the SVG chart."""
import re
import subprocess
import sys

import pytest

from grader.analysis import roofline
from grader.evidence.advisor import AdvisorError, roofs, survey_points
from grader.analysis.ncu import read_files

from conftest import REPO, TESTS, without_columns

NCU = TESTS / "fixtures" / "ncu"
ADVISOR = TESTS / "fixtures" / "advisor"


def test_gpu_ceilings_come_from_the_export(tmp_path):
    c = roofline.gpu_ceilings(read_files([NCU / "references_h200_raw.csv"]))
    assert c.peak_flop_per_s / 1e12 == pytest.approx(66.8, abs=0.2)
    assert c.bandwidth_bytes_per_s["DRAM"] / 1e12 == pytest.approx(4.81, abs=0.01)
    # an export with the delivered bytes: both L2 roofs, L2 out (what L2 can send) and the L2→SM
    # port roof (every SM's L1 input at once), 3.3x higher (issue 28, M1)
    assert set(c.bandwidth_bytes_per_s) == {"DRAM", "L2 out", "L2→SM"}
    assert c.bandwidth_bytes_per_s["L2→SM"] / 1e12 == pytest.approx(33.6, abs=0.1)
    assert c.bandwidth_bytes_per_s["L2 out"] / 1e12 == pytest.approx(10.26, abs=0.05)
    assert c.ridge("DRAM") == pytest.approx(13.9, abs=0.1)
    assert "Nsight Compute" in c.source
    # an export without them (as one taken before make profile asked for them: a real one, the
    # L2→SM columns removed): L2's output, ncu's own L2 roofline
    old = roofline.gpu_ceilings(read_files([without_columns(NCU / "naive_h200_raw.csv", tmp_path / "old_raw.csv")]))
    assert set(old.bandwidth_bytes_per_s) == {"DRAM", "L2 out"}
    assert old.bandwidth_bytes_per_s["L2 out"] / 1e12 == pytest.approx(10.27, abs=0.05)


def test_the_tables_l2_peaks_are_the_exports():
    """The fallback table's L2 roofs are Nsight Compute's own peaks of L2's output in an H200 and
    an H100 export (the H100's L2 has fewer slices: 160 lts2xbar cycles a cycle, not the H200's 188)."""
    for device, fixture in (("H200", "references_h200_raw.csv"), ("H100", "triton_h100_raw.csv")):
        exported = max(p.peak_l2_bytes_per_s for p in read_files([NCU / fixture]) if p.peak_l2_bytes_per_s)
        assert roofline.GPU_TABLE[device].bandwidth_bytes_per_s["L2 out"] == pytest.approx(exported, rel=0.01), device


def test_without_peaks_the_table_is_used():
    c = roofline.gpu_ceilings(read_files([NCU / "details_base.csv"]))   # SOL only, no peaks
    assert c.source.startswith("table") and c.bandwidth_bytes_per_s["DRAM"] == 4.8e12


def test_gpu_points_at_two_levels_per_kernel(tmp_path):
    points = roofline.gpu_points(read_files([NCU / "references_h200_raw.csv"]))
    assert len(points) == 42                                        # 21 kernels x (DRAM, L2)
    scores = [p for p in points if p.label == "naive_S1024: scores_kernel"]
    assert {p.level for p in scores} == {"DRAM", "L2→SM"} and {p.group for p in scores} == {"naive"}
    older = roofline.gpu_points(read_files([without_columns(NCU / "naive_h200_raw.csv", tmp_path / "old_raw.csv")]))
    assert {p.level for p in older} == {"DRAM", "L2 out"}


def test_cpu_points_use_the_ai_model():
    row = {"S": 1024, "B": 1, "H": 8, "D": 64, "student_ms": 80.0, "naive_ms": 130.0, "fused_ms": 70.0}
    points = {p.group: p for p in roofline.cpu_points([row])}
    assert points["fused"].ai == pytest.approx(2_147_483_648 / 8_388_608)      # model FLOPs (4·B·H·S²·D) / bytes
    assert points["naive"].flop_per_s == pytest.approx(2_147_483_648 / 0.130)


def test_chart_is_an_svg_with_roofs_and_points(tmp_path):
    profiles = read_files([NCU / "references_h200_raw.csv"])
    path = roofline.chart(roofline.gpu_ceilings(profiles), roofline.gpu_points(profiles)[:8], tmp_path / "r.svg")
    text = path.read_text()
    assert text.startswith("<?xml") and "<svg" in text and len(re.findall(r"<path", text)) > 10


def test_measured_cpu_ceilings_are_plausible(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_CACHE", str(tmp_path))
    c = roofline.measure_cpu_ceilings(threads=1, cache=False)
    assert 1e9 < c.peak_flop_per_s < 1e13 and 1e8 < c.bandwidth_bytes_per_s["DRAM"] < 1e12
    assert "measured on this CPU" in c.source


def test_advisor_survey_points_and_roofs():
    points = survey_points(ADVISOR / "survey.csv")
    labels = {(p.label, p.level) for p in points}
    assert ("loop in attend_block at fused.cpp:88", "advisor") in labels
    attend = next(p for p in points if p.level == "DRAM" and "attend_block" in p.label)
    assert attend.ai == pytest.approx(30.0 / 0.9) and attend.flop_per_s == 25e9
    assert all("softmax_pass" not in p.label for p in points)      # no FLOP data: no dot
    c = roofs(ADVISOR / "roofs.csv")
    assert c.peak_flop_per_s == 170e9 and c.bandwidth_bytes_per_s["DRAM"] == 11e9


def test_advisor_bad_input(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("a,b\n1,2\n")
    with pytest.raises(AdvisorError, match="advisor --report=survey --format=csv"):
        survey_points(f)


def test_cli_roofline_from_ncu(tmp_path):
    out = tmp_path / "roof.svg"
    proc = subprocess.run([sys.executable, "-m", "grader", "roofline", "--ncu", str(NCU / "references_h200_raw.csv"),
                           "--out", str(out)], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.exists() and "ridge 13.9 FLOP/byte" in proc.stdout


def test_tensor_core_ranges_use_the_model_flops():
    """fused_opt multiplies on tensor cores: the FP32 counters see ~6% of its FLOPs, so its
    roofline points use the model's FLOPs over its measured time; the other ranges keep the
    counters (the naive and simple fused kernels' counters match the model)."""
    from grader.analysis.ai_model import fused
    profiles = read_files([NCU / "references_h200_raw.csv"])
    tc = roofline.tensor_core_ranges(profiles, 1, 8, 64)
    assert set(tc) == {"fused_opt_S128", "fused_opt_S512", "fused_opt_S1024"}
    counted, model = tc["fused_opt_S1024"]
    assert model == fused(1, 8, 1024, 64).flops and counted < 0.1 * model
    points = roofline.gpu_points(profiles, (1, 8, 64))
    opt = [p for p in points if p.label == "fused_opt_S1024 (model FLOPs)"]
    assert {p.level for p in opt} == {"DRAM", "L2→SM"}
    seconds = sum(p.total_duration_us for p in profiles if p.nvtx == "fused_opt_S1024") * 1e-6
    assert opt[0].flop_per_s == pytest.approx(model / seconds)
    assert 30e12 < opt[0].flop_per_s < 66.8e12                   # ~43 TFLOP/s (45.4 + 5.5 us)
    assert not [p for p in points if p.group == "fused_opt" and "model FLOPs" not in p.label]
    assert len([p for p in points if p.group == "naive"]) == 18   # counters kept: 3 sizes x 3 kernels x 2 levels
    assert len(roofline.gpu_points(profiles)) == 42               # without the shape: every kernel's counters


def test_precision_ceilings_of_an_h200():
    """FP32 FMA, 3xTF32 and TF32 peaks from SMs x FLOPs per SM per clock x clock."""
    c = roofline.precision_ceilings(132, 1.98e9, "9.0")
    assert c["fp32"] == pytest.approx(66.9e12, rel=1e-3)            # 132 x 256 x 1.98 GHz
    assert c["tf32"] == pytest.approx(535.3e12, rel=1e-3)           # 132 x 2,048 x 1.98 GHz
    assert c["3xtf32"] == pytest.approx(c["tf32"] / 3)
    assert roofline.precision_ceilings(132, 1.83e9, "9.0")["tf32"] == pytest.approx(494.7e12, rel=1e-3)  # datasheet
    assert roofline.precision_ceilings(108, 1.41e9, "8.0")["fp32"] == pytest.approx(19.5e12, rel=1e-2)   # A100
    assert roofline.precision_ceilings(10, 1e9, "7.5") == {}


def test_the_roofline_draws_the_cold_export_only(tmp_path):
    """A warm export (synthetic copy, outer range renamed) adds no points."""
    text = (NCU / "references_h200_raw.csv").read_text().replace(":profile:", ":profile_warm:")
    (tmp_path / "synthetic_warm_raw.csv").write_text(text)
    both = read_files([NCU / "references_h200_raw.csv", tmp_path / "synthetic_warm_raw.csv"])
    cold = read_files([NCU / "references_h200_raw.csv"])
    assert roofline.gpu_points(both, (1, 8, 64)) == roofline.gpu_points(cold, (1, 8, 64))
    assert len(roofline.of_cache(both, "warm")) == 21


def test_both_l2_roofs_and_what_the_sms_received(tmp_path):
    """Issue 28, M1: the L2→SM port roof (33.6 TB/s) is not a bandwidth L2 can supply; L2 out
    (10.3 TB/s) bounds every line one SM reads alone. Both are drawn, each says what it bounds,
    and no kernel of the course's H200 exports received more than ~2.1 TB/s from L2 (the
    references' cold export: 1.7 TB/s, the naive scores kernel)."""
    from grader.analysis.roofline import L2_IN, L2_OUT, ROOFS, fastest_l2_delivery, kernel_label
    profiles = read_files([NCU / "references_h200_raw.csv"])
    c = roofline.gpu_ceilings(profiles)
    port, out = c.bandwidth_bytes_per_s[L2_IN], c.bandwidth_bytes_per_s[L2_OUT]
    assert 3 < port / out < 3.5
    rate, p = fastest_l2_delivery(profiles)
    assert kernel_label(p) == "naive_S1024: scores_kernel" and rate == pytest.approx(1.705e12, rel=1e-3)
    assert rate == max(q.l2_delivered_bytes / (q.total_duration_us * 1e-6) for q in profiles)
    every = [fastest_l2_delivery(read_files([f]))[0] for f in sorted(NCU.glob("*_h200*_raw.csv"))]
    assert len(every) == 6 and 2.0e12 < max(every) < 2.2e12 and max(every) < out / 4
    assert "multicasts" in ROOFS[L2_IN] and "one SM reads alone" in ROOFS[L2_OUT]
    text = roofline.chart(c, roofline.gpu_points(profiles)[:4], tmp_path / "r.svg").read_text()
    assert all(word in text for word in ("L2 out roof", "L2→SM roof", "multicasts", "one SM reads alone"))
    proc = subprocess.run([sys.executable, "-m", "grader", "roofline", "--ncu", str(NCU / "references_h200_raw.csv"),
                           "--out", str(tmp_path / "r2.svg")], cwd=REPO, capture_output=True, text=True)
    assert "fastest L2→SM delivery measured: 1,705.2 GB/s (naive_S1024: scores_kernel)" in proc.stdout
