"""Batch, the record of a grading: what an OUT folder was graded and scored with.

Every gradebook rebuild writes `OUT/grading.json`: the public config (shapes, tolerance,
benchmark, compile flags, timeouts), the number of hidden configs and a digest of them
and of the secret seed (never the values), the rubric and deadline the scores used, the
submission times of its students, the shard and its students. `collect` reads these
records: it refuses shards graded under different configs, scores hidden configs and
lateness from what the shards used, and writes the same record for the merged folder.

`GradingSetup` is what a gradebook is built from; a batch makes one from its options, a
collect from the records.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from ...core.config import Config, Deadline, Rubric
from .discover import BatchError

FILE_NAME = "grading.json"
FORMAT = 1
# A slow, fixed-salt hash: equal hidden files give equal digests across shards, and the
# digest of a small secret (a seed, a few shapes) cannot be searched quickly.
_DIGEST_SALT = b"attention-grader hidden configs"
_DIGEST_ROUNDS = 200_000


@dataclass(frozen=True)
class GradingSetup:
    """Everything a gradebook depends on besides the per-student results."""
    config: Config                      # public part (hidden_configs empty when read from a record)
    n_hidden: int
    rubric: Rubric
    deadline: Deadline | None
    stamps: dict = field(default_factory=dict)        # student -> submitted_at
    hidden_digest: str | None = None
    shard: tuple[int, int] = (1, 1)

    @property
    def sizes(self) -> list[int]:
        return [s.S for s in self.config.bench_shapes]


def hidden_digest(cfg: Config) -> str | None:
    """Digest of the hidden configs and the secret seed; None when there are neither."""
    if not cfg.hidden_configs and not cfg.seed_is_secret:
        return None
    secret = json.dumps({"hidden": [s.as_dict() for s in cfg.hidden_configs],
                         "seed": cfg.seed if cfg.seed_is_secret else None}, sort_keys=True)
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), _DIGEST_SALT, _DIGEST_ROUNDS).hex()[:32]


def public_config(cfg: Config) -> dict:
    """The config as recorded: no hidden configs, no secret seed, no file path."""
    d = cfg.to_json()
    d.pop("hidden_configs")
    d.pop("source")
    if cfg.seed_is_secret:
        d["seed"] = None
    return d


def setup_from(cfg: Config, rubric: Rubric, deadline: Deadline | None, stamps: dict,
               shard: tuple[int, int] = (1, 1)) -> GradingSetup:
    return GradingSetup(config=cfg, n_hidden=len(cfg.hidden_configs), rubric=rubric, deadline=deadline,
                        stamps=dict(stamps), hidden_digest=hidden_digest(cfg), shard=tuple(shard))


# ---- to and from grading.json -------------------------------------------------------------

def _rubric_json(r: Rubric) -> dict:
    return asdict(r)


def _rubric_from(d: dict) -> Rubric:
    return Rubric(config_points=tuple(d["config_points"]), hidden_points=d["hidden_points"],
                  performance=tuple(tuple(t) for t in d["performance"]), profile_points=d["profile_points"],
                  before_after_points=d["before_after_points"], written_points=d["written_points"])


def _deadline_json(d: Deadline | None) -> dict | None:
    return None if d is None else {**asdict(d), "due": d.due.isoformat()}


def _deadline_from(d: dict | None) -> Deadline | None:
    return None if d is None else Deadline(**{**d, "due": datetime.fromisoformat(d["due"])})


def to_json(setup: GradingSetup, students: list[str], collected_from: list[str] | None = None) -> dict:
    from ... import __version__
    from ...build.compile import BUILD_VERSION
    mine = set(students)
    doc = {
        "format": FORMAT, "grader_version": __version__, "build_version": BUILD_VERSION,
        "config": public_config(setup.config),
        "hidden": {"configs": setup.n_hidden, "digest": setup.hidden_digest},
        "rubric": _rubric_json(setup.rubric), "deadline": _deadline_json(setup.deadline),
        "timestamps": {s: t for s, t in sorted(setup.stamps.items()) if s in mine},
        "shard": list(setup.shard), "students": sorted(students),
    }
    if collected_from:
        doc["collected_from"] = collected_from
    return doc


def write(out: Path, setup: GradingSetup, students: list[str], collected_from: list[str] | None = None) -> None:
    from ...core.result import write_json_atomic
    write_json_atomic(out / FILE_NAME, to_json(setup, students, collected_from))


@dataclass(frozen=True)
class Record:
    """One OUT folder's grading.json, read back."""
    folder: Path
    setup: GradingSetup
    students: tuple[str, ...]
    config_json: dict
    grader_version: str


def read(out: Path) -> Record | None:
    """The record of `out`; None for a folder graded before records existed."""
    path = out / FILE_NAME
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text())
        cfg_json = doc["config"]
        cfg = Config.from_json({**cfg_json, "seed": cfg_json["seed"] if cfg_json["seed"] is not None else 0,
                                "hidden_configs": [], "source": str(path)})
        setup = GradingSetup(config=cfg, n_hidden=int(doc["hidden"]["configs"]), rubric=_rubric_from(doc["rubric"]),
                             deadline=_deadline_from(doc["deadline"]), stamps=dict(doc["timestamps"]),
                             hidden_digest=doc["hidden"]["digest"], shard=tuple(doc["shard"]))
        return Record(out, setup, tuple(doc["students"]), cfg_json, str(doc.get("grader_version", "?")))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BatchError(f"{path} is damaged ({type(e).__name__}: {e}); re-run the batch that wrote "
                         f"{out} (unchanged submissions are skipped) to write it again") from None


def differences(a: Record, b: Record) -> list[str]:
    """What makes two shards' grades incomparable: config keys, hidden configs."""
    keys = sorted(k for k in set(a.config_json) | set(b.config_json) if a.config_json.get(k) != b.config_json.get(k))
    if a.setup.hidden_digest != b.setup.hidden_digest or a.setup.n_hidden != b.setup.n_hidden:
        keys.append("the hidden configs or secret seed")
    return keys
