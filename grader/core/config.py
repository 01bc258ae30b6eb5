"""Load and validate the assignment config (`assignment/config.toml`).

The config is the assignment as data: correctness shapes and tolerance, benchmark
sizes, timing repetitions and per-stage timeouts. A wrong key or value raises
`ConfigError` with a sentence that names it; the CLI prints that one line.
"""
from __future__ import annotations

import tomllib
from datetime import datetime
from dataclasses import dataclass, replace
from pathlib import Path

GRADER_DIR = Path(__file__).resolve().parents[1]       # the grader package
REPO_ROOT = GRADER_DIR.parent
PRISTINE_DIR = GRADER_DIR / "pristine"   # the template as shipped: attention.py, report.md (data, not code)
DEFAULT_CONFIG = REPO_ROOT / "assignment" / "config.toml"


class ConfigError(Exception):
    """The instructor's config is wrong; the message says where and how to fix it."""


@dataclass(frozen=True)
class Shape:
    """One problem size: q, k, v are (B, H, S, D) float32. Entries are standard normal,
    q's and k's times `qk_std` (large scores for a numerical-stability config; v stays
    standard normal, so the output stays O(1) and the absolute tolerance keeps its meaning)."""
    B: int
    H: int
    S: int
    D: int
    qk_std: float = 1.0

    def as_dict(self) -> dict:
        d = {"B": self.B, "H": self.H, "S": self.S, "D": self.D}
        if self.qk_std != 1.0:
            d["qk_std"] = self.qk_std
        return d

    def __str__(self) -> str:
        return f"B={self.B} H={self.H} S={self.S} D={self.D}"


@dataclass(frozen=True)
class Config:
    tolerance: float
    seed: int
    configs: tuple[Shape, ...]          # public correctness configs
    hidden_configs: tuple[Shape, ...]   # instructor-only, never printed in full
    bench_shapes: tuple[Shape, ...]
    warmup_reps: int
    min_reps: int
    max_reps: int
    rep_ms: float
    threads: int                        # 0 = all cores
    timeout_compile: float
    timeout_check: float
    timeout_bench: float
    cpp_flags: tuple[str, ...] = ("-O3",)
    cpp_ldflags: tuple[str, ...] = ()
    cuda_flags: tuple[str, ...] = ("-O3",)
    cuda_arch: str = "auto"
    seed_is_secret: bool = False        # True when the seed came from --hidden / --seed
    source: str = str(DEFAULT_CONFIG)
    timeout_whole: float = 0.0          # wall-clock cap on one submission; 0: timeout_total's default
    max_spread: float = 0.0             # timings' IQR/median above this: a noisy size (0: quality.NOISY_SPREAD, per backend)
    precision: float = 0.01             # the slowdown's 95% interval half-width asked for (0: no more rounds for it)
    precision_cap_s: float = 0.0        # seconds of timing per size at most (0: confidence.CAP_S, per backend)
    tier_bounds: tuple[float, ...] = () # the rubric's performance tiers' max_slowdown (the stopping rule's boundaries)

    @property
    def timeout_total(self) -> float:
        """Seconds one submission may take in all (the child's start, compile, every check
        and benchmark size): `[timeouts] total`, else compile + check + bench + 60."""
        return self.timeout_whole or (self.timeout_compile + self.timeout_check + self.timeout_bench + 60)

    @property
    def all_checks(self) -> tuple[Shape, ...]:
        return self.configs + self.hidden_configs

    def to_json(self) -> dict:
        """Everything a child process needs to rebuild this config (hidden parts included)."""
        return {
            "tolerance": self.tolerance, "seed": self.seed,
            "configs": [s.as_dict() for s in self.configs],
            "hidden_configs": [s.as_dict() for s in self.hidden_configs],
            "bench_shapes": [s.as_dict() for s in self.bench_shapes],
            "warmup_reps": self.warmup_reps, "min_reps": self.min_reps,
            "max_reps": self.max_reps, "rep_ms": self.rep_ms, "threads": self.threads,
            "timeout_compile": self.timeout_compile, "timeout_check": self.timeout_check,
            "timeout_bench": self.timeout_bench, "cpp_flags": list(self.cpp_flags),
            "cpp_ldflags": list(self.cpp_ldflags), "cuda_flags": list(self.cuda_flags),
            "cuda_arch": self.cuda_arch, "seed_is_secret": self.seed_is_secret,
            "source": self.source, "timeout_whole": self.timeout_whole, "max_spread": self.max_spread,
            "precision": self.precision, "precision_cap_s": self.precision_cap_s, "tier_bounds": list(self.tier_bounds),
        }

    @staticmethod
    def from_json(d: dict) -> "Config":
        shapes = lambda key: tuple(Shape(**s) for s in d[key])  # noqa: E731
        flags = {k: tuple(d[k]) for k in ("cpp_flags", "cpp_ldflags", "cuda_flags")}
        flags["tier_bounds"] = tuple(d.get("tier_bounds", ()))
        return Config(**{**{"timeout_whole": 0.0, "max_spread": 0.0}, **d, **flags, "configs": shapes("configs"),
                         "hidden_configs": shapes("hidden_configs"),
                         "bench_shapes": shapes("bench_shapes")})


