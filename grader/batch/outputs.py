"""Batch, outputs: what a grade leaves in OUT, and the gradebook rebuilt from it.

Per submission `OUT/<id>/`: results.json, report.pdf, results_gradescope.json,
output.log, and batch.json written last (the key of what was graded: it marks the
submission complete, which is what makes a killed batch resumable). The class outputs
(grades.csv, summary.pdf) are rebuilt from those folders on every run, and `collect`
merges the folders of several shards.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from ..config import Config, Deadline, Rubric
from ..result import GradeResult, write_json_atomic
from .discover import BatchError


STUDENTS = "students"      # OUT/students/<id>/: no student id can collide with an output name


def student_folder(out: Path, sid: str) -> Path:
    """Where one student's outputs live."""
    return out / STUDENTS / sid


def with_references(result: GradeResult, ref_doc: dict | None, slot: str) -> dict:
    """The student's results with the reference kernels' times of this slot's reference run."""
    doc = result.to_json()
    if not ref_doc or not doc.get("bench"):
        return doc
    by_s = {b["S"]: b for b in ref_doc.get("bench", [])}
    for row in doc["bench"]:
        ref = by_s.get(row["S"])
        if not ref:
            continue
        for name in ("naive", "fused", "fused_opt"):
            row[f"{name}_ms"] = ref.get(f"{name}_ms")
            if name in ref.get("timings", {}):
                row["timings"][name] = ref["timings"][name]
    doc["timing"]["references"] = (f"reference kernels timed once on this device ({slot}) at the start of the "
                                   "batch, with the same harness; the student's kernel and SDPA timed together")
    return doc


def write_submission(folder: Path, work: Path, doc: dict, record: dict, render_pdf: bool,
                     render_slot, log, output: str | None = None, private: dict | None = None,
                     private_folder: Path | None = None) -> dict:
    """One graded submission's outputs into `folder`: results.json, report.pdf (holding
    `render_slot` while rendering), output.log (what the kernel printed before the hidden
    configs ran, from the judge's memory), then batch.json last, which marks it complete.
    `private` (the hidden configs' full results and output) goes to `private_folder`,
    never beside the student's files. Returns the batch.json record."""
    folder.mkdir(parents=True, exist_ok=True)
    if private is not None and private_folder is not None:
        write_json_atomic(private_folder / f"{record['submission']}.json", private)
    doc["submission"]["name"] = record["submission"]
    write_json_atomic(folder / "results.json", doc)
    pdf_note = ""
    if render_pdf:
        from ..report import ReportError, render
        with render_slot:
            try:
                render(folder / "results.json", folder / "report.pdf")
            except (ReportError, ImportError) as e:
                pdf_note = f"report.pdf not written: {e}"
            except Exception as e:  # noqa: BLE001 - a report bug must not lose the grade
                pdf_note = f"report.pdf not written (grader bug, please report): {type(e).__name__}: {e}"[:500]
                log(f"{record['submission']}: {pdf_note}")
    if output is not None:
        tmp = folder / ".output.log.tmp"
        tmp.write_text(output)
        tmp.replace(folder / "output.log")
    shutil.rmtree(work, ignore_errors=True)
    import time
    record = {**record, "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "pdf_note": pdf_note}
    write_json_atomic(folder / "batch.json", record)   # last: marks the submission complete
    return record


def write_gradebook(out: Path, ids: list[str], cfg: Config, rubric: Rubric, deadline: Deadline | None,
                    stamps: dict, render_pdf: bool = True) -> list[dict]:
    """grades.csv, every results_gradescope.json and summary.pdf, from OUT/<id>/results.json."""
    from .. import gradebook as gb
    rows, docs = [], []
    sizes = [s.S for s in cfg.bench_shapes]
    n_public, n_hidden = len(cfg.configs), len(cfg.hidden_configs)
    for sid in ids:
        folder = student_folder(out, sid)
        try:
            doc = json.loads((folder / "results.json").read_text())
            json.loads((folder / "batch.json").read_text())
        except (OSError, ValueError):
            continue         # not graded (yet): a later run will
        items = gb.score_items(doc, rubric, hidden_count=n_hidden)
        late = gb.lateness(stamps.get(sid), deadline)
        row = gb.row(doc, items, late, sizes, n_public, n_hidden)
        if deadline is not None and sid not in stamps:
            row["flags"] = ";".join(x for x in (row["flags"], "warning:no_timestamp") if x)
        rows.append(row)
        docs.append(doc)
        write_json_atomic(folder / "results_gradescope.json", gb.gradescope(doc, items, late))
    text = gb.to_csv(rows, gb.columns(sizes, n_public, n_hidden))
    tmp = out / ".grades.csv.tmp"
    tmp.write_text(text)
    tmp.replace(out / "grades.csv")
    if render_pdf:
        from ..class_summary import render_summary
        from ..report import ReportError
        try:
            render_summary(rows, docs, cfg, out / "summary.pdf")
        except (ReportError, ImportError) as e:
            print(f"summary.pdf not written: {e}", file=sys.stderr)
    return rows


def collect(outs: list[Path], dest: Path, cfg: Config, rubric: Rubric, deadline: Deadline | None,
            stamps: dict, render_pdf: bool = True) -> list[dict]:
    """Merge shard outputs into `dest`: per-submission folders copied (the newest record of
    a submission wins), then the gradebook rebuilt over all of them."""
    dest.mkdir(parents=True, exist_ok=True)
    chosen: dict[str, tuple[str, Path]] = {}
    for out in outs:
        if not out.is_dir():
            raise BatchError(f"{out} is not a batch output folder")
        for record_file in [*out.glob("students/*/batch.json"), *out.glob("*/batch.json")]:   # (and the
            # layout before OUT/students/)
            try:
                record = json.loads(record_file.read_text())
            except (OSError, ValueError):
                continue
            sid = record_file.parent.name
            stamp = record.get("finished_at", "")
            if sid not in chosen or stamp > chosen[sid][0]:
                chosen[sid] = (stamp, record_file.parent)
    (dest / "students").mkdir(exist_ok=True)
    for sid, (_, folder) in chosen.items():
        target = student_folder(dest, sid)
        if folder.resolve() != target.resolve():
            tmp = dest / "students" / f".{sid}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(folder, tmp)
            shutil.rmtree(target, ignore_errors=True)
            tmp.replace(target)
    return write_gradebook(dest, sorted(chosen), cfg, rubric, deadline, stamps, render_pdf)
