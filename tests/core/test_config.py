"""grader/core/config.py: the shipped config loads; every kind of mistake names itself."""
import pytest

from grader.core import config
from grader.core.config import ConfigError


def test_shipped_config_has_the_handout_sizes():
    cfg = config.load()
    assert cfg.tolerance == 1e-3
    assert [s.S for s in cfg.bench_shapes] == [128, 512, 1024]
    assert {(s.B, s.H, s.D) for s in cfg.bench_shapes} == {(1, 8, 64)}
    assert len(cfg.configs) == 4
    # at least one config whose S is not a multiple of 32 (catches unmasked tiles)
    assert any(s.S % 32 for s in cfg.configs)
    # and one whose scores overflow exp() in float32 in every row: the standard deviation of
    # q.k/sqrt(D) is qk_std^2, so 64 here; a row of S such scores has its maximum above 88.7
    from grader.analysis.diagnose import EXP_OVERFLOW
    assert any(s.qk_std ** 2 > EXP_OVERFLOW / 2 for s in cfg.configs)
    assert not cfg.seed_is_secret


def test_round_trip_through_json():
    cfg = config.load()
    assert config.Config.from_json(cfg.to_json()) == cfg


def _write(tmp_path, text, name="c.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _shipped_text():
    return config.DEFAULT_CONFIG.read_text()


def test_unknown_key_is_named(tmp_path):
    p = _write(tmp_path, _shipped_text().replace("tolerance = 1e-3", "tolerence = 1e-3"))
    with pytest.raises(ConfigError, match="unknown key 'tolerence' in \\[correctness\\]"):
        config.load(p)


def test_bad_value_is_named(tmp_path):
    p = _write(tmp_path, _shipped_text().replace("tolerance = 1e-3", 'tolerance = "small"'))
    with pytest.raises(ConfigError, match="tolerance = 'small' must be a number"):
        config.load(p)


def test_bad_shape_is_named(tmp_path):
    p = _write(tmp_path, _shipped_text().replace("S = 333", "S = -3"))
    with pytest.raises(ConfigError, match="S = -3 must be a positive integer"):
        config.load(p)


def test_missing_file_and_bad_toml(tmp_path):
    with pytest.raises(ConfigError, match="^config file .* does not exist"):
        config.load(tmp_path / "nope.toml")
    # a walkthrough's missing --hidden file was "config file ... does not exist": the wrong file named
    with pytest.raises(ConfigError, match=r"^hidden config file \(--hidden\) .*nohidden.toml does not exist"):
        config.load(config.DEFAULT_CONFIG, hidden=tmp_path / "nohidden.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        config.load(_write(tmp_path, "[x\n"))


def test_hidden_file_adds_configs_and_a_secret_seed(tmp_path):
    hidden = _write(tmp_path, "[correctness]\nseed = 1234\n[[correctness.configs]]\n"
                    "B = 1\nH = 1\nS = 77\nD = 64\n", "hidden.toml")
    cfg = config.load(hidden=hidden)
    assert cfg.seed == 1234 and cfg.seed_is_secret
    assert [s.S for s in cfg.hidden_configs] == [77]
    assert len(cfg.all_checks) == len(cfg.configs) + 1


def test_hidden_file_rejects_other_sections(tmp_path):
    hidden = _write(tmp_path, "[benchmark]\nB = 2\n", "hidden.toml")
    with pytest.raises(ConfigError, match="unknown section \\[benchmark\\]"):
        config.load(hidden=hidden)


def test_precision_policy_loads_and_its_mistakes_name_themselves(tmp_path):
    assert config.load_precision() == config.Precision(("fp32", "3xtf32", "tf32"))
    assert config.load_precision().fastest == "tf32"
    without = _write(tmp_path, _shipped_text().replace('allowed = ["fp32", "3xtf32", "tf32"]', ""), "d.toml")
    assert config.load_precision(without) == config.Precision()          # the section is optional
    narrow = _write(tmp_path, _shipped_text().replace('"fp32", "3xtf32", "tf32"', '"3xtf32", "fp32"'), "n.toml")
    assert config.load_precision(narrow).allowed == ("fp32", "3xtf32") and config.load_precision(narrow).fastest == "3xtf32"
    bad = _write(tmp_path, _shipped_text().replace('"fp32", "3xtf32", "tf32"', '"fp32", "bf16"'), "b.toml")
    with pytest.raises(ConfigError, match=r"\[precision\] allowed = \['fp32', 'bf16'\] must be"):
        config.load(bad)