_SCHEMA = {
    "assignment": {"name": str, "title": str},
    "correctness": {"tolerance": float, "seed": int, "configs": list},
    "benchmark": {"B": int, "H": int, "D": int, "S": list, "warmup_reps": int,
                  "min_reps": int, "max_reps": int, "rep_ms": float, "threads": int},
    "compile": {"cpp_flags": list, "cpp_ldflags": list, "cuda_flags": list, "cuda_arch": str},
    "timeouts": {"compile": float, "check": float, "bench": float},
}
_OPTIONAL_KEYS = {"timeouts": {"total": float},    # optional keys of required sections
                  "benchmark": {"max_spread": float, "precision": float, "precision_cap_s": float}}
# Optional sections: [rubric] and [deadline] (the batch grader, grader/score/gradebook.py),
# [precision] (the handout and the speed review flags, grader/judge/integrity.py).
_OPTIONAL_SCHEMA = {
    "precision": {"allowed": list},
    "rubric": {"config_points": list, "hidden_points": float, "performance": list,
               "profile_points": float, "before_after_points": float, "written_points": float},
    "deadline": {"due": str, "grace_minutes": float, "penalty_per_day": float,
                 "max_late_days": float, "timestamps": str},
}
_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", list: "a list"}
_HIDDEN_SCHEMA = {"correctness": {"seed": int, "configs": list}}


def _check_keys(data: dict, schema: dict, where: str, required: bool = True) -> None:
    for section, value in data.items():
        if section not in schema:
            raise ConfigError(f"{where}: unknown section [{section}] "
                              f"(expected one of {', '.join(sorted(schema))})")
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: [{section}] must be a table")
        for key, val in value.items():
            if key not in schema[section]:
                raise ConfigError(f"{where}: unknown key '{key}' in [{section}] "
                                  f"(expected one of {', '.join(sorted(schema[section]))})")
            want = schema[section][key]
            ok = isinstance(val, want) and not isinstance(val, bool)
            if want is float:
                ok = isinstance(val, (int, float)) and not isinstance(val, bool)
            if not ok:
                raise ConfigError(f"{where}: [{section}] {key} = {val!r} must be {_TYPE_NAMES[want]}")
    if required:
        for section, keys in schema.items():
            for key in keys:
                if key not in data.get(section, {}):
                    raise ConfigError(f"{where}: missing key '{key}' in [{section}]")


def _positive(value, what: str, where: str) -> None:
    if value <= 0:
        raise ConfigError(f"{where}: {what} = {value!r} must be > 0")


