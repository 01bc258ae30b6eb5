"""Evidence a submission hands in beside its kernel: the profiler exports in `profiles/`.

`read_profiles` parses every export it finds into kernel records the report and the
rubric use: Nsight Compute CSVs (grader/analysis/ncu.py; `<label>_details.csv` and
`<label>_raw.csv` are one profile, `label`) and the CPU profiler's `<label>_cpu.csv`
(grader/evidence/cpu_profile.py; records marked `profiler: cpu`). A file that does not parse
becomes a one-line note, never a failed grade. Screenshots are illustrations only.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..build.parse import Submission
from ..core.sourcetext import function_names as triton_kernel_names  # noqa: F401 - the kernels a Triton source defines
from ..core.sourcetext import kernel_names  # noqa: F401 - evidence.kernel_names, its old home


def read_profiles(sub: Submission) -> tuple[tuple, tuple]:
    """(kernel records, notes) of every profiler export in the submission's profiles/ folder."""
    from ..build.parse import profiles_dir
    return read_folder(profiles_dir(Path(sub.path)))


def read_folder(folder: Path) -> tuple[tuple, tuple]:
    """(kernel records, notes) of the exports in `folder` (nothing when it is absent)."""
    from .cpu_profile import CpuProfileError, is_cpu_profile, read_csv
    from ..analysis.ncu import NcuError, read_files
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


# ---- provenance: whose kernels a profile is of -------------------------------------------

def _short(kernel: str) -> str:
    """An export's kernel name as its source spells it: `void ns::k<64>(const float *, ...)` -> `k`."""
    k = re.sub(r"^\s*void\s+", "", kernel.replace("<unnamed>::", "").replace("(anonymous namespace)::", ""))
    head = re.split(r"[(<]", k, maxsplit=1)[0].strip()
    return head.split("::")[-1].strip()


def reference_digests() -> dict[str, str]:
    """digest -> file of every course reference kernel (reference/*.cu, *.cpp, *.triton.py):
    the digest of its text and of its code (comments and layout apart, `code_digest`). None
    where the grader was shipped without them (an install that lacks reference/)."""
    from ..core.config import REPO_ROOT
    from ..build.parse import TRITON_SUFFIX, code_digest, source_digest
    folder = REPO_ROOT / "reference"
    if not folder.is_dir():
        return {}
    out = {}
    for p in sorted(folder.iterdir()):
        if p.suffix in (".cu", ".cpp") or p.name.endswith(TRITON_SUFFIX):
            text = p.read_text()
            out[source_digest(text)] = out[code_digest(text, "triton" if p.name.endswith(TRITON_SUFFIX) else "cpp")] = p.name
    return out


def reference_kernel_names() -> set[str]:
    from ..core.config import REPO_ROOT
    return {n for p in (REPO_ROOT / "reference").glob("*.cu") for n in kernel_names(p.read_text())}


def provenance_flags(sources: dict, profiles) -> list[dict]:
    """The review flags (`profile_provenance`) of `provenance`'s problems: the grade's
    (grader/run.py) and make report's, which re-reads profiles/ (grader/report/inputs.py)."""
    return [{"code": "profile_provenance", "tier": "review", "detail": p}
            for p in provenance(sources, [dict(r) for r in profiles])[1]]


def provenance(sources: dict, profiles: list[dict]) -> tuple[set[str], list[str]]:
    """(labels that earn nothing, one sentence for each problem) of a submission's profiles
    (results JSON `profiles`, `sources`). A `make profile` export records, around each
    kernel's range, the digest of the source it was built from:
    - a label whose profiled kernel ("student") is a course reference's (its digest is one,
      and not the submission's own code) is borrowed: it earns nothing;
    - when no label profiles this submission's kernels (its digest is not the submission's and
      its kernels are not functions the submission defines: an older export, or exports made
      by hand, hold no digest), none earns anything: the exports are of someone else's code.
    An older version of the student's own kernel (a `before`) keeps its points once some label
    is this submission's."""
    from ..build.parse import code_digest, source_digest
    if not any(isinstance(t, str) for t in sources.values()):
        return set(), []                   # a document without its sources: nothing to hold them to
    # its code's digest (make profile records it), or its text's (exports made before that)
    digests = {d for kind, t in sources.items() if isinstance(t, str) for d in (source_digest(t), code_digest(t, kind))}
    names = kernel_names(sources.get("cuda") or "") | triton_kernel_names(sources.get("triton") or "")
    refs = reference_digests()
    by_label: dict = {}
    for rec in profiles:
        if rec.get("cache") == "warm" or not str(rec.get("nvtx", "")).startswith("student_S"):
            continue
        if rec.get("tool_kernel"):
            continue
        by_label.setdefault(rec.get("profile", ""), []).append(rec)
    bad, problems = set(), []
    mine = set()
    for label, recs in by_label.items():
        srcs = {r.get("source") or "" for r in recs}
        # an export of the very code handed in is of this submission's kernel, whatever else
        # that code is (a copy of a reference is the similarity report's business, not this)
        borrowed = [] if srcs & digests else sorted(refs[s] for s in srcs if s in refs)
        if borrowed:
            bad.add(label)
            problems.append(f"profile '{label}' is of the course's {', '.join(borrowed)}, not of your kernel "
                            "(its exports record that source): it earns nothing")
            continue
        if srcs & digests or (recs[0].get("profiler") != "cpu" and not srcs - {""}
                              and all(_short(r.get("kernel", "")) in names for r in recs)):
            mine.add(label)
    ncu_labels = {label for label, recs in by_label.items() if label not in bad}
    if ncu_labels and not mine:
        bad |= ncu_labels
        problems.append(f"no profile in profiles/ is of this submission's kernels ({', '.join(sorted(ncu_labels))}: "
                        "their exports record another source's code, or kernels this submission does not "
                        "define), so they earn nothing: run make profile again on the source you hand in (a "
                        "change of its code after profiling makes the exports another source's; comments and "
                        "layout do not count), then make grade")
    return bad, problems
