"""reference/*.cpp graded as submissions through the student path: ok, and accurate."""
import pytest

from conftest import REPO


@pytest.mark.parametrize("name", ["naive", "fused", "fused_opt"])
def test_cpu_reference_is_ok_within_1e4(grade_cpu, name):
    result = grade_cpu(REPO / "reference" / f"{name}.cpp", bench=True)
    assert result.verdict == "ok", result.message
    assert all(c.max_err <= 1e-4 for c in result.checks), [c.max_err for c in result.checks]
    assert result.bench and all(b.recheck_max_err <= 1e-4 for b in result.bench)