def _shapes(items: list, where: str, section: str) -> tuple[Shape, ...]:
    shapes = []
    for i, item in enumerate(items):
        label = f"{where}: [[{section}]] entry {i + 1}"
        if not isinstance(item, dict) or not {"B", "H", "S", "D"} <= set(item) <= {"B", "H", "S", "D", "qk_std"}:
            raise ConfigError(f"{label} must have the keys B, H, S, D and optionally qk_std (got {item!r})")
        for key, val in item.items():
            if key == "qk_std":
                if not isinstance(val, (int, float)) or isinstance(val, bool) or not 0 < val <= 1000:
                    raise ConfigError(f"{label}: qk_std = {val!r} must be a number in (0, 1000]")
            elif not isinstance(val, int) or isinstance(val, bool) or val <= 0:
                raise ConfigError(f"{label}: {key} = {val!r} must be a positive integer")
        shapes.append(Shape(**{**item, "qk_std": float(item.get("qk_std", 1.0))}))
    return tuple(shapes)


def _read_toml(path: Path, kind: str = "config file") -> dict:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{kind} {path} does not exist") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from None


def load(path: Path | str = DEFAULT_CONFIG, hidden: Path | str | None = None,
         seed: int | None = None) -> Config:
    """Read and validate the config; `hidden` adds instructor-only configs and seed."""
    path = Path(path)
    data = _read_toml(path)
    where = str(path)
    required = {k: {kk: vv for kk, vv in v.items() if kk not in _OPTIONAL_KEYS.get(k, {})} if isinstance(v, dict) else v
                for k, v in data.items() if k not in _OPTIONAL_SCHEMA}
    _check_keys(required, _SCHEMA, where)
    optional = {k: {kk: vv for kk, vv in data[k].items() if kk in keys} for k, keys in _OPTIONAL_KEYS.items()
                if isinstance(data.get(k), dict)}
    _check_keys(optional, _OPTIONAL_KEYS, where, required=False)
    rubric, _ = load_rubric(path, data)
    load_precision(path, data)
    corr, bench, tmo = data["correctness"], data["benchmark"], data["timeouts"]
    configs = _shapes(corr["configs"], where, "correctness.configs")
    if not configs:
        raise ConfigError(f"{where}: [correctness] needs at least one config")
    _positive(corr["tolerance"], "[correctness] tolerance", where)
    sizes = bench["S"]
    if not sizes or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes):
        raise ConfigError(f"{where}: [benchmark] S = {sizes!r} must be a non-empty list of positive integers")
    for key in ("B", "H", "D", "min_reps", "max_reps", "rep_ms", "max_spread"):
        if key in bench:
            _positive(bench[key], f"[benchmark] {key}", where)
    for key in ("precision", "precision_cap_s"):
        if key in bench and (isinstance(bench[key], bool) or not bench[key] >= 0):
            raise ConfigError(f"{where}: [benchmark] {key} = {bench[key]!r} must be a number >= 0")
    if bench.get("precision", 0) >= 1:
        raise ConfigError(f"{where}: [benchmark] precision = {bench['precision']!r} is a fraction of the "
                          "slowdown (0.01: its 95% interval within ±1%)")
    if bench["warmup_reps"] < 0 or bench["threads"] < 0:
        raise ConfigError(f"{where}: [benchmark] warmup_reps and threads must be >= 0")
    if bench["min_reps"] > bench["max_reps"]:
        raise ConfigError(f"{where}: [benchmark] min_reps must be <= max_reps")
    for key in ("compile", "check", "bench", "total"):
        if key in tmo:
            _positive(tmo[key], f"[timeouts] {key}", where)
    comp = data["compile"]
    for key in ("cpp_flags", "cpp_ldflags", "cuda_flags"):
        if not all(isinstance(f, str) for f in comp[key]):
            raise ConfigError(f"{where}: [compile] {key} must be a list of strings")
    arch = comp["cuda_arch"]
    if arch != "auto" and not all(p.isdigit() for p in arch.rstrip("a").split(".")):
        raise ConfigError(f"{where}: [compile] cuda_arch = {arch!r} must be \"auto\" or like \"9.0\"")

    hidden_configs: tuple[Shape, ...] = ()
    final_seed = corr["seed"]
    if hidden is not None:
        hpath = Path(hidden)
        hdata = _read_toml(hpath, "hidden config file (--hidden)")
        _check_keys(hdata, _HIDDEN_SCHEMA, str(hpath), required=False)
        hcorr = hdata.get("correctness", {})
        hidden_configs = _shapes(hcorr.get("configs", []), str(hpath), "correctness.configs")
        final_seed = hcorr.get("seed", final_seed)
    if seed is not None:
        final_seed = seed
    secret = final_seed != corr["seed"] or (hidden is not None and "seed" in hcorr)
    return Config(
        tolerance=float(corr["tolerance"]), seed=int(final_seed), configs=configs,
        hidden_configs=hidden_configs,
        bench_shapes=tuple(Shape(bench["B"], bench["H"], s, bench["D"]) for s in sizes),
        warmup_reps=bench["warmup_reps"], min_reps=bench["min_reps"],
        max_reps=bench["max_reps"], rep_ms=float(bench["rep_ms"]), threads=bench["threads"],
        timeout_compile=float(tmo["compile"]), timeout_check=float(tmo["check"]),
        timeout_bench=float(tmo["bench"]), cpp_flags=tuple(comp["cpp_flags"]),
        cpp_ldflags=tuple(comp["cpp_ldflags"]), cuda_flags=tuple(comp["cuda_flags"]),
        cuda_arch=arch, seed_is_secret=secret, source=where, timeout_whole=float(tmo.get("total", 0)),
        max_spread=float(bench.get("max_spread", 0)), precision=float(bench.get("precision", 0.01)),
        precision_cap_s=float(bench.get("precision_cap_s", 0)),
        tier_bounds=tuple(sorted(m for m, _ in rubric.performance)),
    )


