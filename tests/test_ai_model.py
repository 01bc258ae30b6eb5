"""grader/ai_model.py with literal numbers worked by hand (B=1, H=8, D=64, fp32)."""
import pytest

from grader.ai_model import fused, limits, naive, total, trend


def test_matmul_flops_are_four_b_h_s2_d():
    ks = naive(1, 8, 1024, 64)
    assert [k.matmul_flops for k in ks] == [1_073_741_824, 0, 1_073_741_824]
    assert total("n", ks).matmul_flops == 2_147_483_648 == fused(1, 8, 1024, 64).matmul_flops


def test_softmax_flops_are_counted_by_kind():
    ks = naive(1, 8, 1024, 64)
    ss = 8 * 1024 * 1024
    assert ks[0].softmax_flops == {"scale": ss}
    assert ks[1].softmax_flops == {"max": ss, "sub": ss, "exp": ss, "sum": ss, "div": ss}


def test_every_tensor_read_and_write_is_counted():
    scores, softmax, weighted = naive(1, 8, 1024, 64)
    qkv, ss = 8 * 1024 * 64 * 4, 8 * 1024 * 1024 * 4          # 2 MiB and 32 MiB
    assert scores.bytes_read == {"q": qkv, "k": qkv} and scores.bytes_written == {"scores": ss}
    assert softmax.bytes_read == {"scores": ss} and softmax.bytes_written == {"p": ss}
    assert weighted.bytes_read == {"p": ss, "v": qkv} and weighted.bytes_written == {"out": qkv}
    assert total("n", [scores, softmax, weighted]).bytes_moved == 142_606_336   # 4·8·(4·S·D + 4·S²)
    assert fused(1, 8, 1024, 64).bytes_moved == 8_388_608                        # 4·8·4·S·D


def test_ai_values_at_the_benchmark_sizes():
    assert total("n", naive(1, 8, 1024, 64)).ai_matmul == pytest.approx(2_147_483_648 / 142_606_336)  # 15.06
    assert fused(1, 8, 1024, 64).ai_matmul == 256.0            # S/4
    assert fused(1, 8, 128, 64).ai_matmul == 32.0
    assert naive(1, 8, 1024, 64)[1].ai == pytest.approx(5 / 8)  # softmax: 5 ops per 8 bytes


def test_naive_ai_rises_with_s_and_saturates_at_d_over_4():
    t = trend([128, 512, 1024])
    assert t["naive_ai"][1] > t["naive_ai"][0]                  # rises: the handout's "decreases" is not what the model says
    assert t["fused_factor"] == pytest.approx(8.0, rel=1e-3)   # S/4: x8 from 128 to 1024
    big = total("n", naive(1, 8, 1 << 20, 64)).ai_matmul
    assert big < limits(64)["naive_limit"] == 16.0 and big > 15.99


def test_element_size_scales_bytes():
    assert fused(1, 1, 64, 64, elem_bytes=2).bytes_moved * 2 == fused(1, 1, 64, 64).bytes_moved


def test_model_bytes_next_to_measured_bytes_of_a_real_profile():
    from pathlib import Path

    from grader.ai_model import compare, format_compare
    from grader.ncu import read_files
    ncu = Path(__file__).parent / "fixtures" / "ncu"
    rows = {r["range"]: r for r in compare(read_files([ncu / "references_h200_raw.csv"]), 1, 8, 64)}
    naive_1024 = rows["naive_S1024"]
    assert naive_1024["kernels"] == 3 and naive_1024["model_naive_bytes"] == 142_606_336
    assert naive_1024["dram_bytes"] < naive_1024["model_naive_bytes"] < naive_1024["l2_bytes"]   # L2 absorbs, tiles re-read
    assert rows["fused_S1024"]["dram_bytes"] < rows["fused_S1024"]["model_fused_bytes"] == 8_388_608
    assert naive_1024["l2_cache_bytes"] == 62_914_560
    text = format_compare(list(rows.values()))
    assert "naive at S=1024 moved 94.6 MB from DRAM against 142.6 MB in the model (66%)" in text
