"""Evidence a submission hands in beside its kernel: the profiler exports in `profiles/`.

`read_profiles` parses every export it finds (Nsight Compute CSVs today) into kernel
records the report and the rubric use; a file that does not parse becomes a one-line
note, never a failed grade.
"""
from __future__ import annotations

import re
from pathlib import Path

from .parse import Submission


def read_profiles(sub: Submission) -> tuple[tuple, tuple]:
    """Every Nsight Compute CSV in the submission's profiles/ folder, parsed (grader/ncu.py);
    a file that does not parse becomes a one-line note, never a failed grade."""
    from .ncu import NcuError, read_files
    from .profile import profiles_dir
    folder = profiles_dir(Path(sub.path))
    if not folder.is_dir():
        return (), ()
    kernels, notes = [], []
    labels: dict = {}          # "after_details.csv" and "after_raw.csv" are one report: "after"
    for csv_file in sorted(folder.glob("*.csv")):
        labels.setdefault(re.sub(r"_(details|raw)$", "", csv_file.stem), []).append(csv_file)
    for label, files in labels.items():
        try:
            kernels += [dict(p.to_json(), profile=label) for p in read_files(files)]
        except NcuError as e:
            notes.append(str(e))
    return tuple(kernels), tuple(notes)