def with_timeouts(cfg: Config, compile: float | None = None, run: float | None = None,
                  total: float | None = None) -> Config:
    """Override per-stage timeouts (batch mode's --timeout-compile / --timeout-run /
    --timeout-total)."""
    changes = {}
    if compile is not None:
        changes["timeout_compile"] = compile
    if run is not None:
        changes.update(timeout_check=run, timeout_bench=run)
    if total is not None:
        changes["timeout_whole"] = total
    return replace(cfg, **changes)


# ---- the batch grader's sections: [rubric] and [deadline] ---------------------------------

@dataclass(frozen=True)
class Rubric:
    config_points: tuple[float, ...]         # per public correctness config, in order
    hidden_points: float                     # per hidden config
    performance: tuple[tuple[float, float], ...]   # (max_slowdown, points), best tier first
    profile_points: float                    # profiler evidence handed in (profiles/ parses)
    before_after_points: float               # two labelled profiles (before / after)
    written_points: float                    # per written section of report.md (four)

    def max_score(self, hidden: int) -> float:
        return (sum(self.config_points) + self.hidden_points * hidden
                + max((p for _, p in self.performance), default=0) + self.profile_points
                + self.before_after_points + 4 * self.written_points)


@dataclass(frozen=True)
class Deadline:
    due: datetime                          # timezone-aware
    grace_minutes: float = 0
    penalty_per_day: float = 0.0             # fraction of the score lost per started late day
    max_late_days: float = 0                 # later than this: score 0 (0 = no cut-off)
    timestamps: str = "timestamps.csv"       # in the submissions folder: submission,submitted_at


DEFAULT_RUBRIC = Rubric(config_points=(), hidden_points=0, performance=(), profile_points=0,
                        before_after_points=0, written_points=0)


