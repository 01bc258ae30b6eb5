"""Batch grading: a class of untrusted submissions -> gradebook, reports, Gradescope results.

`python -m grader batch SUBMISSIONS_DIR --out OUT` grades every entry of SUBMISSIONS_DIR
(a folder, a `.py` file or a `.zip`; its name is the student id). One module per seam:

- `discover.py`: the entries of the class folder, shards, safe unzipping, the key of a
  grade (every file, the config incl. hidden configs and seed, the backend);
- `policy.py`: the sandbox the submissions run in and what they must not see;
- `schedule.py`: the reference run once per device slot, then per submission a compile
  child (`--jobs` at once) and a check + bench child holding one device slot;
- `outputs.py`: per submission results.json, report.pdf, results_gradescope.json and
  batch.json (written last), then grades.csv and summary.pdf rebuilt from the folders;
  `collect` merges shards.

Re-running skips every submission whose key is unchanged and whose outputs are complete,
so a batch killed at any moment (even `kill -9`) completes on the next run with each
submission exactly once. Scores are recomputed from the results on every run (a change of
points or of the deadline needs no regrade; new tier boundaries do).
"""
from .discover import (BatchError, Entry, discover, discover_all, extract_zip, read_timestamps, safe_id,
                       shard_of, stage, submission_key)
from .outputs import collect, write_gradebook
from .schedule import Batch, BatchOptions

__all__ = ["Batch", "BatchError", "BatchOptions", "Entry", "collect", "discover", "discover_all", "extract_zip",
           "read_timestamps", "safe_id", "shard_of", "stage", "submission_key", "write_gradebook"]
