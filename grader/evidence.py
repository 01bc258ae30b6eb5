"""Evidence a submission hands in beside its kernel: the profiler exports in `profiles/`.

`read_profiles` parses every export it finds into kernel records the report and the
rubric use: Nsight Compute CSVs (grader/ncu.py; `<label>_details.csv` and
`<label>_raw.csv` are one profile, `label`) and the CPU profiler's `<label>_cpu.csv`
(grader/cpu_profile.py; records marked `profiler: cpu`). A file that does not parse
becomes a one-line note, never a failed grade. Screenshots are illustrations only.
"""
from __future__ import annotations

import re
from pathlib import Path

from .parse import Submission


def read_profiles(sub: Submission) -> tuple[tuple, tuple]:
    """(kernel records, notes) of every profiler export in the submission's profiles/ folder."""
    from .profile import profiles_dir
    return read_folder(profiles_dir(Path(sub.path)))


def read_folder(folder: Path) -> tuple[tuple, tuple]:
    """(kernel records, notes) of the exports in `folder` (nothing when it is absent)."""
    from .cpu_profile import CpuProfileError, is_cpu_profile, read_csv
    from .ncu import NcuError, read_files
    if not folder.is_dir():
        return (), ()
    kernels, notes = [], []
    labels: dict = {}          # "after_details.csv" and "after_raw.csv" are one report: "after"
    for csv_file in sorted(folder.glob("*.csv")):
        if is_cpu_profile(csv_file):
            try:
                kernels += read_csv(csv_file)
            except CpuProfileError as e:
                notes.append(str(e))
            continue
        labels.setdefault(re.sub(r"_(details|raw)$", "", csv_file.stem), []).append(csv_file)
    for label, files in labels.items():
        try:
            kernels += [dict(p.to_json(), profile=label) for p in read_files(files)]
        except NcuError as e:
            notes.append(str(e))
    return tuple(kernels), tuple(notes)