def load_rubric(path: Path | str = DEFAULT_CONFIG, data: dict | None = None) -> tuple[Rubric, Deadline | None]:
    """[rubric] and [deadline] of the config, validated (both optional)."""
    path = Path(path)
    data = _read_toml(path) if data is None else data
    where = str(path)
    optional = {k: v for k, v in data.items() if k in _OPTIONAL_SCHEMA}
    due = optional.get("deadline", {}).get("due")
    if isinstance(due, datetime):            # a TOML datetime literal
        optional = {**optional, "deadline": {**optional["deadline"], "due": due.isoformat()}}
    _check_keys(optional, _OPTIONAL_SCHEMA, where, required=False)
    r = optional.get("rubric", {})
    n_configs = len(data.get("correctness", {}).get("configs", []))
    points = r.get("config_points", [0] * n_configs)
    if len(points) != n_configs or not all(isinstance(p, (int, float)) and p >= 0 for p in points):
        raise ConfigError(f"{where}: [rubric] config_points must be {n_configs} numbers >= 0, one "
                          f"per [[correctness.configs]] entry (got {points!r})")
    tiers = []
    for i, tier in enumerate(r.get("performance", [])):
        if not isinstance(tier, dict) or set(tier) != {"max_slowdown", "points"} or not all(
                isinstance(x, (int, float)) and x > 0 for x in tier.values()):
            raise ConfigError(f"{where}: [[rubric.performance]] entry {i + 1} must have exactly "
                              f"max_slowdown > 0 and points > 0 (got {tier!r})")
        tiers.append((float(tier["max_slowdown"]), float(tier["points"])))
    for key in ("hidden_points", "profile_points", "before_after_points", "written_points"):
        if r.get(key, 0) < 0:
            raise ConfigError(f"{where}: [rubric] {key} must be >= 0")
    rubric = Rubric(config_points=tuple(float(p) for p in points),
                    hidden_points=float(r.get("hidden_points", 0)),
                    performance=tuple(sorted(tiers)), profile_points=float(r.get("profile_points", 0)),
                    before_after_points=float(r.get("before_after_points", 0)),
                    written_points=float(r.get("written_points", 0)))
    d = optional.get("deadline")
    if d is None:
        return rubric, None
    if "due" not in d:
        raise ConfigError(f"{where}: [deadline] needs due = 2026-12-11T23:59:00+00:00")
    try:
        due_at = datetime.fromisoformat(d["due"])
    except ValueError:
        raise ConfigError(f"{where}: [deadline] due = {d['due']!r} is not an ISO 8601 date-time "
                          "(like 2026-12-11T23:59:00+00:00)") from None
    if due_at.tzinfo is None:
        raise ConfigError(f"{where}: [deadline] due = {d['due']!r} needs a time zone "
                          "(like +00:00 or Z)")
    for key in ("grace_minutes", "penalty_per_day", "max_late_days"):
        if d.get(key, 0) < 0:
            raise ConfigError(f"{where}: [deadline] {key} must be >= 0")
    return rubric, Deadline(due=due_at, grace_minutes=float(d.get("grace_minutes", 0)),
                            penalty_per_day=float(d.get("penalty_per_day", 0)),
                            max_late_days=float(d.get("max_late_days", 0)),
                            timestamps=d.get("timestamps", "timestamps.csv"))


# ---- [precision]: what arithmetic a kernel may use inside ---------------------------------

# The precisions the grader knows a ceiling for (grader/analysis/roofline.py: precision_ceilings).
PRECISIONS = ("fp32", "3xtf32", "tf32")


@dataclass(frozen=True)
class Precision:
    """The precision policy. Enforced for everyone by one thing only: a float32 output within
    [correctness] tolerance of float64 truth. `allowed` is what the handout promises and what
    the speed review flag assumes: a kernel faster than the fastest allowed arithmetic can go
    on this GPU is flagged for a person to look at (grader/judge/integrity.py)."""
    allowed: tuple[str, ...] = PRECISIONS      # fp32 FMA, 3xTF32 and TF32 tensor cores

    @property
    def fastest(self) -> str:
        """The allowed precision with the highest ceiling (order of PRECISIONS)."""
        return max(self.allowed, key=PRECISIONS.index)


def load_precision(path: Path | str = DEFAULT_CONFIG, data: dict | None = None) -> Precision:
    """[precision] of the config, validated; the default policy when the section is absent."""
    path = Path(path)
    data = _read_toml(path) if data is None else data
    section = data.get("precision", {})
    _check_keys({"precision": section}, {"precision": _OPTIONAL_SCHEMA["precision"]}, str(path), required=False)
    allowed = section.get("allowed", list(PRECISIONS))
    if not allowed or not all(isinstance(a, str) and a in PRECISIONS for a in allowed):
        raise ConfigError(f"{path}: [precision] allowed = {allowed!r} must be a non-empty list drawn from "
                          f"{', '.join(repr(p) for p in PRECISIONS)}")
    return Precision(allowed=tuple(sorted(set(allowed), key=PRECISIONS.index)))
